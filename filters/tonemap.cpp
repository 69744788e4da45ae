// tonemap: maps linear light (a float radiance map, or 8-bit sRGB linearised first), or an HDR
// video signal (PQ, HLG; BT.2020 primaries optionally converted to BT.709), to an 8-bit sRGB
// picture. Point-wise; reinhard and drago adapt to the frame's statistics (log-average and
// maximum luminance), and bt2390 and mobius without a stated peak take the maximum as theirs,
// which the executor gathers in the curve's own kernel (tandem_tonemap_OP_stats) and hands to the
// next run: a still's pre-pass, a video's next frame.
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

enum class Op { reinhard, aces, hable, drago, linear, bt2390, mobius };
const char* const kOpNames[] = {"reinhard", "aces", "hable", "drago", "linear", "bt2390", "mobius"};

enum class Transfer { linear, pq, hlg };
const char* const kTransferNames[] = {"linear", "pq", "hlg"};

// ITU-R BT.2408's reference white: HDR light in nits is divided by it, so that 1 is SDR's white.
constexpr double kReferenceWhite = 203;
// Mobius's linear part ends here (FFmpeg's tonemap filter's default).
constexpr double kMobiusJ = 0.3;

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

float pq_to_nits(float e) {
  const float q = std::exp2(std::log2(std::clamp(e, 0.0f, 1.0f)) * (1.0f / 78.84375f));
  const float ratio = std::fmax(q - 0.8359375f, 0.0f) / std::fma(-18.6875f, q, 18.8515625f);
  return 10000.0f * std::exp2(std::log2(ratio) * (1.0f / 0.1593017578125f));
}

float nits_to_pq(float nits) {
  const float y = std::exp2(std::log2(std::fmax(nits, 0.0f) * 1e-4f) * 0.1593017578125f);
  return std::exp2(std::log2(std::fma(18.8515625f, y, 0.8359375f) / std::fma(18.6875f, y, 1.0f)) *
                   78.84375f);
}

float hlg_to_scene(float signal) {
  const float e = std::clamp(signal, 0.0f, 1.0f);
  return e <= 0.5f
             ? e * e * (1.0f / 3.0f)
             : (std::exp((e - 0.55991073f) * (1.0f / 0.17883277f)) + 0.28466892f) * (1.0f / 12.0f);
}

Rgb curve_input(const Pixel& px, const Args& p) {
  Rgb c{px.r, px.g, px.b};
  if (p[1] != 0.0f) c = {srgb_to_linear(c.r), srgb_to_linear(c.g), srgb_to_linear(c.b)};
  constexpr float white = 1.0f / static_cast<float>(kReferenceWhite);
  if (p[6] == 1.0f) c = {pq_to_nits(c.r) * white, pq_to_nits(c.g) * white, pq_to_nits(c.b) * white};
  if (p[6] == 2.0f) {
    const Rgb s{hlg_to_scene(c.r), hlg_to_scene(c.g), hlg_to_scene(c.b)};
    const float ys = std::fma(0.2627f, s.r, std::fma(0.6780f, s.g, 0.0593f * s.b));
    const float gain = 1000.0f * std::exp2(std::log2(std::fmax(ys, 0.0f)) * 0.2f);
    c = {gain * s.r * white, gain * s.g * white, gain * s.b * white};
  }
  if (p[7] != 0.0f) {
    c = {std::fma(1.660491f, c.r, std::fma(-0.587641f, c.g, -0.072850f * c.b)),
         std::fma(-0.124550f, c.r, std::fma(1.132900f, c.g, -0.008349f * c.b)),
         std::fma(-0.018151f, c.r, std::fma(-0.100579f, c.g, 1.118730f * c.b))};
  }
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
    case Op::bt2390: {
      const float l = luminance(c);
      if (l <= p[5]) return curve_output(c, px.a);  // below the knee: the identity
      const float e1 = nits_to_pq(l * static_cast<float>(kReferenceWhite)) / p[2];
      float e2 = e1;
      if (e1 > p[4]) {
        const float t = (e1 - p[4]) / (1.0f - p[4]);
        const float t2 = t * t;
        const float h00 = std::fma(t2, std::fma(2.0f, t, -3.0f), 1.0f);
        const float h10 = t * std::fma(t, t - 2.0f, 1.0f);
        const float h01 = t2 * std::fma(-2.0f, t, 3.0f);
        e2 = std::fma(h00, p[4], std::fma(h10, 1.0f - p[4], h01 * p[3]));
      }
      const float ld =
          pq_to_nits(std::fmin(e2, 1.0f) * p[2]) * (1.0f / static_cast<float>(kReferenceWhite));
      return curve_output(scaled(c, l > 0.0f ? ld / l : 0.0f), px.a);
    }
    case Op::mobius: {
      const float l = luminance(c);
      const float ld = l <= static_cast<float>(kMobiusJ) ? l : p[4] * (l + p[2]) / (l + p[3]);
      return curve_output(scaled(c, l > 0.0f ? ld / l : 0.0f), px.a);
    }
  }
  return px;
}

class Tonemap final : public Filter {
 public:
  explicit Tonemap(const Params& params)
      : op_(static_cast<Op>(params.integer("op"))),
        transfer_(static_cast<Transfer>(params.integer("transfer"))),
        bt2020_(params.integer("primaries") == 1),
        exposure_scale_(static_cast<float>(std::exp2(params["exposure"]))),
        key_(params["key"]),
        white_(params["white"]),
        peak_(params["peak"]),
        stats_{key_, 1.0},
        stage_{"tonemap.cl",
               curve_function(),
               {},
               {},
               needs_frame_stats() ? curve_function() + "_stats" : "",
               curve_function() + "_group"} {
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

  // The stage function of the curve (kernels/tonemap.cl), tandem_tonemap_OP; the statistics'
  // form is its name with _stats, the group function (the curve on four pixels on CPUs) with
  // _group.
  std::string curve_function() const {
    return std::string("tandem_tonemap_") + kOpNames[static_cast<int>(op_)];
  }

  bool needs_frame_stats() const override {
    return op_ == Op::reinhard || op_ == Op::drago ||
           ((op_ == Op::bt2390 || op_ == Op::mobius) && peak_ <= 0);
  }

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
    // 8-bit frames of an HDR video hold its signal's codes, not sRGB.
    p[1] = format == PixelFormat::rgba8 && transfer_ == Transfer::linear ? 1.0f : 0.0f;
    p[6] = static_cast<float>(static_cast<int>(transfer_));
    p[7] = bt2020_ ? 1.0f : 0.0f;
    // The source's peak relative to reference white: as stated, else the frames' brightest; at
    // least reference white, which the curves then leave as it is.
    const double peak = std::max(1.0, peak_ > 0 ? peak_ / kReferenceWhite : stats.maximum);
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
      case Op::bt2390: {
        const double source = nits_to_pq(static_cast<float>(peak * kReferenceWhite));
        const double max_lum = nits_to_pq(static_cast<float>(kReferenceWhite)) / source;
        p[2] = static_cast<float>(source);
        p[3] = static_cast<float>(max_lum);
        p[4] = static_cast<float>(1.5 * max_lum - 0.5);
        p[5] = pq_to_nits(std::fmin(p[4], 1.0f) * p[2]) / static_cast<float>(kReferenceWhite);
        break;
      }
      case Op::mobius: {
        const double j = kMobiusJ;
        const double a = -j * j * (peak - 1) / (j * j - 2 * j + peak);
        const double b = (j * j - 2 * j * peak + peak) / std::max(peak - 1, 1e-6);
        p[2] = static_cast<float>(a);
        p[3] = static_cast<float>(b);
        p[4] = static_cast<float>((b * b + 2 * b * j + j * j) / (b - a));
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
  Transfer transfer_;
  bool bt2020_;
  float exposure_scale_;
  double key_;
  double white_;
  double peak_;
  FrameStats stats_;
  mutable PixelFormat input_format_ = PixelFormat::rgba32f;
  mutable PointwiseStage stage_;
};

FilterSpec describe_tonemap() {
  return {
      .name = "tonemap",
      .help =
          "Maps linear light (float, or 8-bit sRGB linearised first), or HDR video (PQ, HLG), "
          "to 8-bit sRGB; exposure scales linear RGB by 2^exposure before any operator.",
      .params =
          {
              {.name = "op",
               .type = ParamType::choice,
               .default_value = 0,
               .help =
                   "reinhard (global, adapts to the frame's log-average), aces (Narkowicz "
                   "fit), hable (Uncharted 2, exposure bias 2), drago (logarithmic, adapts to the "
                   "frame's log-average and maximum), linear (clip), bt2390 (ITU-R BT.2390's "
                   "EETF from the peak to reference white, in PQ), mobius (linear to 0.3, then "
                   "reaching white at the peak)",
               .choices = {kOpNames[0], kOpNames[1], kOpNames[2], kOpNames[3], kOpNames[4],
                           kOpNames[5], kOpNames[6]}},
              {.name = "transfer",
               .type = ParamType::choice,
               .default_value = 0,
               .help = "the input: linear light, or an HDR video signal, PQ (SMPTE ST 2084) or "
                       "HLG (its OOTF for a 1000-nit display), decoded to light with 203 nits "
                       "(ITU-R BT.2408's reference white) as 1",
               .choices = {kTransferNames[0], kTransferNames[1], kTransferNames[2]}},
              {.name = "primaries",
               .type = ParamType::choice,
               .default_value = 0,
               .help = "bt2020 converts linear BT.2020 RGB (HDR video's) to BT.709 first, "
                       "negatives clipped",
               .choices = {"bt709", "bt2020"}},
              {.name = "peak",
               .type = ParamType::real,
               .default_value = 0,
               .min = 0,
               .max = 10000,
               .help = "bt2390, mobius: the source's brightest in nits (MaxCLL, or the mastering "
                       "display's); 0 measures it from the frames (over time for video)"},
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
