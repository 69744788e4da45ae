// Fuzz target: the image reader (tandem::read_image: OpenCV's decoders behind tandem's checks of
// truncated JPEG and Radiance headers). A bad file must end in tandem::Error; a good one in a
// frame of the size and format the file holds.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "input_file.hpp"
#include "tandem/error.hpp"
#include "tandem/image_io.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // OpenCV refuses pictures over a pixel count it reads from here once (default 2^30, 4 GiB of
  // RGBA): 4 Mpx keeps a header that claims a huge picture from being an out-of-memory report,
  // which is a question of limits (the run's memory cap), not of memory safety.
  ::setenv("OPENCV_IO_MAX_IMAGE_PIXELS", "4194304", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static tandem::fuzz::InputFile file("image");
  const auto& path = file.write(data, size);
  try {
    const tandem::Frame frame = tandem::read_image(path);
    if (frame.width() <= 0 || frame.height() <= 0) std::abort();
  } catch (const tandem::Error&) {
  }
  file.remove();
  return 0;
}
