#include "source.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numbers>
#include <vector>

#include "tandem/error.hpp"
#include "tandem/image_io.hpp"

namespace tandem::view {

Source::Source(const std::string& input) : path_(input) {
  if (input == "testsrc" || input.starts_with("testsrc=")) {
    pattern_ = true;
    width_ = 640, height_ = 360;
    char end = 0;
    if (input != "testsrc" &&
        (std::sscanf(input.c_str(), "testsrc=%dx%d%c", &width_, &height_, &end) != 2 ||
         width_ < 1 || height_ < 1 || width_ > 16384 || height_ > 16384)) {
      throw Error("bad test source '" + input +
                  "': use testsrc or testsrc=WxH, e.g. testsrc=1280x720");
    }
    frame_rate_ = 30;
    name_ = "test pattern";
  } else if (is_image_path(input)) {
    image_ = read_image(input);
    width_ = image_.width(), height_ = image_.height();
    format_ = image_.format();
    name_ = std::filesystem::path(input).filename().string();
  } else {
    video_ = std::make_unique<VideoReader>(input);
    const VideoInfo& info = video_->info();
    width_ = info.width, height_ = info.height;
    frame_rate_ = info.frame_rate.valid() ? info.frame_rate.value() : 25;
    name_ = std::filesystem::path(input).filename().string();
  }
  char size[32];
  std::snprintf(size, sizeof size, " %dx%d", width_, height_);
  name_ += size;
}

void Source::next(Frame& frame) {
  if (pattern_) {
    draw_pattern(frame);
  } else if (video_) {
    std::int64_t pts = 0;
    if (!video_->read(frame, pts)) {
      video_ = std::make_unique<VideoReader>(path_);
      if (!video_->read(frame, pts)) throw Error("'" + path_ + "' has no frames");
    }
  } else {
    const std::size_t bytes = width_ * bytes_per_pixel(format_);
    for (int y = 0; y < height_; ++y) std::copy_n(image_.row(y), bytes, frame.row(y));
  }
  ++index_;
}

// Colour waves drifting across the frame under a checkerboard that scrolls: every pixel changes
// from frame to frame, and edges and flat areas both show what a filter does.
void Source::draw_pattern(Frame& frame) const {
  const double t = index_ / 30.0, tau = 2 * std::numbers::pi;
  std::vector<std::uint8_t> red(width_);
  for (int x = 0; x < width_; ++x) {
    red[x] = static_cast<std::uint8_t>(128 + 127 * std::sin(tau * (double(x) / width_ - 0.2 * t)));
  }
  const int shift = static_cast<int>(index_ * 2), cell = std::max(8, height_ / 9);
  for (int y = 0; y < height_; ++y) {
    const auto green =
        static_cast<std::uint8_t>(128 + 127 * std::sin(tau * (double(y) / height_ + 0.3 * t) + 2));
    std::uint8_t* px = frame.row(y);
    for (int x = 0; x < width_; ++x, px += 4) {
      px[0] = red[x];
      px[1] = green;
      px[2] = ((x + shift) / cell + y / cell) % 2 ? 210 : 50;
      px[3] = 255;
    }
  }
}

}  // namespace tandem::view
