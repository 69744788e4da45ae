#include "tandem/frame.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <numeric>
#include <string>

#include "tandem/error.hpp"

namespace tandem {

namespace {

constexpr PixelFormat kFormats[] = {
    PixelFormat::rgba8,     PixelFormat::rgba32f,   PixelFormat::yuv420p,   PixelFormat::yuv420p10,
    PixelFormat::yuv420p12, PixelFormat::yuv422p,   PixelFormat::yuv422p10, PixelFormat::yuv422p12,
    PixelFormat::yuv444p,   PixelFormat::yuv444p10, PixelFormat::yuv444p12};

}  // namespace

std::string_view to_string(PixelFormat format) {
  switch (format) {
    case PixelFormat::rgba8:
      return "rgba8";
    case PixelFormat::rgba32f:
      return "rgba32f";
    case PixelFormat::yuv420p:
      return "yuv420p";
    case PixelFormat::yuv420p10:
      return "yuv420p10";
    case PixelFormat::yuv420p12:
      return "yuv420p12";
    case PixelFormat::yuv422p:
      return "yuv422p";
    case PixelFormat::yuv422p10:
      return "yuv422p10";
    case PixelFormat::yuv422p12:
      return "yuv422p12";
    case PixelFormat::yuv444p:
      return "yuv444p";
    case PixelFormat::yuv444p10:
      return "yuv444p10";
    case PixelFormat::yuv444p12:
      return "yuv444p12";
  }
  return "unknown";
}

PixelFormat parse_pixel_format(std::string_view name) {
  std::string names;
  for (PixelFormat f : kFormats) {
    if (to_string(f) == name) return f;
    names += (names.empty() ? "" : ", ") + std::string(to_string(f));
  }
  throw Error("unknown pixel format '" + std::string(name) + "' (" + names + ")");
}

std::string to_string(const YuvEncoding& encoding) {
  const char* matrix = encoding.matrix == YuvEncoding::Matrix::bt601   ? "bt601"
                       : encoding.matrix == YuvEncoding::Matrix::bt709 ? "bt709"
                                                                       : "bt2020";
  return std::string(matrix) + (encoding.full_range ? " full range" : " limited range");
}

std::size_t padded_pitch(int width, PixelFormat format, std::size_t row_alignment) {
  const std::size_t align = std::lcm(row_alignment ? row_alignment : 1, kMinRowAlignment);
  // Kernels touch pixels in groups of four, so a row holds at least a whole group.
  const std::size_t groups = (static_cast<std::size_t>(std::max(width, 1)) + 3) / 4;
  if (is_planar(format)) {
    // A group's aligned Y rows and its Cb and Cr rows, over its rows.
    const std::size_t luma = (groups * 4 * sample_bytes(format) + align - 1) / align * align;
    const std::size_t g = static_cast<std::size_t>(rows_per_group(format));
    return (g * luma + 2 * (luma >> chroma_shift_x(format))) / g;
  }
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
  capacity_ = (rows_bytes(format, pitch_, height) + kPageSize - 1) / kPageSize * kPageSize;
  if (allocate) data_ = allocate(capacity_);
  if (!data_ || reinterpret_cast<std::uintptr_t>(data_.get()) % kPageSize) {
    auto* p = static_cast<std::uint8_t*>(std::aligned_alloc(kPageSize, capacity_));
    if (!p) throw std::bad_alloc();
    data_.reset(p, [](std::uint8_t* q) { std::free(q); });
  }
  // Padding bytes are written by kernels that work on groups of four pixels; keep them defined.
  std::memset(data_.get(), 0, capacity_);
}

std::size_t Frame::luma_pitch() const {
  const int g = rows_per_group(format_);
  return pitch_ * g / (g + (2 >> chroma_shift_x(format_)));
}

const std::uint8_t* Frame::plane_row(int plane, int y) const {
  // Row group k is Y rows gk .. gk + g - 1, then Cb row k, then Cr row k.
  const int g = rows_per_group(format_);
  const std::size_t luma = luma_pitch();
  const std::size_t chroma = luma >> chroma_shift_x(format_);
  const std::uint8_t* group =
      data_.get() + static_cast<std::size_t>(plane == 0 ? y / g : y) * g * pitch_;
  if (plane == 0) return group + (y % g) * luma;
  return group + g * luma + (plane == 2 ? chroma : 0);
}

int Frame::plane_width(int plane) const {
  const int s = plane == 0 ? 0 : chroma_shift_x(format_);
  return (width_ + (1 << s) - 1) >> s;
}

int Frame::plane_height(int plane) const {
  const int s = plane == 0 ? 0 : chroma_shift_y(format_);
  return (height_ + (1 << s) - 1) >> s;
}

int Frame::sample(int plane, int x, int y) const {
  const std::uint8_t* r = plane_row(plane, y);
  return sample_bytes(format_) == 1 ? r[x] : reinterpret_cast<const std::uint16_t*>(r)[x];
}

void Frame::set_sample(int plane, int x, int y, int code) {
  std::uint8_t* r = plane_row(plane, y);
  if (sample_bytes(format_) == 1) {
    r[x] = static_cast<std::uint8_t>(code);
  } else {
    reinterpret_cast<std::uint16_t*>(r)[x] = static_cast<std::uint16_t>(code);
  }
}

bool Frame::wrappable(const void* data, int width, PixelFormat format, std::size_t pitch) {
  return !is_planar(format) && data &&
         reinterpret_cast<std::uintptr_t>(data) % kMinRowAlignment == 0 &&
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
                std::to_string(kMinRowAlignment) + "-byte boundaries" +
                (is_planar(format) ? ", and plane formats live in frames of their own" : ""));
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

void copy_pixels(const Frame& from, Frame& to) {
  if (from.width() != to.width() || from.height() != to.height() || from.format() != to.format()) {
    throw Error("cannot copy a " + std::to_string(from.width()) + "x" +
                std::to_string(from.height()) + " " + std::string(to_string(from.format())) +
                " frame into a " + std::to_string(to.width()) + "x" + std::to_string(to.height()) +
                " " + std::string(to_string(to.format())) + " one");
  }
  if (!is_planar(from.format())) {
    const std::size_t bytes =
        static_cast<std::size_t>(from.width()) * bytes_per_pixel(from.format());
    for (int y = 0; y < from.height(); ++y) std::memcpy(to.row(y), from.row(y), bytes);
  } else {
    for (int p = 0; p < 3; ++p) {
      for (int y = 0; y < from.plane_height(p); ++y) {
        std::memcpy(to.plane_row(p, y), from.plane_row(p, y),
                    from.plane_width(p) * sample_bytes(from.format()));
      }
    }
  }
  to.set_yuv_encoding(from.yuv_encoding());
}

}  // namespace tandem
