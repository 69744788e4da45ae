#pragma once
// Where tandem-view's input frames come from: a video file (played in a loop), a still image, or
// a moving test pattern made on the host.
#include <cstdint>
#include <memory>
#include <string>

#include "tandem/frame.hpp"
#include "tandem/video_io.hpp"

namespace tandem::view {

class Source {
 public:
  /// "testsrc" or "testsrc=WxH" (640x360 by default), else an image file (by its extension) or
  /// a video file. Throws Error naming the file and the problem.
  explicit Source(const std::string& input);

  int width() const { return width_; }
  int height() const { return height_; }
  PixelFormat format() const { return format_; }
  /// Frames per second to play at; 0 for a still image, which is processed again every frame.
  double frame_rate() const { return frame_rate_; }
  /// "chelsea.png 451x300", for the input panel's label.
  const std::string& name() const { return name_; }

  /// Writes the next picture into `frame` (width() x height() of format(), any pitch); a video
  /// starts again from its beginning after its last frame.
  void next(Frame& frame);

 private:
  void draw_pattern(Frame& frame) const;

  std::string path_;
  std::string name_;
  bool pattern_ = false;
  Frame image_;
  std::unique_ptr<VideoReader> video_;
  int width_ = 0, height_ = 0;
  PixelFormat format_ = PixelFormat::rgba8;
  double frame_rate_ = 0;
  std::int64_t index_ = 0;  ///< frames given so far
};

}  // namespace tandem::view
