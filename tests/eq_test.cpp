// eq against its host reference on awkward sizes and against FFmpeg's curve written here, on
// every OpenCL device present; on BT.709 planes with gamma 1, a plane map.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "test_support.hpp"

namespace tandem {
namespace {

using test::kAwkwardSizes;

class EqTest : public ::testing::TestWithParam<std::string> {};

const std::vector<std::string> kSettings = {
    "eq", "eq=brightness=0.1:contrast=1.5", "eq=contrast=-0.7:saturation=2.5",
    "eq=gamma=2.2:gamma_weight=0.6:brightness=-0.05", "eq=gamma=0.4:saturation=0"};

// Tolerance as saturation's: the kernel's mad() may or may not be fused where the reference
// fuses, and powr() may be a few ulp from the host's pow(): 1 LSB where a value lies on a
// rounding boundary, which stays rare; floats (random in 0..1, results within about -3..4)
// within 5e-5.
TEST_P(EqTest, MatchesHostReferenceOnAwkwardSizes) {
  for (const auto& size : kAwkwardSizes) {
    for (const std::string& graph : kSettings) {
      for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
        SCOPED_TRACE(std::to_string(size.width) + "x" + std::to_string(size.height) + " " +
                     std::string(to_string(format)) + " " + graph);
        const Frame input = test::random_frame(size.width, size.height, format, 5 + size.height);
        const Frame got = test::run_graph(graph, input, GetParam(), "single");
        const Frame want = test::run_reference(graph, input);
        if (format == PixelFormat::rgba8) {
          EXPECT_LE(test::max_difference(got, want), 1.0);
          EXPECT_LE(test::count_differences(got, want, 0.0),
                    static_cast<std::size_t>(size.width) * size.height * 4 / 1000);
        } else {
          EXPECT_LE(test::max_difference(got, want), 5e-5);
        }
      }
    }
  }
}

// A grey ramp (Y' = the level, no colour difference) through FFmpeg's curve in double precision,
// written here from its definition: 1 LSB, float against double rounding.
TEST_P(EqTest, GreyRampFollowsFfmpegsCurve) {
  Frame ramp(256, 2, PixelFormat::rgba8);
  for (int y = 0; y < 2; ++y) {
    for (int x = 0; x < 256; ++x) {
      for (int c = 0; c < 4; ++c)
        ramp.row(y)[4 * x + c] = static_cast<std::uint8_t>(c < 3 ? x : 255);
    }
  }
  struct Curve {
    double brightness, contrast, gamma, weight;
  };
  for (const Curve& k : {Curve{0.1, 1.5, 1, 1}, Curve{-0.2, 0.8, 2.2, 0.6}, Curve{0, 1, 0.5, 1}}) {
    const std::string graph = "eq=brightness=" + std::to_string(k.brightness) +
                              ":contrast=" + std::to_string(k.contrast) +
                              ":gamma=" + std::to_string(k.gamma) +
                              ":gamma_weight=" + std::to_string(k.weight);
    SCOPED_TRACE(graph);
    const Frame got = test::run_graph(graph, ramp, GetParam(), "single");
    for (int x = 0; x < 256; ++x) {
      double v = k.contrast * (x / 255.0 - 0.5) + 0.5 + k.brightness;
      v = v <= 0 ? 0 : v * (1 - k.weight) + std::pow(v, 1 / k.gamma) * k.weight;
      const double want = std::clamp(std::nearbyint(255 * v), 0.0, 255.0);
      for (int c = 0; c < 3; ++c) ASSERT_NEAR(got.row(1)[4 * x + c], want, 1.0) << x;
      ASSERT_EQ(got.row(1)[4 * x + 3], 255);
    }
  }
}

TEST_P(EqTest, DefaultsChangeNothing) {
  const Frame input = test::random_frame(333, 77, PixelFormat::rgba8, 3);
  EXPECT_EQ(test::max_difference(test::run_graph("eq", input, GetParam(), "single"), input), 0.0);
}

// On BT.709 4:2:0 planes with gamma 1 the graph maps the codes as they are (no RGBA between),
// as the plane map's reference does within 1 code, where the device contracts the scale and the
// add into one rounding, or does not, and the result lands on a half (rare); with gamma it
// converts to RGBA.
TEST_P(EqTest, OnBt709PlanesWithGammaOneItMapsTheCodes) {
  DeviceSet set = DeviceSet::open(GetParam());
  for (const YuvEncoding e : {YuvEncoding{YuvEncoding::Matrix::bt709, false},
                              YuvEncoding{YuvEncoding::Matrix::bt709, true}}) {
    Frame input = test::random_frame(67, 35, PixelFormat::yuv420p, 8);
    input.set_yuv_encoding(e);
    // Settings off round decimals: contrast 1.3 puts one code in ten a float ulp from a half.
    const std::string graph = "eq=brightness=0.0519:contrast=1.2917:saturation=1.6133";
    PipelineOptions options;
    options.persist_split = false;
    Pipeline pipeline(set, Graph::parse(graph), options);
    Frame got;
    pipeline.process(input, got);
    ASSERT_TRUE(pipeline.on_planes());
    const Frame want = test::run_reference(graph, input);
    EXPECT_LE(test::max_difference(got, want), 1.0);
    EXPECT_LE(test::count_differences(got, want, 0.0), 67u * 35 * 3 / 2 / 1000 + 1);

    Pipeline gamma(set, Graph::parse("eq=gamma=1.5"), options);
    Frame converted;
    gamma.process(input, converted);
    EXPECT_FALSE(gamma.on_planes());
  }
}

INSTANTIATE_TEST_SUITE_P(EveryDevice, EqTest, ::testing::ValuesIn(test::device_ids()),
                         [](const auto& info) {
                           std::string name = "device_" + info.param;
                           for (char& c : name)
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace tandem
