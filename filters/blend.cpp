// blend: composites a top layer (second input) over a base (first input) with a blend mode and
// an opacity. Point-wise with two inputs, so it fuses into the chain that produces its base.
#include <cmath>
#include <string>

#include "tandem/error.hpp"
#include "tandem/filter.hpp"
#include "tandem/pointwise.hpp"

namespace tandem {
namespace {

enum class Mode { normal, add, screen, multiply };
const char* const kModeNames[] = {"normal", "add", "screen", "multiply"};

// f(a, b) per channel: blend.cl's operations in its order (it uses fma(), correctly rounded).
float blend_channel(Mode mode, float a, float b) {
  switch (mode) {
    case Mode::normal:
      return b;
    case Mode::add:
      return a + b;
    case Mode::screen:
      return std::fma(-a, b, a + b);
    case Mode::multiply:
      return a * b;
  }
  return b;
}

class Blend final : public Filter {
 public:
  explicit Blend(const Params& params)
      : mode_(static_cast<Mode>(params.integer("mode"))),
        opacity_(static_cast<float>(params["opacity"])),
        stage_{"blend.cl",
               std::string("tandem_blend_") + kModeNames[static_cast<int>(mode_)],
               {opacity_},
               {}} {}

  PixelFormat output_format(std::span<const PixelFormat> inputs) const override {
    if (inputs.size() != 2) throw Error("blend takes two inputs: the base and the top layer");
    if (inputs[0] != inputs[1]) {
      throw Error("blend needs both inputs in one pixel format, got " +
                  std::string(to_string(inputs[0])) + " (base) and " +
                  std::string(to_string(inputs[1])) + " (top)");
    }
    return inputs[0];
  }

  const PointwiseStage* pointwise() const override { return &stage_; }

  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    const Mode mode = mode_;
    const float opacity = opacity_;
    auto mix = [mode, opacity](float a, float b) {
      return std::fma(opacity, blend_channel(mode, a, b) - a, a);
    };
    for_each_pixel(*inputs[0], *inputs[1], output, [&mix](Pixel a, Pixel b) {
      return Pixel{mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b), a.a};
    });
  }

 private:
  Mode mode_;
  float opacity_;
  PointwiseStage stage_;
};

FilterSpec describe_blend() {
  return {
      .name = "blend",
      .help =
          "Blends the second input (top) over the first (base): out = mix(base, f(base, top), "
          "opacity) on RGB; the base's alpha is kept.",
      .params = {{.name = "mode",
                  .type = ParamType::choice,
                  .default_value = 0,
                  .help = "normal (top), add (base + top), screen (1 - (1 - base)(1 - top)), "
                          "multiply (base * top)",
                  .choices = {kModeNames[0], kModeNames[1], kModeNames[2], kModeNames[3]}},
                 {.name = "opacity",
                  .type = ParamType::real,
                  .default_value = 1,
                  .min = 0,
                  .max = 1,
                  .help = "0 leaves the base unchanged, 1 applies the mode fully"}},
      .inputs = 2,
      .make = [](const Params& p) { return std::make_unique<Blend>(p); },
  };
}

TANDEM_REGISTER_FILTER(describe_blend);

}  // namespace
}  // namespace tandem
