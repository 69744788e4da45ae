#include "tandem/frame.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <numeric>
#include <string>

#include "tandem/error.hpp"

namespace tandem {

std::string_view to_string(PixelFormat format) {
  return format == PixelFormat::rgba8 ? "rgba8" : "rgba32f";
}

std::size_t padded_pitch(int width, PixelFormat format, std::size_t row_alignment) {
  const std::size_t align = std::lcm(row_alignment ? row_alignment : 1, kMinRowAlignment);
  // Kernels touch pixels in groups of four, so a row holds at least a whole group.
  const std::size_t groups = (static_cast<std::size_t>(std::max(width, 1)) + 3) / 4;
  const std::size_t bytes = groups * 4 * bytes_per_pixel(format);
  return (bytes + align - 1) / align * align;
}

namespace {

void check_size(int width, int height) {
  if (width <= 0 || height <= 0 || width > (1 << 16) || height > (1 << 16)) {
    throw Error("frame size " + std::to_string(width) + "x" + std::to_string(height) +
                " is out of range (1..65536 on each side)");
  }
}

}  // namespace

Frame::Frame(int width, int height, PixelFormat format, std::size_t row_alignment,
             const HostAllocator& allocate)
    : width_(width), height_(height), format_(format) {
  check_size(width, height);
  pitch_ = padded_pitch(width, format, row_alignment);
  capacity_ = (pitch_ * static_cast<std::size_t>(height) + kPageSize - 1) / kPageSize * kPageSize;
  if (allocate) data_ = allocate(capacity_);
  if (!data_ || reinterpret_cast<std::uintptr_t>(data_.get()) % kPageSize) {
    auto* p = static_cast<std::uint8_t*>(std::aligned_alloc(kPageSize, capacity_));
    if (!p) throw std::bad_alloc();
    data_.reset(p, [](std::uint8_t* q) { std::free(q); });
  }
  // Padding bytes are written by kernels that work on groups of four pixels; keep them defined.
  std::memset(data_.get(), 0, capacity_);
}

bool Frame::wrappable(const void* data, int width, PixelFormat format, std::size_t pitch) {
  return data && reinterpret_cast<std::uintptr_t>(data) % kMinRowAlignment == 0 &&
         pitch % kMinRowAlignment == 0 &&
         pitch >= static_cast<std::size_t>(std::max(width, 0)) * bytes_per_pixel(format);
}

Frame Frame::wrap(void* data, int width, int height, PixelFormat format, std::size_t pitch) {
  check_size(width, height);
  if (!wrappable(data, width, format, pitch)) {
    throw Error("cannot wrap " + std::to_string(width) + "x" + std::to_string(height) + " " +
                std::string(to_string(format)) + " pixels with a pitch of " +
                std::to_string(pitch) +
                " bytes as a frame: rows must hold the width and start on " +
                std::to_string(kMinRowAlignment) + "-byte boundaries");
  }
  Frame f;
  // An owner-less pointer: the memory is the caller's.
  f.data_ =
      std::shared_ptr<std::uint8_t>(std::shared_ptr<void>(), static_cast<std::uint8_t*>(data));
  f.width_ = width;
  f.height_ = height;
  f.format_ = format;
  f.pitch_ = pitch;
  f.capacity_ = pitch * static_cast<std::size_t>(height);
  return f;
}

}  // namespace tandem
