// gaussian and box against OpenCV on every device, borders BORDER_REFLECT_101:
//   gaussian=sigma=s  vs cv::GaussianBlur(src, dst, Size(0, 0), s, s, border)
//   box=radius=r      vs cv::blur(src, dst, Size(2r + 1, 2r + 1), Point(-1, -1), border)
// Tolerances:
//  - rgba8: 1 LSB at every pixel. gaussian uses OpenCV's 8-bit weights and exact sums, so it is
//    expected to match to the bit; box's integer mean is exact while OpenCV divides with a
//    fixed-point reciprocal that may round the other way.
//  - rgba32f: 1e-5 relative (to max(1, |OpenCV|), values in [0, 4)): both sum in float, in
//    different orders.
#include <gtest/gtest.h>

#include <algorithm>
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

// A BT.709 yuv420p frame of smooth_frame()'s ramps and noise in each plane.
Frame smooth_planes(int width, int height, std::uint32_t seed) {
  const Frame rgba = smooth_frame(width, height, PixelFormat::rgba8, seed);
  Frame frame(width, height, PixelFormat::yuv420p);
  frame.set_yuv_encoding({YuvEncoding::Matrix::bt709, false});
  for (int plane = 0; plane < 3; ++plane) {
    for (int y = 0; y < frame.plane_height(plane); ++y) {
      for (int x = 0; x < frame.plane_width(plane); ++x)
        frame.set_sample(plane, x, y, rgba.row(y)[4 * x + plane]);
    }
  }
  return frame;
}

// Plane `plane` of a yuv420p frame as a one-channel image.
cv::Mat plane_mat(const Frame& frame, int plane) {
  cv::Mat m(frame.plane_height(plane), frame.plane_width(plane), CV_8UC1);
  for (int y = 0; y < m.rows; ++y) {
    std::copy_n(frame.plane_row(plane, y), m.cols, m.ptr<std::uint8_t>(y));
  }
  return m;
}

struct Image {
  std::string name;
  Frame frame;
};

std::vector<Image> images(PixelFormat format) {
  std::vector<Image> out;
  out.push_back({"random 640x480", random_frame(640, 480, format, 11, 4.0f)});
  out.push_back({"random 333x271", random_frame(333, 271, format, 12, 4.0f)});
  out.push_back({"smooth 640x480", smooth_frame(640, 480, format, 13)});
  out.push_back({"smooth 333x271", smooth_frame(333, 271, format, 14)});
  return out;
}

// Runs `graph` on every device and compares each result with `expected` of each image.
template <typename OpenCV>
void compare(PixelFormat format, const std::vector<std::string>& graphs, OpenCV opencv) {
  const std::vector<Image> inputs = images(format);
  for (const std::string& device : device_ids()) {
    for (std::size_t g = 0; g < graphs.size(); ++g) {
      for (const Image& image : inputs) {
        SCOPED_TRACE(graphs[g] + " on " + image.name + " " + std::string(to_string(format)) +
                     ", device " + device);
        cv::Mat dst;
        opencv(wrap(image.frame), dst, g);
        const Frame expected = from_mat(dst);
        const Frame actual = run_graph(graphs[g], image.frame, device, "single");
        double d = 0;
        if (format == PixelFormat::rgba8) {
          d = max_difference(actual, expected);
          EXPECT_LE(d, 1);
          std::printf("  %-18s %-15s %-7s device %s: max difference %g LSB, %zu values off\n",
                      graphs[g].c_str(), image.name.c_str(), "rgba8", device.c_str(), d,
                      count_differences(actual, expected, 0));
        } else {
          d = max_relative_difference(actual, expected);
          EXPECT_LE(d, kFloatTolerance);
          std::printf("  %-18s %-15s %-7s device %s: max relative difference %g\n",
                      graphs[g].c_str(), image.name.c_str(), "rgba32f", device.c_str(), d);
        }
      }
    }
  }
}

const std::vector<double> kSigmas = {0.5, 1, 2, 5, 12};
const std::vector<int> kRadii = {1, 2, 5, 15, 64};

std::vector<std::string> gaussian_graphs() {
  std::vector<std::string> graphs;
  for (double s : kSigmas) {
    char text[64];
    std::snprintf(text, sizeof text, "gaussian=sigma=%g", s);
    graphs.push_back(text);
  }
  return graphs;
}

std::vector<std::string> box_graphs() {
  std::vector<std::string> graphs;
  for (int r : kRadii) graphs.push_back("box=radius=" + std::to_string(r));
  return graphs;
}

void opencv_gaussian(const cv::Mat& src, cv::Mat& dst, std::size_t i) {
  cv::GaussianBlur(src, dst, cv::Size(0, 0), kSigmas[i], kSigmas[i], cv::BORDER_REFLECT_101);
}

void opencv_box(const cv::Mat& src, cv::Mat& dst, std::size_t i) {
  const int size = 2 * kRadii[i] + 1;
  cv::blur(src, dst, cv::Size(size, size), cv::Point(-1, -1), cv::BORDER_REFLECT_101);
}

TEST(GaussianVsOpenCV, EightBitMatchesWithinOneLsb) {
  compare(PixelFormat::rgba8, gaussian_graphs(), opencv_gaussian);
}

TEST(GaussianVsOpenCV, FloatMatchesWithinTolerance) {
  compare(PixelFormat::rgba32f, gaussian_graphs(), opencv_gaussian);
}

// On 8-bit Y'CbCr planes (PipelineOptions::planes), each plane is OpenCV's blur of it, the 4:2:0
// chroma planes with half the sigma: to the bit, as on rgba8.
TEST(GaussianVsOpenCV, EightBitPlanesMatchToTheBit) {
  Frame input = smooth_planes(333, 271, 15);
  for (const std::string& device : device_ids()) {
    for (double sigma : kSigmas) {
      char graph[64];
      std::snprintf(graph, sizeof graph, "gaussian=sigma=%g", sigma);
      SCOPED_TRACE(std::string(graph) + ", device " + device);
      const Frame actual = run_graph(graph, input, device, "single");
      ASSERT_EQ(actual.format(), PixelFormat::yuv420p);
      for (int plane = 0; plane < 3; ++plane) {
        const double s = plane ? sigma / 2 : sigma;
        cv::Mat src = plane_mat(input, plane), dst;
        cv::GaussianBlur(src, dst, cv::Size(0, 0), s, s, cv::BORDER_REFLECT_101);
        EXPECT_EQ(cv::norm(plane_mat(actual, plane), dst, cv::NORM_INF), 0.0) << "plane " << plane;
      }
    }
  }
}

TEST(BoxVsOpenCV, EightBitMatchesWithinOneLsb) {
  compare(PixelFormat::rgba8, box_graphs(), opencv_box);
}

TEST(BoxVsOpenCV, FloatMatchesWithinTolerance) {
  compare(PixelFormat::rgba32f, box_graphs(), opencv_box);
}

}  // namespace
}  // namespace tandem::test
