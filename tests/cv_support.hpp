#pragma once
// What the suites that compare with OpenCV share: frames as cv::Mat and back.
#include <cstdint>

#include <opencv2/core.hpp>

#include "tandem/frame.hpp"

namespace tandem::test {

/// `frame`'s pixels as a cv::Mat (CV_8UC4 or CV_32FC4), without a copy.
inline cv::Mat wrap(const Frame& frame) {
  return cv::Mat(frame.height(), frame.width(),
                 frame.format() == PixelFormat::rgba8 ? CV_8UC4 : CV_32FC4,
                 const_cast<std::uint8_t*>(frame.data()), frame.pitch());
}

/// A frame holding a copy of `mat` (CV_8UC4 or CV_32FC4).
inline Frame from_mat(const cv::Mat& mat) {
  Frame frame(mat.cols, mat.rows, mat.depth() == CV_8U ? PixelFormat::rgba8 : PixelFormat::rgba32f);
  mat.copyTo(wrap(frame));
  return frame;
}

}  // namespace tandem::test
