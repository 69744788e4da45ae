#pragma once
// cv::Mat images through a pipeline. Header-only; tandem::io brings OpenCV's include path and
// libraries.
#include <cstddef>
#include <string>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "tandem/error.hpp"
#include "tandem/frame.hpp"
#include "tandem/pipeline.hpp"
#include "tandem/process.hpp"

namespace tandem {

/// The order of a cv::Mat's colour channels.
enum class ChannelOrder {
  bgr,  ///< OpenCV's own (imread, imshow, VideoCapture): BGR or BGRA
  rgb,  ///< RGB or RGBA, the order of tandem's frames
};

/// Runs `pipeline` on `in` (CV_8UC3, CV_8UC4, CV_32FC3 or CV_32FC4, channels in `order`) into
/// `out`, which gets `in`'s size, channel count and order and the depth of the graph's output.
/// 8-bit values are 0..1 to filters; three channels go in with an opaque alpha, which is dropped
/// on the way out. Four RGBA channels go through tandem::process() (in place when the rows allow
/// it); the others are converted through frames of the pipeline's own. `out` may be `in`.
inline void process(Pipeline& pipeline, const cv::Mat& in, cv::Mat& out,
                    ChannelOrder order = ChannelOrder::bgr) {
  const int depth = in.depth();
  const int channels = in.channels();
  if (in.empty() || in.dims != 2 || (depth != CV_8U && depth != CV_32F) ||
      (channels != 3 && channels != 4)) {
    throw Error("process: a cv::Mat of type " + std::string(cv::typeToString(in.type())) +
                " is not an image tandem takes (CV_8UC3, CV_8UC4, CV_32FC3, CV_32FC4)");
  }
  const PixelFormat format = depth == CV_8U ? PixelFormat::rgba8 : PixelFormat::rgba32f;
  const PixelFormat out_format = pipeline.output_format(format);
  const int out_depth = out_format == PixelFormat::rgba8 ? CV_8U : CV_32F;
  const cv::Mat source = in;  // keeps the pixels when `out` is `in` and is made anew below
  out.create(source.rows, source.cols, CV_MAKETYPE(out_depth, channels));

  // tandem::process() may wrap the rows as a buffer of step * rows bytes.
  auto spans_whole_rows = [](const cv::Mat& m) {
    return static_cast<std::size_t>(m.datalimit - m.data) >= m.step[0] * m.rows;
  };
  const bool rgba = channels == 4 && order == ChannelOrder::rgb;
  if (rgba && spans_whole_rows(source) && spans_whole_rows(out)) {
    process(pipeline, source.data, source.step[0], out.data, out.step[0], source.cols, source.rows,
            format);
    return;
  }
  Frame frame_in = pipeline.make_frame(source.cols, source.rows, format);
  cv::Mat rgba_in(source.rows, source.cols, CV_MAKETYPE(depth, 4), frame_in.data(),
                  frame_in.pitch());
  const bool bgr = order == ChannelOrder::bgr;
  if (rgba) {
    source.copyTo(rgba_in);
  } else {
    cv::cvtColor(
        source, rgba_in,
        channels == 3 ? (bgr ? cv::COLOR_BGR2RGBA : cv::COLOR_RGB2RGBA) : cv::COLOR_BGRA2RGBA);
  }
  Frame frame_out = pipeline.make_frame(source.cols, source.rows, out_format);
  pipeline.process(frame_in, frame_out);
  const cv::Mat rgba_out(source.rows, source.cols, CV_MAKETYPE(out_depth, 4), frame_out.data(),
                         frame_out.pitch());
  if (rgba) {
    rgba_out.copyTo(out);
  } else {
    cv::cvtColor(
        rgba_out, out,
        channels == 3 ? (bgr ? cv::COLOR_RGBA2BGR : cv::COLOR_RGBA2RGB) : cv::COLOR_RGBA2BGRA);
  }
}

}  // namespace tandem
