#pragma once
// Still images in and out of tandem frames, through OpenCV's codecs: PNG, JPEG, TIFF, BMP,
// Radiance .hdr and OpenEXR. Writes are atomic: a temporary file renamed into place.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "tandem/frame.hpp"

namespace tandem {

/// The most pixels read_image() decodes unless told otherwise: 16384 x 16384 (268 MP). Far above
/// any video frame (8K is 33 MP) or camera still (150 MP), yet a frame of it is 1 GiB as rgba8
/// and 4 GiB as rgba32f, which a host and one GPU buffer still hold. A file claiming more is
/// refused before it is decoded.
inline constexpr std::uint64_t kDefaultMaxImagePixels = 16384ull * 16384ull;

/// Reads `path` into an RGBA frame: 8-bit files as rgba8, 16-bit and floating-point files
/// (.hdr, .exr) as rgba32f. An image of more than `max_pixels` pixels (0: no limit) is refused;
/// for PNG, JPEG, BMP, TIFF, Radiance and OpenEXR files the size is read from the header before
/// anything is decoded or allocated, other formats are checked after decoding. Throws Error
/// naming the file and the problem.
Frame read_image(const std::filesystem::path& path, std::size_t row_alignment = kMinRowAlignment,
                 std::uint64_t max_pixels = kDefaultMaxImagePixels);

/// Writes `frame` to `path` in the format its extension names. rgba32f frames go to .hdr/.exr
/// as float; to 8-bit formats they are clamped to 0..1 and scaled. The file is encoded in memory
/// and written through an AtomicFile: nothing is left at `path` when writing fails (a full disk
/// included).
void write_image(const std::filesystem::path& path, const Frame& frame);

/// True when the extension names a format write_image() can write.
bool is_image_path(const std::filesystem::path& path);

/// Whether `path`'s file name numbers the images of a sequence as FFmpeg's image2 does: one
/// "%d" or "%0Nd" (N up to 9); "%%" is a literal '%'. Throws Error for any other '%' in the name
/// (it would be taken as the number by FFmpeg, or not at all).
bool is_image_sequence(const std::filesystem::path& path);
/// The path of image `number` of the sequence `pattern` ("f%03d.png", 7: "f007.png").
std::filesystem::path image_sequence_path(const std::filesystem::path& pattern,
                                          std::int64_t number);

/// A file that appears at its path whole or not at all. The constructor creates a temporary file
/// beside `path` (so an unwritable place fails before any work is done); write() checks every
/// write; commit() flushes the data to the device and renames the file into place. Destroyed
/// without commit(), it removes the temporary file. A `path` that exists and is neither a regular
/// file nor a directory (a device such as /dev/stdout, a pipe) is written in place instead:
/// renaming over it would replace the device. Every failure throws Error naming `path` and the
/// system's reason ("No space left on device").
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// Appends `size` bytes.
  void write(const void* data, std::size_t size);
  void write(const std::string& text) { write(text.data(), text.size()); }
  /// Flushes, closes and renames the file into place. Only once; nothing may be written after.
  void commit();
  const std::filesystem::path& path() const { return path_; }

 private:
  [[noreturn]] void fail(const std::string& why);  // discards, then throws
  void discard() noexcept;
  std::filesystem::path path_;
  std::filesystem::path temporary_;  // empty when written in place
  int fd_ = -1;
};

}  // namespace tandem
