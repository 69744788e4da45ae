// crop: the w x h rectangle of the input at x, y, as FFmpeg's crop=w:h:x:y (by default the
// input's size, centred). A size change: output row y reads input row y + top alone, so a band
// uploads and computes just its rows of the rectangle. One launch per band; a point-wise chain
// after it runs in its kernel (kernels/crop.cl).
#include <cstring>
#include <string>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "tandem/device.hpp"
#include "tandem/error.hpp"
#include "tandem/filter.hpp"

#include "size_expressions.hpp"

namespace tandem {
namespace {

class Crop final : public Filter {
 public:
  explicit Crop(const Params& params) : sizes_(params, SizeRounding::nearest, true) {}

  PixelFormat output_format(std::span<const PixelFormat> inputs) const override {
    if (inputs.size() != 1) throw Error("crop takes one input");
    if (is_planar(inputs[0])) {
      throw Error("crop takes rgba8 or rgba32f frames, not " + std::string(to_string(inputs[0])));
    }
    return inputs[0];
  }

  Size output_size(std::span<const Size> inputs) const override {
    if (inputs.size() != 1) throw Error("crop takes one input");
    const Rect r = rect(inputs[0]);
    return {r.width, r.height};
  }

  RowRange input_rows(RowRange rows, int, Size in, Size) const override {
    const int top = rect(in).top;
    return {rows.lo + top, rows.hi + top};
  }

  bool fuses_epilogue() const override { return true; }

  void enqueue(BandContext& ctx, std::span<const DeviceImage> inputs,
               const DeviceImage& output) const override {
    const DeviceImage& in = inputs[0];
    const Rect r = rect({in.width, in.height});
    const bool u8 = in.format == PixelFormat::rgba8;
    // 8-bit rows of the rectangle that start on a group of four load a group as one 16-byte
    // word on CPUs: PoCL (16 cores, 4K) cropped in 0.41-0.51 ms so, 0.74-0.79 ms a pixel a load.
    // Not on GPUs, where four 4-byte loads a work-item ran faster (H200, 8K: 0.066 against
    // 0.075 ms).
    // Where they start on a group of sixteen, sixteen pixels in one 64-byte load: PoCL, 2 cores,
    // crop=1280:720:320:180 of 1080p, the two kernels interleaved 200 times in one process, three
    // runs: medians 0.25-0.27 ms against 0.34-0.43 (bench-results/2026-11-27-vm-s24-crop16.txt).
    const bool cpu = u8 && ctx.device().info().type != DeviceType::gpu;
    const int wide = !cpu ? 0 : r.left % 16 == 0 ? 16 : r.left % 4 == 0 ? 4 : 0;
    const int group = wide == 16 ? 16 : 4;
    static const std::vector<std::string> kSources{"crop.cl"};
    // A crop that is the graph's output stores those groups, whole cache lines, without reading
    // the lines first (non-temporal stores on PoCL's CPU devices): 2 cores, the same crop, the
    // two builds alternated in three rounds: kernel 0.36-0.43 ms against 0.48-0.59, OpenCV's
    // frame over tandem's 1.20-1.29x against 0.85-1.05x
    // (bench-results/2026-11-28-vm-s31-crop-streamed.txt).
    const bool stream = wide == 16 && ctx.streams_output() && !ctx.epilogue();
    cl::Program program = ctx.program(
        kSources, std::string("-DPIXEL_RGBA8=") + (u8 ? "1" : "0") + " -DWIDE_LOADS=" +
                      std::to_string(wide) + (stream ? " -DTANDEM_STREAM_STORES=1" : ""));
    cl::Kernel kernel = ctx.kernel(program, "crop");
    set_image_args(kernel, 0, in);
    set_image_args(kernel, 3, output);
    kernel.setArg(6, ctx.frame_width());
    kernel.setArg(7, r.left);
    kernel.setArg(8, r.top);
    kernel.setArg(9, ctx.y0());
    ctx.set_epilogue_args(kernel, 10);
    ctx.enqueue(kernel, static_cast<std::size_t>((ctx.frame_width() + group - 1) / group),
                static_cast<std::size_t>(ctx.y1() - ctx.y0()), "crop");
  }

  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    const Frame& in = *inputs[0];
    const Rect r = rect({in.width(), in.height()});
    const std::size_t bytes = bytes_per_pixel(in.format());
    tbb::parallel_for(tbb::blocked_range<int>(0, r.height), [&](const auto& range) {
      for (int y = range.begin(); y != range.end(); ++y) {
        std::memcpy(output.row(y), in.row(y + r.top) + r.left * bytes, r.width * bytes);
      }
    });
  }

 private:
  struct Rect {
    int left, top, width, height;
  };

  // The rectangle in an input of `in`: 0 (or -1) sizes are the input's, -1 places it centred.
  Rect rect(Size in) const {
    const SizeExpressions::Values v = sizes_.evaluate(in);
    Rect r;
    r.width = static_cast<int>(v.w);
    r.height = static_cast<int>(v.h);
    r.left = v.x == -1 ? (in.width - r.width) / 2 : static_cast<int>(v.x);
    r.top = v.y == -1 ? (in.height - r.height) / 2 : static_cast<int>(v.y);
    if (r.left < 0 || r.top < 0 || r.left + r.width > in.width || r.top + r.height > in.height) {
      throw Error(to_string(Size{r.width, r.height}) + " at " + std::to_string(r.left) + "," +
                  std::to_string(r.top) + " leaves the " + to_string(in) + " input");
    }
    return r;
  }

  SizeExpressions sizes_;
};

FilterSpec describe_crop() {
  constexpr double kLargest = 1 << 16;
  const std::string kExpressions = " (or an expression: iw/2, ih*4/3)";
  return {
      .name = "crop",
      .help =
          "Cuts the w x h rectangle at x, y out of the input, as FFmpeg's crop (by default "
          "the input's size, centred).",
      .params = {size_param("w", "iw", -1, kLargest,
                            "width of the rectangle (0 or -1: the input's)" + kExpressions),
                 size_param("h", "ih", -1, kLargest,
                            "height of the rectangle (0 or -1: the input's)" + kExpressions),
                 size_param("x", "(iw-ow)/2", -1, kLargest,
                            "column of its left edge (-1: centred)" + kExpressions),
                 size_param("y", "(ih-oh)/2", -1, kLargest,
                            "row of its top edge (-1: centred)" + kExpressions)},
      .make = [](const Params& p) { return std::make_unique<Crop>(p); },
  };
}

TANDEM_REGISTER_FILTER(describe_crop);

}  // namespace
}  // namespace tandem
