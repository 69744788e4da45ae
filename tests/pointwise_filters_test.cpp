// The point-wise filters tonemap, blend and split against their host references on every device,
// on awkward sizes and both pixel formats; tonemap also against direct double-precision
// implementations of the published formulas written here, independent of the filter's code.
//
// Tolerances (8-bit outputs, which every tonemap and 8-bit blend produces):
//  - tonemap vs its reference: 1 LSB. The kernel and the reference do the same float operations,
//    but the device's pow/log/log1p/division may differ from the host's libm by a few ulp (GPUs'
//    log2 before a power of a small exponent by 2^-22 absolute: kernels/tonemap.cl), which
//    moves a value lying within ~1e-5 of a rounding boundary to the other side. Such values must
//    stay rare: at most 1 in 10000 (plus one, for tiny frames).
//  - tonemap vs the direct formulas: the same 1 LSB and rarity: float against double rounding,
//    and the frame statistics summed per row in float instead of double.
//  - blend vs its reference: 1 LSB and rare (8-bit), 1e-6 relative to max(1, |reference|), about
//    8 ulp (float). The kernel uses fma(), correctly rounded everywhere, and single IEEE
//    operations otherwise, as the reference does: exact on NVIDIA's driver and PoCL 3. PoCL 5
//    contracts across statements (the load's x * (1/255) into a later subtraction, a * b into
//    the mix), which moves results by an ulp or two. The opacity 0.3719 keeps values off exact
//    rounding ties: with two-decimal opacities such as 0.35, mixes of 8-bit values land on
//    x.5 (50 * 0.65 = 32.5) for 1 in 20 value pairs, where a single ulp decides the rounding.
//  - graphs through split: 1 LSB and rare (8-bit), 2e-5 relative to max(1, |reference|) (float):
//    the branch filter's own tolerance (gaussian's suite states exact and 2e-5; saturation's
//    1 LSB) carried through the blend.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "test_support.hpp"

namespace tandem::test {
namespace {

constexpr double kFloatTolerance = 2e-5;

std::string describe(const Size& size, PixelFormat format) {
  return std::to_string(size.width) + "x" + std::to_string(size.height) + " " +
         std::string(to_string(format));
}

// Like a radiance map: linear RGB spread log-uniformly over [e^-7, 300], alpha in [0, 1).
Frame hdr_frame(int width, int height, std::uint32_t seed) {
  Frame f(width, height, PixelFormat::rgba32f, 256);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> log_value(-7.0f, std::log(300.0f));
  std::uniform_real_distribution<float> alpha(0.0f, 1.0f);
  for (int y = 0; y < height; ++y) {
    float* row = f.row_as<float>(y);
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < 3; ++c) row[4 * x + c] = std::exp(log_value(rng));
      row[4 * x + 3] = alpha(rng);
    }
  }
  return f;
}

// Random 8-bit sRGB frames, or radiance-map-like float frames.
Frame input_frame(const Size& size, PixelFormat format, std::uint32_t seed) {
  return format == PixelFormat::rgba8 ? random_frame(size.width, size.height, format, seed)
                                      : hdr_frame(size.width, size.height, seed);
}

// The host reference of filter `name` with `options` on `inputs`.
Frame reference(const std::string& name,
                const std::vector<std::pair<std::string, std::string>>& options,
                std::vector<const Frame*> inputs) {
  const FilterSpec& spec = FilterRegistry::instance().get(name);
  Params params(spec.params);
  for (const auto& [key, value] : options) params.set_text(key, value);
  const auto filter = spec.make(params);
  std::vector<PixelFormat> formats;
  for (const Frame* f : inputs) formats.push_back(f->format());
  Frame out(inputs[0]->width(), inputs[0]->height(), filter->output_format(formats));
  filter->reference(inputs, out);
  return out;
}

// 8-bit: at most 1 LSB, and differing values rare (1 in 10000, plus one for tiny frames; about
// 3 in a million are observed); float: kFloatTolerance relative.
void expect_close(const Frame& actual, const Frame& expected) {
  ASSERT_EQ(actual.width(), expected.width());
  ASSERT_EQ(actual.height(), expected.height());
  ASSERT_EQ(actual.format(), expected.format());
  if (actual.format() == PixelFormat::rgba8) {
    EXPECT_LE(max_difference(actual, expected), 1.0);
    const std::size_t values = static_cast<std::size_t>(actual.width()) * actual.height() * 4;
    EXPECT_LE(count_differences(actual, expected, 0.0), values / 10000 + 1);
  } else {
    EXPECT_LE(max_relative_difference(actual, expected), kFloatTolerance);
  }
}

// ---- Direct implementations of the published tone curves, in double ----

double srgb_eotf(double v) {
  return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
}
double srgb_oetf(double v) {
  return v <= 0.0031308 ? 12.92 * v : 1.055 * std::pow(v, 1.0 / 2.4) - 0.055;
}

struct Curve {
  std::string op;
  double key = 0.18;
  double white = 0;
  double exposure = 0;

  std::string graph() const {
    return "tonemap=op=" + op + ":key=" + std::to_string(key) + ":white=" + std::to_string(white) +
           ":exposure=" + std::to_string(exposure);
  }
};

double hable(double x) {
  const double a = 0.15, b = 0.50, c = 0.10, d = 0.20, e = 0.02, f = 0.30;
  return (x * (a * x + c * b) + d * e) / (x * (a * x + b) + d * f) - e / f;
}

// The tone-mapped frame as the formulas define it: exposure on linear RGB first, statistics of
// the whole frame, the curve, clamping, the sRGB OETF, rounding; alpha passes through.
Frame direct_tonemap(const Frame& input, const Curve& curve) {
  const int w = input.width();
  const int h = input.height();
  const double scale = std::exp2(curve.exposure);
  std::vector<double> rgb(static_cast<std::size_t>(w) * h * 3);
  auto channel = [&](int x, int y, int c) -> double& {
    return rgb[(static_cast<std::size_t>(y) * w + x) * 3 + c];
  };
  auto luminance = [&](int x, int y) {
    return 0.2126 * channel(x, y, 0) + 0.7152 * channel(x, y, 1) + 0.0722 * channel(x, y, 2);
  };
  double log_sum = 0;
  double lmax = 0;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int c = 0; c < 3; ++c) {
        const double v = input.format() == PixelFormat::rgba8
                             ? srgb_eotf(input.row(y)[4 * x + c] / 255.0)
                             : input.row_as<float>(y)[4 * x + c];
        channel(x, y, c) = std::max(0.0, v * scale);
      }
      log_sum += std::log(1e-4 + luminance(x, y));
      lmax = std::max(lmax, luminance(x, y));
    }
  }
  const double lavg = std::exp(log_sum / (static_cast<double>(w) * h));

  Frame out(w, h, PixelFormat::rgba8);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const double lw = luminance(x, y);
      double mapped[3];
      for (int c = 0; c < 3; ++c) {
        const double v = channel(x, y, c);
        if (curve.op == "reinhard") {
          const double l = curve.key / lavg * lw;
          const double ld =
              curve.white > 0 ? l * (1 + l / (curve.white * curve.white)) / (1 + l) : l / (1 + l);
          mapped[c] = lw > 0 ? v * ld / lw : 0;
        } else if (curve.op == "aces") {
          mapped[c] = v * (2.51 * v + 0.03) / (v * (2.43 * v + 0.59) + 0.14);
        } else if (curve.op == "hable") {
          mapped[c] = hable(2 * v) / hable(11.2);
        } else if (curve.op == "drago") {
          // Drago et al. scale world luminance by the world adaptation luminance first.
          const double l = lw / lavg;
          const double l_max = lmax / lavg;
          const double ld = 1 / std::log10(l_max + 1) * std::log(l + 1) /
                            std::log(2 + 8 * std::pow(l / l_max, std::log(0.85) / std::log(0.5)));
          mapped[c] = lw > 0 ? v * ld / lw : 0;
        } else {
          mapped[c] = v;
        }
      }
      std::uint8_t* p = out.row(y) + 4 * x;
      for (int c = 0; c < 3; ++c) {
        p[c] = static_cast<std::uint8_t>(
            std::lround(255 * srgb_oetf(std::clamp(mapped[c], 0.0, 1.0))));
      }
      const double alpha = input.format() == PixelFormat::rgba8 ? input.row(y)[4 * x + 3] / 255.0
                                                                : input.row_as<float>(y)[4 * x + 3];
      p[3] = static_cast<std::uint8_t>(std::lround(255 * std::clamp(alpha, 0.0, 1.0)));
    }
  }
  return out;
}

class PointwiseFiltersTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PointwiseFiltersTest, TonemapMatchesHostReference) {
  const std::string device = GetParam();
  const std::vector<std::string> graphs = {
      "tonemap",  // reinhard, key 0.18, no white point
      "tonemap=op=reinhard:key=0.05:white=3:exposure=1.5",
      "tonemap=op=aces",
      "tonemap=op=aces:exposure=-3",
      "tonemap=op=hable",
      "tonemap=op=drago:exposure=-1",
      "tonemap=op=linear:exposure=-6",
      "tonemap=op=bt2390:transfer=pq:peak=1000",
      "tonemap=op=bt2390:transfer=pq:primaries=bt2020",  // the peak measured
      "tonemap=op=mobius:transfer=hlg:primaries=bt2020:peak=600",
      "tonemap=op=mobius:transfer=pq",
  };
  // Besides the awkward sizes, rows of whole warps: 640 pixels are 160 work-items, statistics
  // groups of 32 that reduce by warp shuffles where a device has them (NVIDIA), of 40 elsewhere.
  std::vector<Size> sizes = kAwkwardSizes;
  sizes.push_back({640, 37});
  for (const auto& size : sizes) {
    for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
      const Frame input = input_frame(size, format, 11 + size.width);
      for (std::size_t i = 0; i < graphs.size(); ++i) {
        const std::string& graph = graphs[i];
        if (size.width > 1000 && i % 2 == 0) continue;  // the large frame: every other graph
        SCOPED_TRACE(graph + " on " + describe(size, format));
        const Frame actual = run_graph(graph, input, device, "single");
        EXPECT_EQ(actual.format(), PixelFormat::rgba8);
        const Frame expected = run_reference(graph, input);
        if (format == PixelFormat::rgba8 && graph.find("transfer=") != std::string::npos) {
          // 8-bit codes of an HDR signal: PQ's exponents (78.8, 1 / 0.159) scale an ulp of the
          // device's log2 and exp2 by up to 80, and every pixel of one code flips with it, so
          // the differing values come in clusters: 1 LSB, at most 1 in 1000.
          EXPECT_LE(max_difference(actual, expected), 1.0);
          EXPECT_LE(count_differences(actual, expected, 0.0),
                    static_cast<std::size_t>(size.width) * size.height * 4 / 1000 + 1);
        } else {
          expect_close(actual, expected);
        }
      }
    }
  }
}

TEST_P(PointwiseFiltersTest, ReinhardMatchesTheFormula) {
  const std::string device = GetParam();
  const std::vector<Curve> curves = {
      {"reinhard", 0.18, 0, 0},   {"reinhard", 0.18, 2, 0},     {"reinhard", 0.045, 0, 0},
      {"reinhard", 0.72, 0.5, 0}, {"reinhard", 0.18, 20, -2.5}, {"reinhard", 0.3, 0, 4},
  };
  for (const Size& size : {Size{1, 1}, Size{3, 7}, Size{64, 64}, Size{1921, 1081}}) {
    const Frame input = hdr_frame(size.width, size.height, 5 + size.height);
    for (std::size_t i = 0; i < curves.size(); ++i) {
      const Curve& curve = curves[i];
      if (size.width > 1000 && i != 1 && i != 4) continue;  // the large frame: two curves
      SCOPED_TRACE(curve.graph() + " on " + describe(size, PixelFormat::rgba32f));
      expect_close(run_graph(curve.graph(), input, device, "single"), direct_tonemap(input, curve));
    }
  }
  // 8-bit input: linearised with the sRGB EOTF before the curve.
  const Frame input = random_frame(64, 64, PixelFormat::rgba8, 9);
  for (const Curve& curve : {Curve{"reinhard", 0.18, 0, 0}, Curve{"reinhard", 0.1, 1.5, 1}}) {
    SCOPED_TRACE(curve.graph() + " on 64x64 rgba8");
    expect_close(run_graph(curve.graph(), input, device, "single"), direct_tonemap(input, curve));
  }
}

TEST_P(PointwiseFiltersTest, OtherToneCurvesMatchTheFormulas) {
  const std::string device = GetParam();
  const Frame input = hdr_frame(64, 64, 21);
  for (const Curve& curve :
       {Curve{"aces"}, Curve{"aces", 0.18, 0, -4}, Curve{"hable"}, Curve{"hable", 0.18, 0, -3},
        Curve{"drago"}, Curve{"drago", 0.18, 0, 2}, Curve{"linear"},
        Curve{"linear", 0.18, 0, -8}}) {
    SCOPED_TRACE(curve.graph());
    expect_close(run_graph(curve.graph(), input, device, "single"), direct_tonemap(input, curve));
  }
}

// ---- HDR video's signals, directly from ITU-R BT.2100 and BT.2390, in double ----

double pq_nits(double e) {
  const double m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128, c1 = 3424.0 / 4096,
               c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32;
  const double q = std::pow(std::clamp(e, 0.0, 1.0), 1 / m2);
  return 10000 * std::pow(std::max(q - c1, 0.0) / (c2 - c3 * q), 1 / m1);
}

double pq_signal(double nits) {
  const double m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128, c1 = 3424.0 / 4096,
               c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32;
  const double y = std::pow(nits / 10000, m1);
  return std::pow((c1 + c2 * y) / (1 + c3 * y), m2);
}

// BT.2390's EETF (no black level lift) from a source peak to a target peak, in nits.
double bt2390(double nits, double source_peak, double target_peak) {
  const double e1 = pq_signal(nits) / pq_signal(source_peak);
  const double max_lum = pq_signal(target_peak) / pq_signal(source_peak);
  const double ks = 1.5 * max_lum - 0.5;
  double e2 = e1;
  if (e1 > ks) {
    const double t = (e1 - ks) / (1 - ks);
    e2 = (2 * t * t * t - 3 * t * t + 1) * ks + (t * t * t - 2 * t * t + t) * (1 - ks) +
         (-2 * t * t * t + 3 * t * t) * max_lum;
  }
  return pq_nits(e2 * pq_signal(source_peak));
}

// A grey ramp of signal values 0..1 across the width, alpha 1.
Frame signal_ramp(int width) {
  Frame f(width, 2, PixelFormat::rgba32f, 256);
  for (int y = 0; y < 2; ++y) {
    for (int x = 0; x < width; ++x) {
      float* p = f.row_as<float>(y) + 4 * x;
      p[0] = p[1] = p[2] = static_cast<float>(x) / static_cast<float>(width - 1);
      p[3] = 1;
    }
  }
  return f;
}

// The grey ramp's output as `light` (display-referred, relative to 203 nits) gives it.
Frame expected_grey(const Frame& ramp, const std::function<double(double)>& light) {
  Frame out(ramp.width(), ramp.height(), PixelFormat::rgba8);
  for (int y = 0; y < ramp.height(); ++y) {
    for (int x = 0; x < ramp.width(); ++x) {
      const double v = light(ramp.row_as<float>(y)[4 * x]);
      std::uint8_t* p = out.row(y) + 4 * x;
      p[0] = p[1] = p[2] =
          static_cast<std::uint8_t>(std::lround(255 * srgb_oetf(std::clamp(v, 0.0, 1.0))));
      p[3] = 255;
    }
  }
  return out;
}

// The sRGB encoding that ends every curve (on CPUs a table look-up by the float's bits,
// kernels/tonemap.cl) against the formula, over a million linear values from 0 to 1, with -0.0f
// and -1 among them (black).
TEST_P(PointwiseFiltersTest, SrgbEncodingMatchesTheFormula) {
  constexpr int kSide = 1024;
  Frame ramp(kSide, kSide, PixelFormat::rgba32f, 256);
  for (int y = 0; y < kSide; ++y) {
    for (int x = 0; x < kSide; ++x) {
      float* p = ramp.row_as<float>(y) + 4 * x;
      p[0] = p[1] = p[2] = static_cast<float>((y * kSide + x) / (kSide * kSide - 1.0));
      p[3] = 1;
    }
  }
  for (int c = 0; c < 3; ++c) {
    ramp.row_as<float>(0)[c] = -0.0f;
    ramp.row_as<float>(0)[4 + c] = -1.0f;
  }
  expect_close(run_graph("tonemap=op=linear", ramp, GetParam(), "single"),
               expected_grey(ramp, [](double v) { return v; }));
}

// A PQ ramp through BT.2390's curve, from a stated peak and from the peak measured on a ramp that
// reaches it; an HLG ramp through its inverse OETF and OOTF; Mobius; BT.2020 to BT.709.
TEST_P(PointwiseFiltersTest, HdrSignalsMatchBt2100AndBt2390) {
  const std::string device = GetParam();
  const Frame ramp = signal_ramp(1024);
  expect_close(run_graph("tonemap=op=bt2390:transfer=pq:peak=1000", ramp, device, "single"),
               expected_grey(ramp, [](double e) {
                 return bt2390(std::min(pq_nits(e), 1000.0), 1000, 203) / 203;
               }));
  // A ramp up to 1000 nits: the peak measured is the one stated.
  Frame to_1000 = ramp;
  for (int y = 0; y < 2; ++y) {
    for (int x = 0; x < 1024; ++x) {
      float* p = to_1000.row_as<float>(y) + 4 * x;
      p[0] = p[1] = p[2] = static_cast<float>(pq_signal(1000) * x / 1023);
    }
  }
  EXPECT_LE(max_difference(
                run_graph("tonemap=op=bt2390:transfer=pq", to_1000, device, "single"),
                run_graph("tonemap=op=bt2390:transfer=pq:peak=1000", to_1000, device, "single")),
            1.0);
  expect_close(run_graph("tonemap=op=linear:transfer=hlg", ramp, device, "single"),
               expected_grey(ramp, [](double e) {
                 const double a = 0.17883277, b = 1 - 4 * a, c = 0.5 - a * std::log(4 * a);
                 const double scene = e <= 0.5 ? e * e / 3 : (std::exp((e - c) / a) + b) / 12;
                 return 1000 * std::pow(scene, 0.2) * scene / 203;  // grey: Ys is the scene
               }));
  expect_close(run_graph("tonemap=op=mobius:transfer=pq:peak=4000", ramp, device, "single"),
               expected_grey(ramp, [](double e) {
                 const double l = pq_nits(e) / 203, peak = 4000 / 203.0, j = 0.3;
                 if (l <= j) return l;
                 const double a = -j * j * (peak - 1) / (j * j - 2 * j + peak);
                 const double b = (j * j - 2 * j * peak + peak) / (peak - 1);
                 return (b * b + 2 * b * j + j * j) / (b - a) * (l + a) / (l + b);
               }));
  // BT.2020's primaries, linear, into BT.709 (BT.2087's matrix): its red is outside BT.709,
  // its grey is grey.
  Frame primaries(3, 1, PixelFormat::rgba32f);
  const float values[12] = {0.5f, 0, 0, 1, 0, 0.5f, 0, 1, 0.25f, 0.25f, 0.25f, 1};
  std::copy(values, values + 12, primaries.row_as<float>(0));
  const Frame mapped = run_graph("tonemap=op=linear:primaries=bt2020", primaries, device, "single");
  auto level = [](double v) { return std::lround(255 * srgb_oetf(std::clamp(v, 0.0, 1.0))); };
  const std::uint8_t* p = mapped.row(0);
  EXPECT_NEAR(p[0], level(0.5 * 1.660491), 1);
  EXPECT_NEAR(p[1], level(0.5 * -0.124550), 1);
  EXPECT_NEAR(p[2], level(0.5 * -0.018151), 1);
  EXPECT_NEAR(p[4], level(0.5 * -0.587641), 1);
  EXPECT_NEAR(p[5], level(0.5 * 1.132900), 1);
  EXPECT_NEAR(p[6], level(0.5 * -0.100579), 1);
  for (int c = 8; c < 11; ++c) EXPECT_NEAR(p[c], level(0.25), 1);
}

TEST_P(PointwiseFiltersTest, TonemapAdaptsToTheFrame) {
  // Reinhard maps the log-average to the key whatever the exposure: a frame and the same frame
  // 4 stops darker give the same picture (up to the 1e-4 in the log-average).
  const Frame bright = hdr_frame(64, 64, 4);
  Frame dark(64, 64, PixelFormat::rgba32f);
  for (int y = 0; y < 64; ++y) {
    for (int i = 0; i < 4 * 64; ++i) {
      dark.row_as<float>(y)[i] = bright.row_as<float>(y)[i] / (i % 4 == 3 ? 1.0f : 16.0f);
    }
  }
  const Frame a = run_graph("tonemap=op=reinhard", bright, GetParam(), "single");
  const Frame b = run_graph("tonemap=op=reinhard", dark, GetParam(), "single");
  EXPECT_LE(max_difference(a, b), 1.0);
  // Whereas a fixed curve gets darker.
  const Frame c = run_graph("tonemap=op=aces", bright, GetParam(), "single");
  const Frame d = run_graph("tonemap=op=aces", dark, GetParam(), "single");
  EXPECT_GT(max_difference(c, d), 50.0);
}

TEST_P(PointwiseFiltersTest, BlendMatchesHostReference) {
  // The top layer is a strongly saturated copy of the base, so the modes see different values.
  const std::string device = GetParam();
  for (const auto& size : kAwkwardSizes) {
    for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
      const Frame input = format == PixelFormat::rgba8
                              ? random_frame(size.width, size.height, format, 3 + size.width)
                              : random_frame(size.width, size.height, format, 3 + size.width, 2.0f);
      // The top as the device computes it, so that blend alone is compared.
      const Frame top = run_graph("saturation=3", input, device, "single");
      for (const char* mode : {"normal", "add", "screen", "multiply"}) {
        const std::vector<std::string> opacities =
            size.width > 100 ? std::vector<std::string>{"0.3719"}
                             : std::vector<std::string>{"0", "0.3719", "1"};
        for (const std::string& opacity : opacities) {
          const std::string graph =
              std::string("[in]split[a][b];[a]saturation=3[t];[b][t]blend=mode=") + mode +
              ":opacity=" + opacity + "[out]";
          SCOPED_TRACE(graph + " on " + describe(size, format));
          const Frame expected =
              reference("blend", {{"mode", mode}, {"opacity", opacity}}, {&input, &top});
          const Frame actual = run_graph(graph, input, device, "single");
          if (format == PixelFormat::rgba8) {
            expect_close(actual, expected);
          } else {
            EXPECT_LE(max_relative_difference(actual, expected), 1e-6);
          }
          if (opacity == "0") {
            EXPECT_EQ(max_difference(expected, input), 0.0);
          }
        }
      }
    }
  }
}

TEST(PointwiseFiltersHost, BlendFormulasAndAlpha) {
  // The reference itself against the formulas, with the top's alpha unlike the base's.
  Frame base(2, 1, PixelFormat::rgba32f);
  Frame top(2, 1, PixelFormat::rgba32f);
  const float b0[8] = {0.2f, 0.5f, 0.8f, 0.25f, 1.0f, 0.0f, 0.5f, 1.0f};
  const float t0[8] = {0.6f, 0.1f, 0.4f, 0.9f, 0.5f, 0.5f, 0.5f, 0.0f};
  std::copy(b0, b0 + 8, base.row_as<float>(0));
  std::copy(t0, t0 + 8, top.row_as<float>(0));
  auto f = [](const std::string& mode, double a, double b) {
    if (mode == "normal") return b;
    if (mode == "add") return a + b;
    if (mode == "screen") return 1 - (1 - a) * (1 - b);
    return a * b;
  };
  for (const char* mode : {"normal", "add", "screen", "multiply"}) {
    const Frame out = reference("blend", {{"mode", mode}, {"opacity", "0.75"}}, {&base, &top});
    for (int i = 0; i < 8; ++i) {
      const double want = i % 4 == 3 ? b0[i] : b0[i] + 0.75 * (f(mode, b0[i], t0[i]) - b0[i]);
      EXPECT_NEAR(out.row_as<float>(0)[i], want, 1e-6) << mode << " value " << i;
    }
  }
}

TEST(PointwiseFiltersHost, BlendRejectsMixedFormats) {
  const Frame input = hdr_frame(8, 8, 1);
  try {
    run_graph("[in]split[a][b];[a]tonemap=op=aces[t];[b][t]blend[out]", input, "all", "single");
    FAIL() << "a blend of rgba32f and rgba8 ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("one pixel format"), std::string::npos) << e.what();
  }
}

TEST_P(PointwiseFiltersTest, SplitFeedsTwoBranches) {
  const std::string device = GetParam();
  const bool have_gaussian = FilterRegistry::instance().find("gaussian") != nullptr;
  const std::string blur = have_gaussian ? "gaussian" : "saturation";
  const std::pair<std::string, std::string> blur_option =
      have_gaussian ? std::pair<std::string, std::string>{"sigma", "2"}
                    : std::pair<std::string, std::string>{"amount", "2"};
  const std::string graph = "[in]split[a][b];[a]" + blur + "=" + blur_option.first + "=" +
                            blur_option.second + "[g];[b][g]blend=mode=screen:opacity=0.5[out]";
  for (const auto& size : kAwkwardSizes) {
    for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
      SCOPED_TRACE(graph + " on " + describe(size, format));
      const Frame input = random_frame(size.width, size.height, format, 17 + size.height);
      // The host composition: split copies, both branches read the copy.
      const Frame a = reference("split", {}, {&input});
      EXPECT_EQ(max_difference(a, input), 0.0);
      const Frame g = reference(blur, {blur_option}, {&a});
      const Frame expected = reference("blend", {{"mode", "screen"}, {"opacity", "0.5"}}, {&a, &g});
      expect_close(run_graph(graph, input, device, "single"), expected);
    }
  }
}

TEST_P(PointwiseFiltersTest, TonemapAfterSaturationOnFloatInput) {
  const std::string device = GetParam();
  for (const std::string op : {"reinhard", "aces", "drago"}) {
    for (const Size& size : {Size{3, 7}, Size{1921, 1081}}) {
      if (size.width > 1000 && op != "reinhard") continue;
      const std::string graph = "saturation=1.3,tonemap=op=" + op + ":key=0.25";
      SCOPED_TRACE(graph + " on " + describe(size, PixelFormat::rgba32f));
      const Frame input = hdr_frame(size.width, size.height, 8);
      const Frame saturated = reference("saturation", {{"amount", "1.3"}}, {&input});
      const Frame expected = reference("tonemap", {{"op", op}, {"key", "0.25"}}, {&saturated});
      expect_close(run_graph(graph, input, device, "single"), expected);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryDevice, PointwiseFiltersTest, ::testing::ValuesIn(device_ids()),
                         [](const auto& info) {
                           std::string name = "device_" + info.param;
                           for (char& c : name) {
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace tandem::test
