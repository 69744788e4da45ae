// unsharp: sharpens by adding `amount` times the difference between each pixel and the mean of
// its (2 radius + 1)^2 window (reflect-101 borders), as FFmpeg's unsharp does with its default
// 5x5 window and amount 1. A stencil whose last kernel runs the point-wise chain after it
// (kernels/unsharp.cl); on GPUs one launch through a local-memory tile.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "separable.hpp"
#include "tandem/device.hpp"
#include "tandem/filter.hpp"
#include "tandem/pointwise.hpp"

namespace tandem {
namespace {

class Unsharp final : public Filter {
 public:
  explicit Unsharp(const Params& params)
      : amount_(static_cast<float>(params["amount"])),
        radius_(params.integer("radius")),
        inverse_area_(1.0f / static_cast<float>((2 * radius_ + 1) * (2 * radius_ + 1))) {
    // Hexadecimal float literals: the kernel's constants are the host's to the bit.
    char constants[96];
    std::snprintf(constants, sizeof constants, " -DAMOUNT=%af -DINV_AREA=%af",
                  static_cast<double>(amount_), static_cast<double>(inverse_area_));
    options_ = "-DRADIUS=" + std::to_string(radius_) + constants;
  }

  int halo() const override { return radius_; }
  bool fuses_epilogue() const override { return true; }

  void enqueue(BandContext& ctx, std::span<const DeviceImage> inputs,
               const DeviceImage& output) const override {
    const DeviceImage& in = inputs[0];
    if (ctx.schedule() == Schedule::tiles && in.format == PixelFormat::rgba8 &&
        separable::fits(ctx.device(), radius_)) {
      static const std::vector<std::string> kSources{"separable.clh", "unsharp.cl"};
      std::string taps;
      for (int k = 0; k <= radius_; ++k) taps += k ? ",1" : "1";
      cl::Program program = ctx.program(kSources, options_ + " -DPIXEL_RGBA8=1 -DTAPS=" + taps);
      cl::Kernel kernel = ctx.kernel(program, "unsharp_tiled");
      separable::set_band_args(kernel, ctx, in, output);
      ctx.enqueue(kernel, separable::grid(ctx), separable::group(), "unsharp (tiled)");
      return;
    }
    const int rows = ctx.y1() - ctx.y0();
    const std::size_t groups = static_cast<std::size_t>(ctx.frame_width() + 3) / 4;
    static const std::vector<std::string> kSources{"unsharp.cl"};
    cl::Program program = ctx.program(
        kSources, options_ + " -DPIXEL_RGBA8=" + (in.format == PixelFormat::rgba8 ? "1" : "0"));
    // CPUs: both passes in one launch, a row's column sums in local memory.
    const std::size_t line_bytes = sizeof(cl_float4) * (4 * groups + 2 * radius_);
    if (ctx.device().info().type == DeviceType::cpu &&
        line_bytes <= ctx.device().info().local_memory) {
      cl::Kernel lines = ctx.kernel(program, "unsharp_lines");
      set_image_args(lines, 0, in);
      set_image_args(lines, 3, output);
      lines.setArg(6, ctx.frame_width());
      lines.setArg(7, ctx.frame_height());
      lines.setArg(8, ctx.y0());
      lines.setArg(9, cl::Local(line_bytes));
      ctx.set_epilogue_args(lines, 10);
      ctx.enqueue(lines, cl::NDRange(static_cast<std::size_t>(rows)), cl::NDRange(1),
                  "unsharp (lines)");
      return;
    }
    // The column sums of the band's rows: float, 16 bytes a pixel.
    const DeviceImage sums = ctx.scratch(this, 0, PixelFormat::rgba32f, ctx.y0(), rows);

    cl::Kernel vertical = ctx.kernel(program, "unsharp_vertical");
    set_image_args(vertical, 0, in);
    set_image_args(vertical, 3, sums);
    vertical.setArg(6, ctx.frame_height());
    vertical.setArg(7, ctx.y0());
    ctx.enqueue(vertical, groups, static_cast<std::size_t>(rows), "unsharp vertical sums");

    cl::Kernel horizontal = ctx.kernel(program, "unsharp_horizontal");
    set_image_args(horizontal, 0, sums);
    set_image_args(horizontal, 3, in);
    set_image_args(horizontal, 6, output);
    horizontal.setArg(9, ctx.frame_width());
    horizontal.setArg(10, ctx.y0());
    ctx.set_epilogue_args(horizontal, 11);
    ctx.enqueue(horizontal, groups, static_cast<std::size_t>(rows), "unsharp horizontal pass");
  }

  // The kernels' arithmetic in their order: column sums (centre, then the pairs at +-k), row
  // sums of those likewise, then in + amount * (in - sum / area) with one rounding for the
  // multiply-add; 8-bit results rounded to nearest, ties to even, and saturated.
  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    const Frame& in = *inputs[0];
    const bool u8 = in.format() == PixelFormat::rgba8;
    const int width = in.width();
    const int height = in.height();
    const std::size_t stride = static_cast<std::size_t>(width) * 4;
    auto value = [&](int y, std::size_t i) {
      return u8 ? static_cast<float>(in.row(y)[i]) : in.row_as<float>(y)[i];
    };
    std::vector<float> columns(stride * height);
    tbb::parallel_for(tbb::blocked_range<int>(0, height), [&](const auto& range) {
      for (int y = range.begin(); y != range.end(); ++y) {
        for (std::size_t i = 0; i < stride; ++i) {
          float sum = value(y, i);
          for (int k = 1; k <= radius_; ++k) {
            sum += value(reflect101(y - k, height), i) + value(reflect101(y + k, height), i);
          }
          columns[y * stride + i] = sum;
        }
      }
    });
    tbb::parallel_for(tbb::blocked_range<int>(0, height), [&](const auto& range) {
      for (int y = range.begin(); y != range.end(); ++y) {
        const float* row = &columns[y * stride];
        for (int x = 0; x < width; ++x) {
          for (int c = 0; c < 4; ++c) {
            float sum = row[4 * x + c];
            for (int k = 1; k <= radius_; ++k) {
              sum += row[4 * reflect101(x - k, width) + c] + row[4 * reflect101(x + k, width) + c];
            }
            const float v = value(y, 4 * static_cast<std::size_t>(x) + c);
            const float out = std::fma(amount_, v - sum * inverse_area_, v);
            if (u8) {
              output.row(y)[4 * x + c] =
                  static_cast<std::uint8_t>(std::clamp(std::nearbyint(out), 0.0f, 255.0f));
            } else {
              output.row_as<float>(y)[4 * x + c] = out;
            }
          }
        }
      }
    });
  }

 private:
  float amount_;
  int radius_;
  float inverse_area_;
  std::string options_;
};

FilterSpec describe_unsharp() {
  return {
      .name = "unsharp",
      .help =
          "Sharpens (or, with a negative amount, blurs): each pixel plus amount times its "
          "difference from the mean of its square window, as FFmpeg's unsharp.",
      .params = {{.name = "amount",
                  .type = ParamType::real,
                  .default_value = 1,
                  .min = -2,
                  .max = 5,
                  .help = "how much of the difference is added (0 leaves the image)"},
                 {.name = "radius",
                  .type = ParamType::integer,
                  .default_value = 2,
                  .min = 1,
                  .max = 11,
                  .help = "the window reaches this many pixels on each side (2 radius + 1 wide; "
                          "FFmpeg's default 5x5 is 2)"}},
      .make = [](const Params& p) { return std::make_unique<Unsharp>(p); },
  };
}

TANDEM_REGISTER_FILTER(describe_unsharp);

}  // namespace
}  // namespace tandem
