// eq: brightness, contrast, gamma and saturation as FFmpeg's eq has them, on R'G'B' through
// their Y' and colour difference (kernels/eq.cl). Point-wise, so it fuses with its neighbours;
// on BT.709 video's Y'CbCr planes with gamma 1 it is a plane map (Y' scaled about the middle of
// its range and moved, Cb and Cr scaled), as FFmpeg's eq works on the planes.
#include <cmath>

#include "tandem/error.hpp"
#include "tandem/filter.hpp"
#include "tandem/pointwise.hpp"

namespace tandem {
namespace {

class Eq final : public Filter {
 public:
  explicit Eq(const Params& params)
      : brightness_(static_cast<float>(params["brightness"])),
        contrast_(static_cast<float>(params["contrast"])),
        saturation_(static_cast<float>(params["saturation"])),
        inverse_gamma_(static_cast<float>(1 / params["gamma"])),
        gamma_weight_(static_cast<float>(params["gamma_weight"])),
        stage_{"eq.cl",
               "tandem_eq",
               {brightness_, contrast_, saturation_, inverse_gamma_, gamma_weight_},
               {}} {}

  const PointwiseStage* pointwise() const override { return &stage_; }

  // Under BT.709, whose luma weights are the kernel's, the curve with gamma 1 is Y' codes scaled
  // by contrast about the middle of their range and moved by brightness times the range; the
  // colour differences scale by saturation. (R'G'B' clip to 0..1 and l to 0 where codes clip to
  // their range, so the two ways differ where colours leave the gamut.)
  std::optional<PlaneMap> plane_map(const YuvEncoding& encoding) const override {
    if (encoding.matrix != YuvEncoding::Matrix::bt709 || inverse_gamma_ != 1.0f) {
      return std::nullopt;
    }
    const float range = encoding.full_range ? 255.0f : 219.0f;  // Y' in 8-bit code steps
    const float middle = (encoding.full_range ? 0.0f : 16.0f) + range / 2;
    return PlaneMap{.luma_scale = contrast_,
                    .luma_offset = (1 - contrast_) * middle + brightness_ * range,
                    .chroma_scale = saturation_};
  }

  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    if (is_planar(inputs[0]->format())) {
      const std::optional<PlaneMap> map = plane_map(inputs[0]->yuv_encoding());
      if (!map) throw Error("eq works on Y'CbCr planes of BT.709 with gamma 1 only");
      apply_plane_map(*map, *inputs[0], output);
      return;
    }
    const float b = brightness_, c = contrast_, s = saturation_, g = inverse_gamma_,
                w = gamma_weight_;
    for_each_pixel(*inputs[0], output, [=](Pixel px) {
      // The kernel's operations in its order, with its mad() taken as a fused multiply-add.
      const float y = std::fma(0.2126f, px.r, std::fma(0.7152f, px.g, 0.0722f * px.b));
      float l = std::fma(c, y - 0.5f, 0.5f + b);
      if (g != 1.0f) {
        l = l > 0.0f ? std::fma(l, 1.0f - w, std::pow(l, g) * w) : 0.0f;
      } else {
        l = std::fmax(l, 0.0f);
      }
      return Pixel{std::fma(s, px.r - y, l), std::fma(s, px.g - y, l), std::fma(s, px.b - y, l),
                   px.a};
    });
  }

 private:
  float brightness_, contrast_, saturation_, inverse_gamma_, gamma_weight_;
  PointwiseStage stage_;
};

FilterSpec describe_eq() {
  return {
      .name = "eq",
      .help =
          "Brightness, contrast, gamma and saturation as FFmpeg's eq: Y' (Rec. 709 weights) "
          "takes contrast about 0.5, then brightness, then gamma; the colour difference "
          "scales by saturation. On BT.709 video's Y'CbCr planes with gamma 1, it maps the "
          "codes.",
      .params = {{.name = "brightness",
                  .type = ParamType::real,
                  .default_value = 0,
                  .min = -1,
                  .max = 1,
                  .help = "added to Y' (in its range, 0..1)"},
                 {.name = "contrast",
                  .type = ParamType::real,
                  .default_value = 1,
                  .min = -1000,
                  .max = 1000,
                  .help = "Y' scaled about 0.5 (1 leaves it)"},
                 {.name = "saturation",
                  .type = ParamType::real,
                  .default_value = 1,
                  .min = 0,
                  .max = 3,
                  .help = "colour difference scaled (0 grey, 1 unchanged)"},
                 {.name = "gamma",
                  .type = ParamType::real,
                  .default_value = 1,
                  .min = 0.1,
                  .max = 10,
                  .help = "Y' raised to 1 / gamma (above 1 brightens)"},
                 {.name = "gamma_weight",
                  .type = ParamType::real,
                  .default_value = 1,
                  .min = 0,
                  .max = 1,
                  .help = "how much of the gamma curve replaces Y' (0 none)"}},
      .make = [](const Params& p) { return std::make_unique<Eq>(p); },
  };
}

TANDEM_REGISTER_FILTER(describe_eq);

}  // namespace
}  // namespace tandem
