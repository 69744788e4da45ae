#include "tandem/process.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "tandem/error.hpp"

namespace tandem {

void process(Pipeline& pipeline, const void* input, std::size_t input_pitch, void* output,
             std::size_t output_pitch, int width, int height, PixelFormat format) {
  if (width <= 0 || height <= 0) {
    throw Error("process: image size " + std::to_string(width) + "x" + std::to_string(height) +
                " is out of range");
  }
  const Size size = pipeline.output_size({width, height});
  if (!(size == Size{width, height})) {
    throw Error("process: the graph makes " + to_string(size) + " images of " +
                to_string({width, height}) +
                " ones; process() writes images of the input's "
                "size (Pipeline::process() takes graphs that change it)");
  }
  const PixelFormat out_format = pipeline.output_format(format);
  const std::size_t in_row = static_cast<std::size_t>(width) * bytes_per_pixel(format);
  const std::size_t out_row = static_cast<std::size_t>(width) * bytes_per_pixel(out_format);
  if (!input || !output) throw Error("process: an image pointer is null");
  if (input_pitch < in_row || output_pitch < out_row) {
    throw Error("process: a pitch of " + std::to_string(std::min(input_pitch, output_pitch)) +
                " bytes is shorter than a row of " + std::to_string(width) + " pixels");
  }
  const auto* in_bytes = static_cast<const std::uint8_t*>(input);
  auto* out_bytes = static_cast<std::uint8_t*>(output);
  const auto rows = static_cast<std::size_t>(height);
  const bool overlap =
      in_bytes < out_bytes + output_pitch * rows && out_bytes < in_bytes + input_pitch * rows;
  // Kernels write whole groups of four pixels: only then does nothing past a row change.
  const bool whole_groups = width % 4 == 0;

  Frame in, out;
  if (whole_groups && !overlap && Frame::wrappable(input, width, format, input_pitch)) {
    // The pipeline only reads its input.
    in = Frame::wrap(const_cast<std::uint8_t*>(in_bytes), width, height, format, input_pitch);
  } else {
    in = pipeline.make_frame(width, height, format);
    for (int y = 0; y < height; ++y) std::memcpy(in.row(y), in_bytes + y * input_pitch, in_row);
  }
  const bool out_in_place =
      whole_groups && Frame::wrappable(output, width, out_format, output_pitch);
  out = out_in_place ? Frame::wrap(output, width, height, out_format, output_pitch)
                     : pipeline.make_frame(width, height, out_format);
  pipeline.process(in, out);
  if (!out_in_place) {
    for (int y = 0; y < height; ++y) std::memcpy(out_bytes + y * output_pitch, out.row(y), out_row);
  }
}

}  // namespace tandem
