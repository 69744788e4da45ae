#pragma once
// Host-side helpers for point-wise filters' reference implementations: the same pixel
// normalisation and rounding as the kernels (tandem.clh), run in parallel with TBB.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "tandem/error.hpp"
#include "tandem/frame.hpp"

namespace tandem {

/// A pixel as point-wise filters see it: 8-bit values / 255, float values as stored.
struct Pixel {
  float r, g, b, a;
};

inline Pixel load_pixel(const Frame& frame, int x, int y) {
  if (frame.format() == PixelFormat::rgba8) {
    const std::uint8_t* p = frame.row(y) + 4 * static_cast<std::size_t>(x);
    constexpr float k = 1.0f / 255.0f;
    return {p[0] * k, p[1] * k, p[2] * k, p[3] * k};
  }
  const float* p = frame.row_as<float>(y) + 4 * static_cast<std::size_t>(x);
  return {p[0], p[1], p[2], p[3]};
}

/// Reflect-101 (OpenCV's default border) of index `i` into [0, n) for any offset, also past the
/// far side of tiny images: what tandem_reflect101 in kernels/tandem.clh computes.
inline int reflect101(int i, int n) {
  const int period = std::max(2 * (n - 1), 1);
  i = std::abs(i) % period;
  return i >= n ? period - i : i;
}

/// Rounds to nearest (ties to even) and saturates, as convert_uchar_sat_rte does.
inline std::uint8_t to_u8(float v) {
  const float scaled = v * 255.0f;
  if (!(scaled > 0.0f)) return 0;  // also NaN, as the OpenCL conversion does
  return static_cast<std::uint8_t>(std::nearbyint(std::min(scaled, 255.0f)));
}

inline void store_pixel(Frame& frame, int x, int y, Pixel px) {
  if (frame.format() == PixelFormat::rgba8) {
    std::uint8_t* p = frame.row(y) + 4 * static_cast<std::size_t>(x);
    p[0] = to_u8(px.r);
    p[1] = to_u8(px.g);
    p[2] = to_u8(px.b);
    p[3] = to_u8(px.a);
  } else {
    float* p = frame.row_as<float>(y) + 4 * static_cast<std::size_t>(x);
    p[0] = px.r;
    p[1] = px.g;
    p[2] = px.b;
    p[3] = px.a;
  }
}

/// What an 8-bit frame does to a value when stored and read back.
inline Pixel quantize8(Pixel px) {
  constexpr float k = 1.0f / 255.0f;
  return {to_u8(px.r) * k, to_u8(px.g) * k, to_u8(px.b) * k, to_u8(px.a) * k};
}

inline void check_same_size(const Frame& a, const Frame& b) {
  if (a.width() != b.width() || a.height() != b.height()) {
    throw Error("frame sizes differ: " + std::to_string(a.width()) + "x" +
                std::to_string(a.height()) + " and " + std::to_string(b.width()) + "x" +
                std::to_string(b.height()));
  }
}

/// output(x, y) = fn(input(x, y)) over every pixel, rows in parallel.
template <typename Fn>
void for_each_pixel(const Frame& input, Frame& output, Fn fn) {
  check_same_size(input, output);
  tbb::parallel_for(tbb::blocked_range<int>(0, input.height()), [&](const auto& rows) {
    for (int y = rows.begin(); y != rows.end(); ++y) {
      for (int x = 0; x < input.width(); ++x) store_pixel(output, x, y, fn(load_pixel(input, x, y)));
    }
  });
}

/// output(x, y) = fn(a(x, y), b(x, y)) over every pixel, rows in parallel.
template <typename Fn>
void for_each_pixel(const Frame& a, const Frame& b, Frame& output, Fn fn) {
  check_same_size(a, output);
  check_same_size(b, output);
  tbb::parallel_for(tbb::blocked_range<int>(0, a.height()), [&](const auto& rows) {
    for (int y = rows.begin(); y != rows.end(); ++y) {
      for (int x = 0; x < a.width(); ++x) {
        store_pixel(output, x, y, fn(load_pixel(a, x, y), load_pixel(b, x, y)));
      }
    }
  });
}

}  // namespace tandem
