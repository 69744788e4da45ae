// saturation: scales each pixel's distance from its luma. Point-wise, so it fuses with its
// neighbours in a chain.
#include <cmath>

#include <tbb/parallel_for.h>

#include "tandem/error.hpp"
#include "tandem/filter.hpp"
#include "tandem/pointwise.hpp"

namespace tandem {
namespace {

class Saturation final : public Filter {
 public:
  explicit Saturation(const Params& params)
      : amount_(static_cast<float>(params["amount"])),
        stage_{"saturation.cl", "tandem_saturation", {amount_}, {}} {}

  const PointwiseStage* pointwise() const override { return &stage_; }

  // With BT.709's matrix, whose luma weights are the kernel's, moving R'G'B' away from Y' by
  // `amount` leaves Y' and scales Cb and Cr by it. (R'G'B' clip to 0..1 where Cb and Cr clip to
  // their codes, so the two ways differ where colours leave the gamut.)
  std::optional<PlaneMap> plane_map(const YuvEncoding& encoding) const override {
    if (encoding.matrix != YuvEncoding::Matrix::bt709) return std::nullopt;
    return PlaneMap{.chroma_scale = amount_};
  }

  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    if (is_planar(inputs[0]->format())) {
      const std::optional<PlaneMap> map = plane_map(inputs[0]->yuv_encoding());
      if (!map) throw Error("saturation works on Y'CbCr planes of BT.709 only");
      apply_plane_map(*map, *inputs[0], output);
      return;
    }
    const float amount = amount_;
    for_each_pixel(*inputs[0], output, [amount](Pixel px) {
      // The kernel's operations in its order, with its mad() taken as a fused multiply-add.
      const float y = std::fma(0.2126f, px.r, std::fma(0.7152f, px.g, 0.0722f * px.b));
      return Pixel{std::fma(amount, px.r - y, y), std::fma(amount, px.g - y, y),
                   std::fma(amount, px.b - y, y), px.a};
    });
  }

 private:
  float amount_;
  PointwiseStage stage_;
};

FilterSpec describe_saturation() {
  return {
      .name = "saturation",
      .help =
          "Scales colourfulness: each channel moves away from (or towards) the pixel's luma "
          "(Rec. 709 weights). On BT.709 video's Y'CbCr planes, it scales Cb and Cr.",
      .params = {{.name = "amount",
                  .type = ParamType::real,
                  .default_value = 1,
                  .min = 0,
                  .max = 4,
                  .help = "0 gives grey, 1 leaves the image unchanged, 2 doubles saturation"}},
      .make = [](const Params& p) { return std::make_unique<Saturation>(p); },
  };
}

TANDEM_REGISTER_FILTER(describe_saturation);

}  // namespace
}  // namespace tandem
