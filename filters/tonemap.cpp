// tonemap: maps linear light (a float radiance map, or 8-bit sRGB linearised first) to an 8-bit
// sRGB picture. Point-wise; reinhard and drago adapt to the frame's statistics (log-average and
// maximum luminance), which the executor gathers in the curve's own kernel
// (tandem_tonemap_stats) and hands to the next run: a still's pre-pass, a video's next frame.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "tandem/device.hpp"
#include "tandem/error.hpp"
#include "tandem/filter.hpp"
#include "tandem/pointwise.hpp"

namespace tandem {
namespace {

enum class Op { reinhard, aces, hable, drago, linear };
const char* const kOpNames[] = {"reinhard", "aces", "hable", "drago", "linear"};

// Hable's white point and exposure bias: the values of the Uncharted 2 talk.
constexpr float kHableWhite = 11.2f;
constexpr float kHableBias = 2.0f;
constexpr double kDragoBias = 0.85;

using Args = std::array<float, 16>;

// ---- Host mirrors of tonemap.cl (its GPU variant): the same float operations in the same order,
// mad() taken as a fused multiply-add.

float srgb_to_linear(float c) {
  return c <= 0.04045f ? c * (1.0f / 12.92f)
                       : std::exp2(std::log2((c + 0.055f) * (1.0f / 1.055f)) * 2.4f);
}

float linear_to_srgb(float c) {
  return c <= 0.0031308f ? 12.92f * c
                         : std::fma(1.055f, std::exp2(std::log2(c) * (1.0f / 2.4f)), -0.055f);
}

struct Rgb {
  float r, g, b;
};

Rgb curve_input(const Pixel& px, const Args& p) {
  Rgb c{px.r, px.g, px.b};
  if (p[1] != 0.0f) c = {srgb_to_linear(c.r), srgb_to_linear(c.g), srgb_to_linear(c.b)};
  return {std::fmax(c.r * p[0], 0.0f), std::fmax(c.g * p[0], 0.0f), std::fmax(c.b * p[0], 0.0f)};
}

float luminance(const Rgb& c) {
  return std::fma(0.2126f, c.r, std::fma(0.7152f, c.g, 0.0722f * c.b));
}

Pixel curve_output(const Rgb& c, float alpha) {
  auto encode = [](float v) { return linear_to_srgb(std::clamp(v, 0.0f, 1.0f)); };
  return {encode(c.r), encode(c.g), encode(c.b), alpha};
}

Rgb scaled(const Rgb& c, float k) {
  return {c.r * k, c.g * k, c.b * k};
}

float aces(float x) {
  return x * std::fma(2.51f, x, 0.03f) / std::fma(x, std::fma(2.43f, x, 0.59f), 0.14f);
}

float hable(float x) {
  return std::fma(x, std::fma(0.15f, x, 0.05f), 0.004f) /
             std::fma(x, std::fma(0.15f, x, 0.50f), 0.06f) -
         0.02f / 0.30f;
}

Pixel apply_curve(Op op, const Pixel& px, const Args& p) {
  const Rgb c = curve_input(px, p);
  switch (op) {
    case Op::reinhard: {
      const float l = p[2] * luminance(c);
      const float ratio = p[2] * std::fma(l, p[3], 1.0f) / (1.0f + l);
      return curve_output(scaled(c, ratio), px.a);
    }
    case Op::aces:
      return curve_output({aces(c.r), aces(c.g), aces(c.b)}, px.a);
    case Op::hable:
      return curve_output({hable(kHableBias * c.r) * p[2], hable(kHableBias * c.g) * p[2],
                           hable(kHableBias * c.b) * p[2]},
                          px.a);
    case Op::drago: {
      const float lw = luminance(c);
      const float l = lw * p[5];
      const float ld = p[3] * std::log1p(l) /
                       std::log(std::fma(8.0f, std::exp2(std::log2(l * p[2]) * p[4]), 2.0f));
      const float ratio = lw > 0.0f ? ld / lw : 0.0f;
      return curve_output(scaled(c, ratio), px.a);
    }
    case Op::linear:
      return curve_output(c, px.a);
  }
  return px;
}

class Tonemap final : public Filter {
 public:
  explicit Tonemap(const Params& params)
      : op_(static_cast<Op>(params.integer("op"))),
        exposure_scale_(static_cast<float>(std::exp2(params["exposure"]))),
        key_(params["key"]),
        white_(params["white"]),
        stats_{key_, 1.0},
        stage_{"tonemap.cl",
               std::string("tandem_tonemap_") + kOpNames[static_cast<int>(op_)],
               {},
               {},
               needs_frame_stats() ? "tandem_tonemap_stats" : ""} {
    update_stage();
  }

  // Records whether the input is 8-bit sRGB, which the stage must linearise: the executor asks
  // for the output format of the very instance whose stage it then runs.
  PixelFormat output_format(std::span<const PixelFormat> inputs) const override {
    if (inputs.size() != 1) throw Error("tonemap takes one input");
    input_format_ = inputs[0];
    update_stage();
    return PixelFormat::rgba8;
  }

  bool needs_frame_stats() const override { return op_ == Op::reinhard || op_ == Op::drago; }

  void set_frame_stats(const FrameStats& stats) override {
    stats_ = stats;
    update_stage();
  }

  FrameStats reference_stats(const Frame& input) const override {
    const Args p = args(input.format(), stats_);
    std::vector<double> row_sum(static_cast<std::size_t>(input.height()));
    std::vector<double> row_max(row_sum.size());
    tbb::parallel_for(tbb::blocked_range<int>(0, input.height()), [&](const auto& rows) {
      for (int y = rows.begin(); y != rows.end(); ++y) {
        double sum = 0;
        double peak = 0;
        for (int x = 0; x < input.width(); ++x) {
          const double lw = luminance(curve_input(load_pixel(input, x, y), p));
          sum += std::log(1e-4 + lw);
          peak = std::max(peak, lw);
        }
        row_sum[static_cast<std::size_t>(y)] = sum;
        row_max[static_cast<std::size_t>(y)] = peak;
      }
    });
    double sum = 0;
    double peak = 0;
    for (std::size_t y = 0; y < row_sum.size(); ++y) {
      sum += row_sum[y];
      peak = std::max(peak, row_max[y]);
    }
    const double pixels = static_cast<double>(input.width()) * input.height();
    return {std::exp(sum / pixels), peak};
  }

  const PointwiseStage* pointwise() const override { return &stage_; }

  // Still-image semantics: the frame's own statistics, then the curve.
  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    const Frame& input = *inputs[0];
    const FrameStats stats = needs_frame_stats() ? reference_stats(input) : stats_;
    const Args p = args(input.format(), stats);
    const Op op = op_;
    for_each_pixel(input, output, [op, &p](Pixel px) { return apply_curve(op, px, p); });
  }

 private:
  // The stage's arguments (layout in tonemap.cl) for an input of `format` and `stats`.
  Args args(PixelFormat format, const FrameStats& stats) const {
    Args p{};
    p[0] = exposure_scale_;
    p[1] = format == PixelFormat::rgba8 ? 1.0f : 0.0f;
    switch (op_) {
      case Op::reinhard:
        p[2] = static_cast<float>(key_ / std::max(stats.log_average, 1e-30));
        p[3] = white_ > 0 ? static_cast<float>(1.0 / (white_ * white_)) : 0.0f;
        break;
      case Op::hable:
        p[2] = 1.0f / hable(kHableWhite);
        break;
      case Op::drago: {
        // Luminance in units of the world adaptation luminance (the log-average), as in the
        // paper: the curve then adapts to the frame's level as well as to its range.
        const double lavg = std::max(stats.log_average, 1e-30);
        const double lmax = stats.maximum / lavg;
        if (lmax > 0) {
          p[2] = static_cast<float>(1.0 / lmax);
          p[3] = static_cast<float>(1.0 / std::log10(lmax + 1.0));
        }
        p[4] = static_cast<float>(std::log(kDragoBias) / std::log(0.5));
        p[5] = static_cast<float>(1.0 / lavg);
        break;
      }
      case Op::aces:
      case Op::linear:
        break;
    }
    return p;
  }

  void update_stage() const {
    const Args p = args(input_format_, stats_);
    stage_.args.assign(p.begin(), p.end());
  }

  Op op_;
  float exposure_scale_;
  double key_;
  double white_;
  FrameStats stats_;
  mutable PixelFormat input_format_ = PixelFormat::rgba32f;
  mutable PointwiseStage stage_;
};

FilterSpec describe_tonemap() {
  return {
      .name = "tonemap",
      .help =
          "Maps linear light (float, or 8-bit sRGB linearised first) to 8-bit sRGB; "
          "exposure scales linear RGB by 2^exposure before any operator.",
      .params =
          {
              {.name = "op",
               .type = ParamType::choice,
               .default_value = 0,
               .help =
                   "reinhard (global, adapts to the frame's log-average), aces (Narkowicz "
                   "fit), hable (Uncharted 2, exposure bias 2), drago (logarithmic, adapts to the "
                   "frame's log-average and maximum), linear (clip)",
               .choices = {kOpNames[0], kOpNames[1], kOpNames[2], kOpNames[3], kOpNames[4]}},
              {.name = "exposure",
               .type = ParamType::real,
               .default_value = 0,
               .min = -16,
               .max = 16,
               .help = "stops: linear RGB is multiplied by 2^exposure first"},
              {.name = "key",
               .type = ParamType::real,
               .default_value = 0.18,
               .min = 0.001,
               .max = 1,
               .help = "reinhard: the luminance the frame's log-average maps to"},
              {.name = "white",
               .type = ParamType::real,
               .default_value = 0,
               .min = 0,
               .max = 1e6,
               .help = "reinhard: scaled luminance mapped to white; 0 gives L / (1 + L)"},
          },
      .make = [](const Params& p) { return std::make_unique<Tonemap>(p); },
  };
}

TANDEM_REGISTER_FILTER(describe_tonemap);

}  // namespace
}  // namespace tandem
