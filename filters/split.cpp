// split: hands its input to two outputs unchanged, so that a labelled graph can read one value
// twice. An identity point-wise stage: the executor aliases the input and runs nothing.
#include <cstring>

#include "tandem/filter.hpp"
#include "tandem/pointwise.hpp"

namespace tandem {
namespace {

class Split final : public Filter {
 public:
  const PointwiseStage* pointwise() const override { return &stage_; }

  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    const Frame& input = *inputs[0];
    check_same_size(input, output);
    const std::size_t row_bytes =
        static_cast<std::size_t>(input.width()) * bytes_per_pixel(input.format());
    for (int y = 0; y < input.height(); ++y) std::memcpy(output.row(y), input.row(y), row_bytes);
  }

 private:
  PointwiseStage stage_{};  // empty function: the identity
};

FilterSpec describe_split() {
  return {
      .name = "split",
      .help = "Passes its input to two outputs unchanged (costs nothing: both alias the input).",
      .outputs = 2,
      .make = [](const Params&) { return std::make_unique<Split>(); },
  };
}

TANDEM_REGISTER_FILTER(describe_split);

}  // namespace
}  // namespace tandem
