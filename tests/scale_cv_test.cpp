// scale against OpenCV, on every device and by the host reference:
//   scale=W:H:flags=bilinear  vs cv::resize(src, dst, Size(W, H), 0, 0, INTER_LINEAR)
//                   bicubic       INTER_CUBIC
//                   lanczos       INTER_LANCZOS4
//                   area          INTER_AREA
// on awkward sizes: from and to one pixel, odd sizes, factors that are not whole, 3x up and 1/3
// down (whole: OpenCV's block sums for area), 1/2 (bilinear is OpenCV's area there), 1921x1081,
// and up along one axis while down along the other.
// Tolerances:
//  - rgba8: 1 LSB at every value. The weights are OpenCV's to the bit and the sums its
//    arithmetic; where OpenCV's vector code and its scalar code for the last values of a row
//    round differently (bicubic's vertical pass: float in one, integers in the other), tandem
//    follows the vector code, and the last pixel of a row of odd width may differ by one.
//  - rgba32f: 1e-5 relative (to max(1, |OpenCV|), values in [0, 4)): the same products, summed
//    in places in another order than OpenCV's vector code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "cv_support.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

constexpr double kFloatTolerance = 1e-5;

struct Method {
  std::string name;
  int interpolation;
};
const std::vector<Method> kMethods = {{"bilinear", cv::INTER_LINEAR},
                                      {"bicubic", cv::INTER_CUBIC},
                                      {"lanczos", cv::INTER_LANCZOS4},
                                      {"area", cv::INTER_AREA}};

struct Resize {
  Size from, to;
};
const std::vector<Resize> kResizes = {
    {{1, 1}, {3, 5}},           {{7, 5}, {1, 1}},         {{3, 7}, {5, 2}},
    {{111, 67}, {333, 201}},    {{333, 201}, {111, 67}},  {{640, 480}, {320, 240}},
    {{97, 61}, {140, 90}},      {{333, 271}, {250, 199}}, {{100, 60}, {250, 29}},
    {{1921, 1081}, {640, 361}},
};

std::string graph_for(const Resize& r, const Method& m) {
  return "scale=" + std::to_string(r.to.width) + ":" + std::to_string(r.to.height) +
         ":flags=" + m.name;
}

struct Image {
  std::string name;
  Frame frame;
};

std::vector<Image> images(const Resize& r, PixelFormat format, std::uint32_t seed) {
  std::vector<Image> out;
  out.push_back({"random", random_frame(r.from.width, r.from.height, format, seed, 4.0f)});
  out.push_back({"smooth", smooth_frame(r.from.width, r.from.height, format, seed)});
  return out;
}

// Checks `actual` against OpenCV's `expected` within the format's tolerance; logs the result.
void expect_opencv(const Frame& actual, const Frame& expected, const std::string& what) {
  ASSERT_EQ(actual.width(), expected.width());
  ASSERT_EQ(actual.height(), expected.height());
  if (actual.format() == PixelFormat::rgba8) {
    const double d = max_difference(actual, expected);
    EXPECT_LE(d, 1);
    std::printf("  %-58s max difference %g LSB, %zu values off\n", what.c_str(), d,
                count_differences(actual, expected, 0));
  } else {
    const double d = max_relative_difference(actual, expected);
    EXPECT_LE(d, kFloatTolerance);
    std::printf("  %-58s max relative difference %g\n", what.c_str(), d);
  }
}

// `run` gives tandem's output for a graph and an input, `who` says whose it is.
template <typename Run>
void compare(PixelFormat format, const std::string& who, Run run) {
  std::uint32_t seed = 1;
  for (const Resize& r : kResizes) {
    for (const Image& image : images(r, format, seed++)) {
      for (const Method& m : kMethods) {
        const std::string graph = graph_for(r, m);
        const std::string what = graph + " of " + image.name + " " + to_string(r.from) + " " +
                                 std::string(to_string(format)) + ", " + who;
        SCOPED_TRACE(what);
        cv::Mat dst;
        cv::resize(wrap(image.frame), dst, cv::Size(r.to.width, r.to.height), 0, 0,
                   m.interpolation);
        expect_opencv(run(graph, image.frame), from_mat(dst), what);
      }
    }
  }
}

class ScaleVsOpenCV : public ::testing::TestWithParam<std::string> {};

TEST_P(ScaleVsOpenCV, EightBitMatchesWithinOneLsb) {
  const std::string device = GetParam();
  compare(PixelFormat::rgba8, "device " + device, [&](const std::string& g, const Frame& in) {
    return run_graph(g, in, device, "single");
  });
}

TEST_P(ScaleVsOpenCV, FloatMatchesWithinTolerance) {
  const std::string device = GetParam();
  compare(PixelFormat::rgba32f, "device " + device, [&](const std::string& g, const Frame& in) {
    return run_graph(g, in, device, "single");
  });
}

INSTANTIATE_TEST_SUITE_P(EveryDevice, ScaleVsOpenCV, ::testing::ValuesIn(device_ids()),
                         [](const auto& info) {
                           std::string name = "device_" + info.param;
                           for (char& c : name)
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

TEST(ScaleReferenceVsOpenCV, EightBitMatchesWithinOneLsb) {
  compare(PixelFormat::rgba8, "host reference", run_reference);
}

TEST(ScaleReferenceVsOpenCV, FloatMatchesWithinTolerance) {
  compare(PixelFormat::rgba32f, "host reference", run_reference);
}

}  // namespace
}  // namespace tandem::test
