// cv::Mat through a pipeline (tandem/cv.hpp): every supported type in both channel orders,
// regions of a larger image, `out` being `in`, and a graph that changes the depth. Expected
// results come from the same pipeline on a frame filled here pixel by pixel, so they must be
// equal exactly; saturation weighs R, G and B differently, so a channel order mixed up shows.
#include <gtest/gtest.h>

#include <string>

#include <opencv2/core.hpp>

#include "tandem/cv.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

Pipeline make_pipeline(DeviceSet& devices, const std::string& graph) {
  PipelineOptions options;
  options.split = "single";
  options.persist_split = false;
  return Pipeline(devices, Graph::parse(graph), options);
}

cv::Mat random_mat(int rows, int cols, int type) {
  cv::Mat m(rows, cols, type);
  cv::theRNG().state = 12345;
  if (m.depth() == CV_8U) {
    cv::randu(m, 0, 256);
  } else {
    cv::randu(m, 0.0f, 1.5f);
  }
  return m;
}

// Channel c of RGBA as the Mat holds it (c = 3 without alpha: opaque).
double channel(const cv::Mat& m, int y, int x, int c, ChannelOrder order) {
  const int n = m.channels();
  if (c == 3 && n == 3) return m.depth() == CV_8U ? 255.0 : 1.0;
  const int at = c < 3 && order == ChannelOrder::bgr ? 2 - c : c;
  return m.depth() == CV_8U ? m.ptr<std::uint8_t>(y)[x * n + at] : m.ptr<float>(y)[x * n + at];
}

Frame frame_of(const cv::Mat& m, ChannelOrder order) {
  Frame f(m.cols, m.rows, m.depth() == CV_8U ? PixelFormat::rgba8 : PixelFormat::rgba32f);
  for (int y = 0; y < m.rows; ++y) {
    for (int x = 0; x < m.cols; ++x) {
      for (int c = 0; c < 4; ++c) {
        const double v = channel(m, y, x, c, order);
        if (f.format() == PixelFormat::rgba8) {
          f.row(y)[4 * x + c] = static_cast<std::uint8_t>(v);
        } else {
          f.row_as<float>(y)[4 * x + c] = static_cast<float>(v);
        }
      }
    }
  }
  return f;
}

// Largest difference between `m`'s channels and `f`'s (alpha only where `m` has it).
double max_difference(const cv::Mat& m, const Frame& f, ChannelOrder order) {
  double worst = 0;
  for (int y = 0; y < m.rows; ++y) {
    for (int x = 0; x < m.cols; ++x) {
      for (int c = 0; c < m.channels(); ++c) {
        const double want =
            f.format() == PixelFormat::rgba8 ? f.row(y)[4 * x + c] : f.row_as<float>(y)[4 * x + c];
        worst = std::max(worst, std::abs(channel(m, y, x, c, order) - want));
      }
    }
  }
  return worst;
}

std::string name(int type, ChannelOrder order) {
  return cv::typeToString(type) + (order == ChannelOrder::bgr ? " bgr" : " rgb");
}

TEST(ProcessMat, EveryTypeInBothOrders) {
  DeviceSet devices = DeviceSet::open("all");
  Pipeline pipeline = make_pipeline(devices, "saturation=1.6");
  // 64 RGBA columns: rows OpenCV aligns to 64 bytes, which go through the devices in place.
  for (const cv::Size size : {cv::Size(37, 11), cv::Size(64, 8)}) {
    for (int type : {CV_8UC3, CV_8UC4, CV_32FC3, CV_32FC4}) {
      for (ChannelOrder order : {ChannelOrder::bgr, ChannelOrder::rgb}) {
        SCOPED_TRACE(name(type, order) + " " + std::to_string(size.width));
        const cv::Mat in = random_mat(size.height, size.width, type);
        cv::Mat out;
        process(pipeline, in, out, order);
        ASSERT_EQ(out.type(), type);
        ASSERT_EQ(out.size(), in.size());
        Frame expected;
        pipeline.process(frame_of(in, order), expected);
        EXPECT_EQ(max_difference(out, expected, order), 0.0);
        // The other order gives another picture.
        EXPECT_GT(
            max_difference(out, expected,
                           order == ChannelOrder::bgr ? ChannelOrder::rgb : ChannelOrder::bgr),
            0.0);
      }
    }
  }
}

TEST(ProcessMat, RegionsAndInPlace) {
  DeviceSet devices = DeviceSet::open("all");
  Pipeline pipeline = make_pipeline(devices, "gaussian=sigma=2");
  for (int type : {CV_8UC4, CV_8UC3}) {
    for (ChannelOrder order : {ChannelOrder::rgb, ChannelOrder::bgr}) {
      SCOPED_TRACE(name(type, order));
      cv::Mat big = random_mat(40, 70, type);
      const cv::Mat before = big.clone();
      cv::Mat region = big(cv::Rect(5, 3, 33, 21));  // odd width, rows far apart
      Frame expected;
      pipeline.process(frame_of(region, order), expected);
      process(pipeline, region, region, order);  // out is in: written back into `big`
      EXPECT_EQ(max_difference(region, expected, order), 0.0);
      // Nothing outside the region changed.
      cv::Mat outside = big != before;
      outside(cv::Rect(5, 3, 33, 21)).setTo(0);
      EXPECT_EQ(cv::countNonZero(outside.reshape(1)), 0);
    }
  }
}

TEST(ProcessMat, OutputTakesTheGraphsDepth) {
  DeviceSet devices = DeviceSet::open("all");
  Pipeline pipeline = make_pipeline(devices, "tonemap=op=aces");
  cv::Mat image = random_mat(9, 14, CV_32FC3);
  const cv::Mat in = image.clone();
  process(pipeline, image, image);  // out is in, and gets another type
  ASSERT_EQ(image.type(), CV_8UC3);
  Frame expected;
  pipeline.process(frame_of(in, ChannelOrder::bgr), expected);
  EXPECT_EQ(max_difference(image, expected, ChannelOrder::bgr), 0.0);
}

TEST(ProcessMat, RefusesOtherTypes) {
  DeviceSet devices = DeviceSet::open("all");
  Pipeline pipeline = make_pipeline(devices, "saturation");
  cv::Mat out;
  try {
    process(pipeline, cv::Mat(4, 4, CV_16UC3), out);
    FAIL() << "a 16-bit image was taken";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "process: a cv::Mat of type CV_16UC3 is not an image tandem takes (CV_8UC3, "
                 "CV_8UC4, CV_32FC3, CV_32FC4)");
  }
  EXPECT_THROW(process(pipeline, cv::Mat(), out), Error);
  EXPECT_THROW(process(pipeline, cv::Mat(4, 4, CV_8UC1), out), Error);
}

}  // namespace
}  // namespace tandem::test
