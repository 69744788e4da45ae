#pragma once
// Image files for filters that read one (overlay=file=): the core reads no image formats
// itself; tandem_io (OpenCV) installs its reader when a program links it.
#include <string>

#include "tandem/frame.hpp"

namespace tandem {

/// Reads an image file into an rgba8 or rgba32f frame; throws Error.
using ImageFileReader = Frame (*)(const std::string& path);

/// Makes `reader` the one read_image_file() calls.
void install_image_file_reader(ImageFileReader reader);

/// The installed reader's frame of `path`; throws Error when no reader is installed (a program
/// without tandem_io) or the file cannot be read.
Frame read_image_file(const std::string& path);

}  // namespace tandem
