#include "display.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace tandem::view {
namespace {

// The sRGB encoding (IEC 61966-2-1) of linear values in steps of 1 / (kSteps - 1): fine enough
// that the nearest step is the exact value's 8-bit level or one off, on the darkest, steepest part.
constexpr int kSteps = 1 << 14;

const std::array<std::uint8_t, kSteps>& srgb_levels() {
  static const std::array<std::uint8_t, kSteps> table = [] {
    std::array<std::uint8_t, kSteps> t{};
    for (int i = 0; i < kSteps; ++i) {
      const double v = static_cast<double>(i) / (kSteps - 1);
      const double e = v <= 0.0031308 ? 12.92 * v : 1.055 * std::pow(v, 1 / 2.4) - 0.055;
      t[i] = static_cast<std::uint8_t>(std::lround(255 * e));
    }
    return t;
  }();
  return table;
}

std::uint8_t level(float v, bool encode) {
  const float c = std::isnan(v) ? 0.0f : std::clamp(v, 0.0f, 1.0f);
  if (!encode) return static_cast<std::uint8_t>(std::lround(255 * c));
  return srgb_levels()[static_cast<int>(std::lround(c * (kSteps - 1)))];
}

}  // namespace

Frame for_display(const Frame& frame) {
  if (frame.format() == PixelFormat::rgba8) return frame;
  Frame out(frame.width(), frame.height(), PixelFormat::rgba8);
  tbb::parallel_for(tbb::blocked_range<int>(0, frame.height()), [&](const auto& rows) {
    for (int y = rows.begin(); y != rows.end(); ++y) {
      const float* in = frame.row_as<float>(y);
      std::uint8_t* o = out.row(y);
      for (int i = 0; i < 4 * frame.width(); ++i) o[i] = level(in[i], i % 4 != 3);
    }
  });
  return out;
}

}  // namespace tandem::view
