#pragma once
// Still images in and out of tandem frames, through OpenCV's codecs: PNG, JPEG, TIFF, BMP,
// Radiance .hdr and OpenEXR. Writes are atomic: a temporary file renamed into place.
#include <filesystem>

#include "tandem/frame.hpp"

namespace tandem {

/// Reads `path` into an RGBA frame: 8-bit files as rgba8, 16-bit and floating-point files
/// (.hdr, .exr) as rgba32f. Throws Error naming the file and the problem.
Frame read_image(const std::filesystem::path& path, std::size_t row_alignment = kMinRowAlignment);

/// Writes `frame` to `path` in the format its extension names. rgba32f frames go to .hdr/.exr
/// as float; to 8-bit formats they are clamped to 0..1 and scaled. Nothing is left at `path`
/// when writing fails.
void write_image(const std::filesystem::path& path, const Frame& frame);

/// True when the extension names a format write_image() can write.
bool is_image_path(const std::filesystem::path& path);

}  // namespace tandem
