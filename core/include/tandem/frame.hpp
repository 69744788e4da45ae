#pragma once
// Host frames: RGBA pixels in page-aligned memory with a padded row pitch, ready to be wrapped
// as OpenCL buffers without copies (CL_MEM_USE_HOST_PTR).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

namespace tandem {

enum class PixelFormat {
  rgba8,    ///< 4 x uint8 per pixel; values 0..255 map to 0..1 in filters
  rgba32f,  ///< 4 x float per pixel; linear light, unbounded
};
std::string_view to_string(PixelFormat format);
constexpr std::size_t bytes_per_pixel(PixelFormat format) {
  return format == PixelFormat::rgba8 ? 4 : 16;
}

inline constexpr std::size_t kPageSize = 4096;
inline constexpr std::size_t kMinRowAlignment = 64;

/// Row pitch in bytes for `width` pixels: a multiple of `row_alignment` (itself rounded up to a
/// multiple of 64), and at least one pixel group of four so kernels may load four pixels at once.
std::size_t padded_pitch(int width, PixelFormat format, std::size_t row_alignment);

/// Provides page-aligned host memory of `bytes` bytes (a multiple of the page size); the
/// memory lives as long as the returned pointer. nullptr asks for the default allocation.
using HostAllocator = std::function<std::shared_ptr<std::uint8_t>(std::size_t bytes)>;

/// A host image: page-aligned storage of its own whose size is a whole number of pages, or a
/// view of memory the caller owns (wrap()).
class Frame {
 public:
  Frame() = default;
  /// `allocate` may give memory a device transfers from fastest (pinned memory of a GPU's
  /// context, see Pipeline::make_frame); by default aligned_alloc.
  Frame(int width, int height, PixelFormat format, std::size_t row_alignment = kMinRowAlignment,
        const HostAllocator& allocate = nullptr);

  /// A frame over `pitch` * `height` bytes at `data` that the caller owns and keeps alive as long
  /// as the frame and its copies. Pipelines read and write it in place: rows must start on
  /// kMinRowAlignment-byte boundaries (`data` and `pitch` multiples of it, see wrappable()).
  /// Kernels move pixels in groups of four, so when `width` is no multiple of four the bytes
  /// after a row's last pixel, up to the next group, may be written. Throws Error otherwise.
  static Frame wrap(void* data, int width, int height, PixelFormat format, std::size_t pitch);
  /// True when wrap() takes this memory.
  static bool wrappable(const void* data, int width, PixelFormat format, std::size_t pitch);

  int width() const { return width_; }
  int height() const { return height_; }
  PixelFormat format() const { return format_; }
  std::size_t pitch() const { return pitch_; }
  /// Bytes of storage: a multiple of the page size, or pitch * height for a wrapped frame.
  std::size_t capacity() const { return capacity_; }
  bool empty() const { return !data_; }

  std::uint8_t* data() { return data_.get(); }
  const std::uint8_t* data() const { return data_.get(); }
  std::uint8_t* row(int y) { return data_.get() + static_cast<std::size_t>(y) * pitch_; }
  const std::uint8_t* row(int y) const {
    return data_.get() + static_cast<std::size_t>(y) * pitch_;
  }
  /// Opaque device state the runtime keeps for this frame (the OpenCL buffers wrapping it); it is
  /// released before the pixel memory.
  std::shared_ptr<void>& binding() const { return binding_; }

  template <typename T>
  T* row_as(int y) { return reinterpret_cast<T*>(row(y)); }
  template <typename T>
  const T* row_as(int y) const { return reinterpret_cast<const T*>(row(y)); }

 private:
  std::shared_ptr<std::uint8_t> data_;
  mutable std::shared_ptr<void> binding_;  // after data_: destroyed first
  int width_ = 0;
  int height_ = 0;
  PixelFormat format_ = PixelFormat::rgba8;
  std::size_t pitch_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace tandem
