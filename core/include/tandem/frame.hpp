#pragma once
// Host frames: RGBA pixels, or video's Y'CbCr planes, in page-aligned memory with a padded row
// pitch, ready to be wrapped as OpenCL buffers without copies (CL_MEM_USE_HOST_PTR).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tandem {

enum class PixelFormat {
  rgba8,    ///< 4 x uint8 per pixel; values 0..255 map to 0..1 in filters
  rgba32f,  ///< 4 x float per pixel; linear light, unbounded
  /// 8-bit Y'CbCr 4:2:0 (FFmpeg's yuv420p): a Y plane and Cb and Cr planes of half the width
  /// and height. Frames store it by row pairs, each two Y rows then the Cb row and the Cr row
  /// they share, so that a band of whole row pairs is one range of bytes (one copy, one
  /// sub-buffer): Frame::plane_row() finds a plane's rows. Filters never see it: the devices
  /// convert it to rgba8 as they read it and back as they write it (Pipeline).
  yuv420p,
  /// 10-bit Y'CbCr 4:2:0, a sample in the low 10 bits of 16 (FFmpeg's yuv420p10le), in row
  /// pairs as yuv420p. The devices convert it to rgba32f (R'G'B' as they are, unquantised, so
  /// a frame no filter changes keeps its codes) and back.
  yuv420p10,
  /// 12-bit Y'CbCr 4:2:0 (yuv420p12le), as yuv420p10 with 12 bits of 16.
  yuv420p12,
  /// Y'CbCr 4:2:2 (FFmpeg's yuv422p, yuv422p10le, yuv422p12le): chroma planes of half the
  /// width and the full height. Frames store each row as its Y row, then its Cb row and its
  /// Cr row. 8 bits convert to rgba8, deeper ones to rgba32f.
  yuv422p,
  yuv422p10,
  yuv422p12,
  /// Y'CbCr 4:4:4 (yuv444p, yuv444p10le, yuv444p12le): three planes of the full size, each row
  /// stored as its Y, Cb and Cr rows.
  yuv444p,
  yuv444p10,
  yuv444p12,
};
std::string_view to_string(PixelFormat format);
/// The format named `name` (as to_string() writes it); throws Error for anything else.
PixelFormat parse_pixel_format(std::string_view name);

/// True for the Y'CbCr plane formats, which only frames and their conversions use.
constexpr bool is_planar(PixelFormat format) {
  return format != PixelFormat::rgba8 && format != PixelFormat::rgba32f;
}
/// Bits of a sample of a plane format's codes (8, 10 or 12).
constexpr int sample_bits(PixelFormat format) {
  switch (format) {
    case PixelFormat::yuv420p10:
    case PixelFormat::yuv422p10:
    case PixelFormat::yuv444p10:
      return 10;
    case PixelFormat::yuv420p12:
    case PixelFormat::yuv422p12:
    case PixelFormat::yuv444p12:
      return 12;
    default:
      return 8;
  }
}
/// Bytes of a sample of a plane format (1 or 2).
constexpr std::size_t sample_bytes(PixelFormat format) {
  return sample_bits(format) > 8 ? 2 : 1;
}
/// log2 of a plane format's chroma subsampling across (1 for 4:2:0 and 4:2:2) and down (1 for
/// 4:2:0); 0 for the packed formats.
constexpr int chroma_shift_x(PixelFormat format) {
  return is_planar(format) && format != PixelFormat::yuv444p &&
                 format != PixelFormat::yuv444p10 && format != PixelFormat::yuv444p12
             ? 1
             : 0;
}
constexpr int chroma_shift_y(PixelFormat format) {
  return format == PixelFormat::yuv420p || format == PixelFormat::yuv420p10 ||
                 format == PixelFormat::yuv420p12
             ? 1
             : 0;
}
/// Rows a format stores together (2 for 4:2:0, else 1): bands start on multiples of it.
constexpr int rows_per_group(PixelFormat format) {
  return 1 << chroma_shift_y(format);
}
/// The plane format of a subsampling (chroma_shift_x(), chroma_shift_y()) and depth, where tandem
/// has one.
constexpr std::optional<PixelFormat> plane_format(int shift_x, int shift_y, int bits) {
  constexpr PixelFormat table[3][3] = {
      {PixelFormat::yuv420p, PixelFormat::yuv420p10, PixelFormat::yuv420p12},
      {PixelFormat::yuv422p, PixelFormat::yuv422p10, PixelFormat::yuv422p12},
      {PixelFormat::yuv444p, PixelFormat::yuv444p10, PixelFormat::yuv444p12}};
  const int layout = shift_x == 1 && shift_y == 1 ? 0 : shift_x == 1 && shift_y == 0 ? 1
                     : shift_x == 0 && shift_y == 0 ? 2
                                                    : -1;
  const int depth = bits == 8 ? 0 : bits == 10 ? 1 : bits == 12 ? 2 : -1;
  if (layout < 0 || depth < 0) return std::nullopt;
  return table[layout][depth];
}
/// Bytes per pixel of the packed formats (rgba8 4, rgba32f 16); 0 for plane formats, whose rows
/// are copied plane by plane (Frame::plane_row()).
constexpr std::size_t bytes_per_pixel(PixelFormat format) {
  return format == PixelFormat::rgba8 ? 4 : format == PixelFormat::rgba32f ? 16 : 0;
}
/// The format filters work in for frames of `format`: rgba8 for 8-bit planes, rgba32f for
/// deeper ones, else itself.
constexpr PixelFormat working_format(PixelFormat format) {
  return !is_planar(format)          ? format
         : sample_bits(format) == 8 ? PixelFormat::rgba8
                                    : PixelFormat::rgba32f;
}

/// How Y'CbCr codes stand for R'G'B' values: the matrix (ITU-R BT.601, BT.709, BT.2020
/// non-constant luminance) and the range of the codes (limited: Y' 16..235 and Cb, Cr 16..240
/// at 8 bits, four times those at 10; full: 0..255, 0..1023).
struct YuvEncoding {
  enum class Matrix { bt601, bt709, bt2020 };
  Matrix matrix = Matrix::bt709;
  bool full_range = false;
  bool operator==(const YuvEncoding&) const = default;
};
std::string to_string(const YuvEncoding& encoding);

inline constexpr std::size_t kPageSize = 4096;
inline constexpr std::size_t kMinRowAlignment = 64;

/// Row pitch in bytes for `width` pixels: a multiple of `row_alignment` (itself rounded up to a
/// multiple of 64), and at least one pixel group of four so kernels may load four pixels at once.
/// For plane formats, a row group's bytes over its rows: its Y rows, each a multiple of
/// `row_alignment`, and its Cb and Cr rows (yuv420p: 1.5 times the Y pitch, the Cb and Cr rows
/// half as long; yuv422p twice, yuv444p three times): rows_per_group() rows start on a multiple
/// of `row_alignment`.
std::size_t padded_pitch(int width, PixelFormat format, std::size_t row_alignment);
/// Bytes `rows` rows take from the start of a row group at `pitch`: whole row groups.
constexpr std::size_t rows_bytes(PixelFormat format, std::size_t pitch, int rows) {
  const int g = rows_per_group(format);
  return pitch * static_cast<std::size_t>((rows + g - 1) / g * g);
}

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
  /// as the frame and its copies; rgba8 or rgba32f. Pipelines read and write it in place: rows must
  /// start on kMinRowAlignment-byte boundaries (`data` and `pitch` multiples of it, see
  /// wrappable()). Kernels move pixels in groups of four, so when `width` is no multiple of four
  /// the bytes after a row's last pixel, up to the next group, may be written. Throws Error
  /// otherwise.
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
  /// Row `y` of a packed format; for a plane format, the start of the row group of row `y`, a
  /// multiple of rows_per_group().
  std::uint8_t* row(int y) { return data_.get() + static_cast<std::size_t>(y) * pitch_; }
  const std::uint8_t* row(int y) const {
    return data_.get() + static_cast<std::size_t>(y) * pitch_;
  }
  /// Row `y` of plane `plane` (0 Y', 1 Cb, 2 Cr) of a plane format, `y` counted in that plane's
  /// rows (a 4:2:0 chroma plane has (height + 1) / 2); plane_width() samples of it are the
  /// plane's.
  std::uint8_t* plane_row(int plane, int y) {
    return const_cast<std::uint8_t*>(std::as_const(*this).plane_row(plane, y));
  }
  const std::uint8_t* plane_row(int plane, int y) const;
  /// Samples per row of plane `plane` (of sample_bytes() each): the width, or (width + 1) / 2
  /// for 4:2:0 and 4:2:2 chroma.
  int plane_width(int plane) const;
  /// Rows of plane `plane`: the height, or (height + 1) / 2 for 4:2:0 chroma.
  int plane_height(int plane) const;
  /// Bytes between the starts of a plane format's Y rows within a row group (the Cb and Cr rows
  /// take luma_pitch() >> chroma_shift_x() each).
  std::size_t luma_pitch() const;
  /// The code of sample `x` of row `y` of plane `plane` (8 or 16 bits as stored).
  int sample(int plane, int x, int y) const;
  void set_sample(int plane, int x, int y, int code);

  /// For plane formats, how the codes stand for colours (see YuvEncoding); Pipeline converts
  /// with it and gives its output frames the input's.
  const YuvEncoding& yuv_encoding() const { return yuv_encoding_; }
  void set_yuv_encoding(const YuvEncoding& encoding) { yuv_encoding_ = encoding; }
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
  YuvEncoding yuv_encoding_;
};

/// Copies the pixels of `from` into `to`, of the same size and format and any pitch, with the
/// Y'CbCr encoding; throws Error when size or format differ.
void copy_pixels(const Frame& from, Frame& to);

}  // namespace tandem
