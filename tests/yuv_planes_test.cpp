// Y'CbCr planes on the devices: the conversions against the formulas, on awkward sizes, every
// matrix and range, on every OpenCL device present; planes through a graph against the same
// steps run apart; co-executed bands against one device.
#include <gtest/gtest.h>

#include <cmath>

#include "test_support.hpp"

namespace tandem {
namespace {

using Matrix = YuvEncoding::Matrix;

const std::vector<PixelFormat> kPlaneFormats = {
    PixelFormat::yuv420p, PixelFormat::yuv420p10, PixelFormat::yuv420p12,
    PixelFormat::yuv422p, PixelFormat::yuv422p10, PixelFormat::yuv422p12,
    PixelFormat::yuv444p, PixelFormat::yuv444p10, PixelFormat::yuv444p12};

const std::vector<YuvEncoding> kEncodings = {{Matrix::bt601, false},  {Matrix::bt709, false},
                                             {Matrix::bt2020, false}, {Matrix::bt601, true},
                                             {Matrix::bt709, true},   {Matrix::bt2020, true}};

// Every matrix and range for 4:2:0 of 8 and 10 bits; two for the other layouts and depths, whose
// coefficients come from the same code (each program is compiled for its coefficients).
std::vector<YuvEncoding> encodings_for(PixelFormat format) {
  if (format == PixelFormat::yuv420p || format == PixelFormat::yuv420p10) return kEncodings;
  return {{Matrix::bt709, false}, {Matrix::bt601, true}};
}

// ITU-R BT.601/709/2020 and BT.2100's quantisation, for codes of `bits`.
struct Weights {
  double kr, kg, kb, y_offset, y_range, c_offset, c_range, top;
};

Weights weights(const YuvEncoding& e, int bits) {
  double kr = 0.2126, kb = 0.0722;
  if (e.matrix == Matrix::bt601) kr = 0.299, kb = 0.114;
  if (e.matrix == Matrix::bt2020) kr = 0.2627, kb = 0.0593;
  const double step = 1 << (bits - 8), top = (1 << bits) - 1;
  return {kr,
          1 - kr - kb,
          kb,
          e.full_range ? 0.0 : 16 * step,
          e.full_range ? top : 219 * step,
          128 * step,
          e.full_range ? top : 224 * step,
          top};
}

// `v` rounded to a code of 0..top.
void set_code(Frame& f, int plane, int x, int y, double v, double top) {
  f.set_sample(plane, x, y, static_cast<int>(std::clamp(std::nearbyint(v), 0.0, top)));
}

// R'G'B' from codes, chroma taken for every pixel it covers (both pixels of its pair, both rows
// of its 4:2:0 row pair): rgba8 levels for 8-bit codes, rgba32f values as they are for deeper
// ones.
Frame reference_rgba(const Frame& yuv) {
  const Weights w = weights(yuv.yuv_encoding(), sample_bits(yuv.format()));
  const PixelFormat format = working_format(yuv.format());
  const int sx = chroma_shift_x(yuv.format()), sy = chroma_shift_y(yuv.format());
  Frame out(yuv.width(), yuv.height(), format);
  for (int y = 0; y < yuv.height(); ++y) {
    for (int x = 0; x < yuv.width(); ++x) {
      const double l = (yuv.sample(0, x, y) - w.y_offset) / w.y_range;
      const double u = (yuv.sample(1, x >> sx, y >> sy) - w.c_offset) / w.c_range;
      const double v = (yuv.sample(2, x >> sx, y >> sy) - w.c_offset) / w.c_range;
      const double rgb[3] = {
          l + 2 * (1 - w.kr) * v,
          l - 2 * w.kb * (1 - w.kb) / w.kg * u - 2 * w.kr * (1 - w.kr) / w.kg * v,
          l + 2 * (1 - w.kb) * u};
      for (int c = 0; c < 4; ++c) {
        const double value = c < 3 ? rgb[c] : 1.0;
        if (format == PixelFormat::rgba8) {
          out.row(y)[4 * x + c] =
              static_cast<std::uint8_t>(std::clamp(std::nearbyint(255 * value), 0.0, 255.0));
        } else {
          out.row_as<float>(y)[4 * x + c] = static_cast<float>(value);
        }
      }
    }
  }
  return out;
}

// Codes of `format` from R'G'B' (rgba8 levels, or rgba32f values): Y' per pixel, Cb and Cr from
// the mean of the pixels each covers in the frame (a 2x2 block for 4:2:0, a pair for 4:2:2).
Frame reference_yuv(const Frame& rgba, const YuvEncoding& encoding, PixelFormat format) {
  const Weights w = weights(encoding, sample_bits(format));
  Frame out(rgba.width(), rgba.height(), format);
  out.set_yuv_encoding(encoding);
  auto value = [&](int x, int y, int c) {
    return rgba.format() == PixelFormat::rgba8 ? rgba.row(y)[4 * x + c] / 255.0
                                               : double(rgba.row_as<float>(y)[4 * x + c]);
  };
  for (int y = 0; y < rgba.height(); ++y) {
    for (int x = 0; x < rgba.width(); ++x) {
      const double l = w.kr * value(x, y, 0) + w.kg * value(x, y, 1) + w.kb * value(x, y, 2);
      set_code(out, 0, x, y, w.y_offset + w.y_range * l, w.top);
    }
  }
  const int sx = chroma_shift_x(format), sy = chroma_shift_y(format);
  for (int cy = 0; cy < out.plane_height(1); ++cy) {
    for (int cx = 0; cx < out.plane_width(1); ++cx) {
      double r = 0, g = 0, b = 0;
      int n = 0;
      for (int y = cy << sy; y < std::min((cy + 1) << sy, rgba.height()); ++y) {
        for (int x = cx << sx; x < std::min((cx + 1) << sx, rgba.width()); ++x) {
          r += value(x, y, 0), g += value(x, y, 1), b += value(x, y, 2), ++n;
        }
      }
      r /= n, g /= n, b /= n;
      const double l = w.kr * r + w.kg * g + w.kb * b;
      set_code(out, 1, cx, cy, w.c_offset + w.c_range * (b - l) / (2 * (1 - w.kb)), w.top);
      set_code(out, 2, cx, cy, w.c_offset + w.c_range * (r - l) / (2 * (1 - w.kr)), w.top);
    }
  }
  return out;
}

// `graph` on `input` into an output frame of `format` (its encoding `encoding`).
Frame run_into(const std::string& graph, const Frame& input, PixelFormat format,
               const std::string& devices, PipelineOptions options = {},
               const YuvEncoding& encoding = {}) {
  DeviceSet set = DeviceSet::open(devices);
  options.persist_split = false;
  Pipeline pipeline(set, Graph::parse(graph), options);
  Frame output = pipeline.make_frame(input.width(), input.height(), format);
  output.set_yuv_encoding(encoding);
  pipeline.process(input, output);
  return output;
}

std::string name_of(const Frame& f) {
  return std::to_string(f.width()) + "x" + std::to_string(f.height()) + " " +
         std::string(to_string(f.format())) + " " + to_string(f.yuv_encoding());
}

class YuvPlanesTest : public ::testing::TestWithParam<std::string> {};

// Tolerance: 1 code, where the device's float arithmetic and the reference's double land on
// either side of a rounding boundary; such values stay rare. Deeper codes convert to rgba32f
// without rounding: within float's precision.
TEST_P(YuvPlanesTest, PlanesConvertToRgbaAsTheFormulas) {
  for (PixelFormat format : kPlaneFormats) {
    for (const auto& size : test::kAwkwardSizes) {
      for (const YuvEncoding& e : encodings_for(format)) {
        Frame input = test::random_frame(size.width, size.height, format, 11);
        input.set_yuv_encoding(e);
        SCOPED_TRACE(name_of(input));
        const Frame got = run_into("saturation=1", input, working_format(format), GetParam());
        const Frame want = reference_rgba(input);
        if (sample_bits(format) == 8) {
          EXPECT_LE(test::max_difference(got, want), 1.0);
          EXPECT_LE(test::count_differences(got, want, 0.0),
                    static_cast<std::size_t>(size.width) * size.height * 4 / 1000);
        } else {
          EXPECT_LE(test::max_difference(got, want), 1e-5);
        }
      }
    }
  }
}

TEST_P(YuvPlanesTest, RgbaConvertsToPlanesAsTheFormulas) {
  for (PixelFormat format : kPlaneFormats) {
    for (const auto& size : test::kAwkwardSizes) {
      for (const YuvEncoding& e : encodings_for(format)) {
        const Frame input = test::random_frame(size.width, size.height, working_format(format), 5);
        const Frame got = run_into("saturation=1", input, format, GetParam(), {}, e);
        SCOPED_TRACE(name_of(got));
        EXPECT_EQ(got.yuv_encoding(), e);
        const Frame want = reference_yuv(input, e, format);
        EXPECT_LE(test::max_difference(got, want), 1.0);
        EXPECT_LE(test::count_differences(got, want, 0.0),
                  static_cast<std::size_t>(size.width) * size.height * 3 / 1000 + 1);
      }
    }
  }
}

// Deep video stays deep: every code of a frame of 10 or 12 bits, of every layout, through a
// graph that changes nothing comes back (R'G'B' in float between the conversions), where 8 bits
// would keep a quarter or a sixteenth of them.
TEST_P(YuvPlanesTest, DeepCodesSurviveAGraphThatChangesNothing) {
  for (PixelFormat format : kPlaneFormats) {
    if (sample_bits(format) == 8) continue;
    for (const YuvEncoding& e : encodings_for(format)) {
      Frame input = test::random_frame(1921, 33, format, 2);
      input.set_yuv_encoding(e);
      SCOPED_TRACE(name_of(input));
      const Frame got = run_into("saturation=1", input, format, GetParam());
      EXPECT_EQ(test::max_difference(got, input), 0.0);
    }
  }
}

// Converting in the first kernel and back in the last gives what the three steps give run
// apart: the conversions quantise as a frame of the working format between them would (the
// steps convert with saturation=1, exact on 8-bit levels).
TEST_P(YuvPlanesTest, PlanesThroughAGraphEqualTheStepsApart) {
  const std::string graph = "gaussian=sigma=2,saturation=1.3";
  for (PixelFormat format : kPlaneFormats) {
    const PixelFormat working = working_format(format);
    for (const auto& size : test::kAwkwardSizes) {
      Frame input = test::random_frame(size.width, size.height, format, 3);
      input.set_yuv_encoding({Matrix::bt601, true});
      SCOPED_TRACE(name_of(input));
      const Frame got = run_into(graph, input, format, GetParam());
      EXPECT_EQ(got.format(), format);
      EXPECT_EQ(got.yuv_encoding(), input.yuv_encoding());
      const Frame rgba = run_into("saturation=1", input, working, GetParam());
      const Frame filtered = run_into(graph, rgba, working, GetParam());
      const Frame want =
          run_into("saturation=1", filtered, format, GetParam(), {}, input.yuv_encoding());
      if (sample_bits(format) == 8) {
        EXPECT_EQ(test::max_difference(got, want), 0.0);
      } else {
        // saturation=1 on floats may move a value by an ulp, onto a code's rounding boundary.
        EXPECT_LE(test::max_difference(got, want), 1.0);
        EXPECT_LE(test::count_differences(got, want, 0.0),
                  static_cast<std::size_t>(size.width) * size.height * 3 / 10000 + 1);
      }
    }
  }
}

TEST_P(YuvPlanesTest, FusedEqualsUnfused) {
  for (PixelFormat format : kPlaneFormats) {
    Frame input = test::random_frame(333, 77, format, 9);
    for (const std::string graph : {"saturation=1.4", "saturation=0.5,box=radius=2,saturation=2"}) {
      SCOPED_TRACE(graph + " " + std::string(to_string(format)));
      PipelineOptions unfused;
      unfused.fuse = false;
      const Frame fused = run_into(graph, input, format, GetParam());
      EXPECT_EQ(test::max_difference(fused, run_into(graph, input, format, GetParam(), unfused)),
                0.0);
    }
  }
}

TEST_P(YuvPlanesTest, TheDefaultOutputIsThePlanesAndTheirPassesSaySo) {
  DeviceSet set = DeviceSet::open(GetParam());
  PipelineOptions options;
  options.persist_split = false;
  Pipeline pipeline(set, Graph::parse("gaussian=sigma=1,saturation=2"), options);
  EXPECT_EQ(pipeline.output_format(PixelFormat::yuv420p), PixelFormat::yuv420p);
  Frame input = test::random_frame(65, 33, PixelFormat::yuv420p, 1);
  input.set_yuv_encoding({Matrix::bt2020, false});
  Frame output;
  pipeline.process(input, output);
  EXPECT_EQ(output.format(), PixelFormat::yuv420p);
  EXPECT_EQ(output.yuv_encoding(), input.yuv_encoding());
  const std::vector<std::string> passes = pipeline.passes();
  ASSERT_EQ(passes.size(), 3u);
  EXPECT_EQ(passes[0], "convert: yuv420p -> rgba8");
  EXPECT_EQ(passes[1], "stencil: gaussian saturation");
  EXPECT_EQ(passes[2], "convert: rgba8 -> yuv420p");
}

INSTANTIATE_TEST_SUITE_P(EveryDevice, YuvPlanesTest, ::testing::ValuesIn(test::device_ids()),
                         [](const auto& info) {
                           std::string name = "device_" + info.param;
                           for (char& c : name) {
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           }
                           return name;
                         });

// Bands of planes start on row groups: co-executed, a frame of odd height split at a fraction
// that falls on an odd row equals one device's (within the tolerance of the devices' kinds);
// 4:2:0's band takes the row pair, 4:2:2's and 4:4:4's the row.
TEST(YuvPlanesCoexec, BandsOfPlanesEqualOneDevice) {
  if (test::device_count() < 2) GTEST_SKIP() << "needs two OpenCL devices";
  for (PixelFormat format : {PixelFormat::yuv420p, PixelFormat::yuv422p10, PixelFormat::yuv444p}) {
    Frame input = test::random_frame(1921, 1081, format, 4);
    input.set_yuv_encoding({Matrix::bt709, false});
    for (const std::string graph : {"saturation=1.3", "gaussian=sigma=2,saturation=1.3"}) {
      SCOPED_TRACE(graph + " " + std::string(to_string(format)));
      DeviceSet set = DeviceSet::open("all");
      PipelineOptions split;
      split.split = test::split_first(0.371);  // 401.05 rows
      split.persist_split = false;
      Pipeline pipeline(set, Graph::parse(graph), split);
      Frame co;
      pipeline.process(input, co);
      const std::vector<double>& fractions = pipeline.report().split_trace.at(0);
      EXPECT_EQ(std::lround(fractions.at(0) * 1081), rows_per_group(format) == 2 ? 402 : 401);
      PipelineOptions single;
      single.split = "single";
      const Frame one = run_into(graph, input, format, "all", single);
      EXPECT_LE(test::max_difference(co, one), 1.0);
      EXPECT_LE(test::count_differences(co, one, 0.0), 1921u * 1081 * 3 / 1000);
    }
  }
}

TEST(YuvPlanesFrame, RowPairsHoldTheirChromaAfterTheirLumaRows) {
  Frame f(5, 3, PixelFormat::yuv420p, 64);
  EXPECT_EQ(f.pitch(), 96u);  // a Y row of 64 bytes, half a row each of Cb and Cr
  EXPECT_EQ(f.plane_width(1), 3);
  EXPECT_EQ(f.plane_height(2), 2);
  EXPECT_EQ(f.plane_row(0, 1) - f.data(), 64);
  EXPECT_EQ(f.plane_row(1, 0) - f.data(), 128);
  EXPECT_EQ(f.plane_row(2, 0) - f.data(), 160);
  EXPECT_EQ(f.plane_row(0, 2) - f.data(), 192);
  EXPECT_EQ(f.plane_row(2, 1) - f.data(), 352);
  // The last pair of an odd height is whole.
  EXPECT_GE(f.capacity(), rows_bytes(PixelFormat::yuv420p, f.pitch(), 3));
  EXPECT_EQ(rows_bytes(PixelFormat::yuv420p, f.pitch(), 3), 4 * 96u);

  Frame copy(5, 3, PixelFormat::yuv420p, 256);
  f.plane_row(2, 1)[2] = 7;
  f.set_yuv_encoding({Matrix::bt601, true});
  copy_pixels(f, copy);
  EXPECT_EQ(copy.plane_row(2, 1)[2], 7);
  EXPECT_EQ(copy.yuv_encoding(), f.yuv_encoding());
  EXPECT_NE(test::error_of([&] {
              Frame::wrap(f.data(), 5, 3, PixelFormat::yuv420p, 96);
            }).find("plane formats live in frames of their own"),
            std::string::npos);
  Frame rgba(5, 3, PixelFormat::rgba8);
  EXPECT_NE(test::error_of([&] { copy_pixels(f, rgba); }).find("cannot copy a 5x3 yuv420p"),
            std::string::npos);
}

TEST(YuvPlanesFrame, RowsOf422And444HoldTheirChromaAfterTheirLumaRow) {
  Frame f(5, 3, PixelFormat::yuv422p10, 64);
  // A Y row of 5 samples of 2 bytes padded to 64, then a Cb and a Cr row of 32 bytes each.
  EXPECT_EQ(f.pitch(), 128u);
  EXPECT_EQ(f.luma_pitch(), 64u);
  EXPECT_EQ(f.plane_width(1), 3);
  EXPECT_EQ(f.plane_height(1), 3);
  EXPECT_EQ(f.plane_row(1, 0) - f.data(), 64);
  EXPECT_EQ(f.plane_row(2, 0) - f.data(), 96);
  EXPECT_EQ(f.plane_row(0, 1) - f.data(), 128);
  EXPECT_EQ(f.plane_row(2, 2) - f.data(), 2 * 128 + 96);
  EXPECT_EQ(rows_bytes(PixelFormat::yuv422p10, f.pitch(), 3), 3 * 128u);
  f.set_sample(2, 2, 2, 1000);
  EXPECT_EQ(f.sample(2, 2, 2), 1000);

  Frame g(5, 3, PixelFormat::yuv444p, 64);
  EXPECT_EQ(g.pitch(), 192u);  // Y, Cb and Cr rows of 64 bytes each
  EXPECT_EQ(g.plane_width(2), 5);
  EXPECT_EQ(g.plane_height(2), 3);
  EXPECT_EQ(g.plane_row(2, 1) - g.data(), 192 + 128);
  EXPECT_EQ(rows_per_group(PixelFormat::yuv444p12), 1);
  EXPECT_EQ(plane_format(1, 0, 12), PixelFormat::yuv422p12);
  EXPECT_EQ(plane_format(0, 1, 8), std::nullopt);  // 4:4:0
  EXPECT_EQ(parse_pixel_format("yuv444p10"), PixelFormat::yuv444p10);
  EXPECT_EQ(working_format(PixelFormat::yuv422p12), PixelFormat::rgba32f);
  EXPECT_EQ(working_format(PixelFormat::yuv444p), PixelFormat::rgba8);
}

}  // namespace
}  // namespace tandem
