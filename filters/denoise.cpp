// denoise: non-local means, pixel-wise (kernels/denoise.cl): each pixel the mean of the pixels of
// its search window, weighted by how alike the patches around them are. The heavy filter of the
// set: (2 search + 1)^2 (2 patch + 1)^2 comparisons a pixel. OpenCV's
// fastNlMeansDenoisingColored is the same idea with other details (it works in CIELAB, and its
// weights come from a table of the mean squared difference).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "tandem/device.hpp"
#include "tandem/filter.hpp"
#include "tandem/pointwise.hpp"

namespace tandem {
namespace {

class Denoise final : public Filter {
 public:
  explicit Denoise(const Params& params)
      : strength_(params["strength"]),
        patch_(params.integer("patch")),
        search_(params.integer("search")) {}

  int halo() const override { return search_ + patch_; }

  void enqueue(BandContext& ctx, std::span<const DeviceImage> inputs,
               const DeviceImage& output) const override {
    const DeviceImage& in = inputs[0];
    const bool u8 = in.format == PixelFormat::rgba8;
    // Hexadecimal float literals: the kernel's constant is the reference's to the bit.
    char constant[64];
    std::snprintf(constant, sizeof constant, " -DINV_H2=%af", static_cast<double>(inverse_h2(u8)));
    static const std::vector<std::string> kSources{"denoise.cl"};
    cl::Program program = ctx.program(
        kSources, "-DSEARCH=" + std::to_string(search_) + " -DPATCH=" + std::to_string(patch_) +
                      " -DPIXEL_RGBA8=" + (u8 ? "1" : "0") + constant);
    // CPUs on 8 bits: blocks of four pixels by four rows a work-item (kernels/denoise.cl).
    const bool blocks = u8 && ctx.schedule() != Schedule::tiles;
    cl::Kernel kernel = ctx.kernel(program, blocks ? "denoise_blocks4" : "denoise_nlm");
    set_image_args(kernel, 0, in);
    set_image_args(kernel, 3, output);
    kernel.setArg(6, ctx.frame_width());
    kernel.setArg(7, ctx.frame_height());
    kernel.setArg(8, ctx.y0());
    if (blocks) kernel.setArg(9, ctx.y1());
    const std::size_t step = blocks ? 4 : 1;  // pixels and rows a work-item
    const std::size_t width = static_cast<std::size_t>(ctx.frame_width());
    const std::size_t rows = static_cast<std::size_t>(ctx.y1() - ctx.y0());
    ctx.enqueue(kernel, (width + step - 1) / step, (rows + step - 1) / step,
                "denoise (non-local means)");
  }

  // The kernel's arithmetic in its order, with its mad() taken as fused multiply-adds.
  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    const Frame& in = *inputs[0];
    const bool u8 = in.format() == PixelFormat::rgba8;
    const int width = in.width(), height = in.height();
    const float inv_h2 = inverse_h2(u8);
    auto at = [&](int y, int x, int c) {
      y = reflect101(y, height);
      x = reflect101(x, width);
      return u8 ? static_cast<float>(in.row(y)[4 * x + c]) : in.row_as<float>(y)[4 * x + c];
    };
    tbb::parallel_for(tbb::blocked_range<int>(0, height), [&](const auto& rows) {
      for (int y = rows.begin(); y != rows.end(); ++y) {
        for (int x = 0; x < width; ++x) {
          float acc[4] = {0, 0, 0, 0};
          float total = 0;
          for (int dy = -search_; dy <= search_; ++dy) {
            for (int dx = -search_; dx <= search_; ++dx) {
              float d2 = 0;
              for (int py = -patch_; py <= patch_; ++py) {
                for (int px = -patch_; px <= patch_; ++px) {
                  float d[3];
                  for (int c = 0; c < 3; ++c) {
                    d[c] = at(y + py, x + px, c) - at(y + dy + py, x + dx + px, c);
                  }
                  d2 = std::fma(d[0], d[0], std::fma(d[1], d[1], std::fma(d[2], d[2], d2)));
                }
              }
              const float w = std::exp(-d2 * inv_h2);
              for (int c = 0; c < 4; ++c) acc[c] = std::fma(w, at(y + dy, x + dx, c), acc[c]);
              total += w;
            }
          }
          for (int c = 0; c < 4; ++c) {
            const float v = c < 3 ? acc[c] / total : at(y, x, 3);
            if (u8) {
              output.row(y)[4 * x + c] =
                  static_cast<std::uint8_t>(std::clamp(std::nearbyint(v), 0.0f, 255.0f));
            } else {
              output.row_as<float>(y)[4 * x + c] = v;
            }
          }
        }
      }
    });
  }

 private:
  // 1 / (h^2 * 3 * patch area), h in the frame's units: levels, or levels / 255 for floats.
  float inverse_h2(bool u8) const {
    const double h = u8 ? strength_ : strength_ / 255;
    const double area = (2.0 * patch_ + 1) * (2.0 * patch_ + 1);
    return static_cast<float>(1 / (h * h * 3 * area));
  }

  double strength_;
  int patch_;
  int search_;
};

FilterSpec describe_denoise() {
  return {
      .name = "denoise",
      .help =
          "Non-local means: each pixel the mean of the pixels of its search window, weighted "
          "by how alike the patches around them are (alpha kept). Heavy: (2 search + 1)^2 "
          "(2 patch + 1)^2 comparisons a pixel.",
      .params = {{.name = "strength",
                  .type = ParamType::real,
                  .default_value = 10,
                  .min = 0,
                  .max = 255,
                  .help = "the mean difference per channel, in 8-bit levels, at which a patch's "
                          "weight falls to 1/e (about the noise's deviation)",
                  .min_exclusive = true},
                 {.name = "patch",
                  .type = ParamType::integer,
                  .default_value = 1,
                  .min = 0,
                  .max = 5,
                  .help = "patch radius: patches are 2 patch + 1 pixels wide"},
                 {.name = "search",
                  .type = ParamType::integer,
                  .default_value = 5,
                  .min = 1,
                  .max = 15,
                  .help = "search radius: the window is 2 search + 1 pixels wide"}},
      .make = [](const Params& p) { return std::make_unique<Denoise>(p); },
  };
}

TANDEM_REGISTER_FILTER(describe_denoise);

}  // namespace
}  // namespace tandem
