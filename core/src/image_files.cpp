#include "tandem/image_files.hpp"

#include <atomic>

#include "tandem/error.hpp"

namespace tandem {
namespace {

std::atomic<ImageFileReader> installed{nullptr};

}  // namespace

void install_image_file_reader(ImageFileReader reader) {
  installed = reader;
}

Frame read_image_file(const std::string& path) {
  const ImageFileReader reader = installed;
  if (!reader) {
    throw Error("cannot read '" + path + "': this program reads no image files (link tandem::io)");
  }
  return reader(path);
}

}  // namespace tandem
