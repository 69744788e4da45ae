// overlay: a second picture blended over the frame at (x, y) by its alpha, as FFmpeg's overlay:
// the graph's second input ([main][logo]overlay=x=10:y=10, any size, such as a scaled copy of
// the frame), or a file's picture (overlay=file=logo.png, read by tandem_io and held in device
// memory once per device). A band of output rows reads the picture's rows that fall in it.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "file_cache.hpp"
#include "tandem/device.hpp"
#include "tandem/error.hpp"
#include "tandem/filter.hpp"
#include "tandem/image_files.hpp"
#include "tandem/pointwise.hpp"

namespace tandem {
namespace {

// A file's picture, normalised R, G, B, A floats.
struct Picture {
  int width = 0, height = 0;
  std::vector<float> rgba;
  std::uint64_t version = 0;
};

std::shared_ptr<const Picture> read_picture(const std::string& path) {
  const Frame frame = read_image_file(path);
  auto picture = std::make_shared<Picture>();
  picture->width = frame.width();
  picture->height = frame.height();
  picture->rgba.resize(static_cast<std::size_t>(frame.width()) * frame.height() * 4);
  for (int y = 0; y < frame.height(); ++y) {
    for (int x = 0; x < frame.width(); ++x) {
      const Pixel p = load_pixel(frame, x, y);
      float* out = &picture->rgba[(static_cast<std::size_t>(y) * frame.width() + x) * 4];
      out[0] = p.r, out[1] = p.g, out[2] = p.b, out[3] = p.a;
    }
  }
  picture->version = file_cache::next_version();
  return picture;
}

// The kernel's blend (kernels/overlay.cl), its fma()s as std::fma.
Pixel blend_over(Pixel m, Pixel o) {
  return {std::fma(o.a, o.r - m.r, m.r), std::fma(o.a, o.g - m.g, m.g),
          std::fma(o.a, o.b - m.b, m.b), std::fma(m.a, 1.0f - o.a, o.a)};
}

class Overlay final : public Filter {
 public:
  explicit Overlay(const Params& params) : x_(params.integer("x")), y_(params.integer("y")) {
    const std::string& file = params.text("file");
    if (!file.empty()) picture_ = file_cache::load<Picture>(file, read_picture);
  }

  Size output_size(std::span<const Size> inputs) const override { return inputs.front(); }

  RowRange input_rows(RowRange rows, int input, Size in, Size out) const override {
    if (input == 0) return Filter::input_rows(rows, input, in, out);
    const RowRange r{std::clamp(rows.lo - y_, 0, in.height),
                     std::clamp(rows.hi - y_, 0, in.height)};
    return r.empty() ? RowRange{} : r;
  }

  bool fuses_epilogue() const override { return true; }

  void enqueue(BandContext& ctx, std::span<const DeviceImage> inputs,
               const DeviceImage& output) const override {
    const DeviceImage& in = inputs[0];
    static const std::vector<std::string> kSources{"overlay.cl"};
    // CPUs take 8-bit frames sixteen pixels a work-item (kernels/overlay.cl): PoCL, 2 cores,
    // 1080p picture in picture, kernel 0.52-0.56 ms in three runs of four (1.00 in the other),
    // where copying four a work-item took 0.53-1.21 and converting every pixel 1.78-1.90
    // (bench-results/2026-11-29-vm-s38-overlay.txt).
    const bool u8 = in.format == PixelFormat::rgba8;
    const int group = u8 && ctx.device().info().type != DeviceType::gpu ? 16 : 4;
    cl::Program program = ctx.program(
        kSources, "-DPIXEL_RGBA8=" + std::string(u8 ? "1" : "0") +
                      " -DFROM_FILE=" + (picture_ ? "1" : "0") +
                      " -DGROUP=" + std::to_string(group));
    cl::Kernel kernel = ctx.kernel(program, "overlay");
    cl_uint arg = set_image_args(kernel, 0, in);
    arg = set_image_args(kernel, arg, output);
    kernel.setArg(arg++, ctx.y0());
    int width = 0, height = 0;
    if (picture_) {
      kernel.setArg(arg++, ctx.constant(this, 0, picture_->rgba.data(),
                                        picture_->rgba.size() * sizeof(float), picture_->version));
      kernel.setArg(arg++, 0);
      kernel.setArg(arg++, picture_->width);
      width = picture_->width, height = picture_->height;
    } else {
      // No row of the picture falls in this band: the frame's buffer stands in, never read.
      const DeviceImage& over = inputs[1];
      kernel.setArg(arg++, over.rows > 0 ? over.buffer : in.buffer);
      kernel.setArg(arg++, over.first_row);
      kernel.setArg(arg++, over.pitch_elements());
      width = over.width, height = over.height;
    }
    kernel.setArg(arg++, x_);
    kernel.setArg(arg++, y_);
    kernel.setArg(arg++, width);
    kernel.setArg(arg++, height);
    ctx.set_epilogue_args(kernel, arg);
    ctx.enqueue(kernel, static_cast<std::size_t>((ctx.frame_width() + group - 1) / group),
                static_cast<std::size_t>(ctx.y1() - ctx.y0()), "overlay");
  }

  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    const Frame& main = *inputs[0];
    const Frame* over = inputs.size() > 1 ? inputs[1] : nullptr;
    const int ow = over ? over->width() : picture_->width;
    const int oh = over ? over->height() : picture_->height;
    auto over_pixel = [&](int x, int y) {
      if (over) return load_pixel(*over, x, y);
      const float* p = &picture_->rgba[(static_cast<std::size_t>(y) * ow + x) * 4];
      return Pixel{p[0], p[1], p[2], p[3]};
    };
    for (int y = 0; y < main.height(); ++y) {
      for (int x = 0; x < main.width(); ++x) {
        Pixel px = load_pixel(main, x, y);
        const int ox = x - x_, oy = y - y_;
        if (ox >= 0 && ox < ow && oy >= 0 && oy < oh) px = blend_over(px, over_pixel(ox, oy));
        store_pixel(output, x, y, px);
      }
    }
  }

 private:
  int x_, y_;
  std::shared_ptr<const Picture> picture_;
};

FilterSpec describe_overlay() {
  return {
      .name = "overlay",
      .help =
          "Blends a picture over the frame at x, y by the picture's alpha, as FFmpeg's "
          "overlay: the second input ([main][pic]overlay=x=8:y=8), or file= an image file.",
      .params = {{.name = "x",
                  .type = ParamType::integer,
                  .min = -65536,
                  .max = 65536,
                  .help = "column of the picture's left edge in the frame"},
                 {.name = "y",
                  .type = ParamType::integer,
                  .min = -65536,
                  .max = 65536,
                  .help = "row of the picture's top edge in the frame"},
                 {.name = "file",
                  .type = ParamType::text,
                  .help = "an image file to blend, instead of a second input"}},
      .inputs = 2,
      .make = [](const Params& p) { return std::make_unique<Overlay>(p); },
      .inputs_for = [](const Params& p) { return p.text("file").empty() ? 2 : 1; },
  };
}

TANDEM_REGISTER_FILTER(describe_overlay);

}  // namespace
}  // namespace tandem
