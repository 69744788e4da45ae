#pragma once
// Running a pipeline on images in memory the caller owns, of any row pitch.
#include <cstddef>

#include "tandem/frame.hpp"
#include "tandem/pipeline.hpp"

namespace tandem {

/// Runs `pipeline` on `width` x `height` pixels of `format` at `input`, rows `input_pitch` bytes
/// apart, into `output`, rows `output_pitch` bytes apart, in pipeline.output_format(format).
/// Each image spans pitch * height bytes, and no byte of a row past its last pixel is touched.
/// Each image is used in place when Frame::wrappable() takes it and `width` is a multiple of 4
/// (the input also when the two overlap); otherwise its rows are copied through a frame of the
/// pipeline's own. Throws Error for a null image, a pitch shorter than a row, or a graph that
/// changes the size.
void process(Pipeline& pipeline, const void* input, std::size_t input_pitch, void* output,
             std::size_t output_pitch, int width, int height, PixelFormat format);

}  // namespace tandem
