// bilateral: edge-preserving smoothing. Each output pixel is the weighted mean of the pixels
// within radius = ceil(2 sigma_s) (a round window, dx^2 + dy^2 <= radius^2, as OpenCV's
// cv::bilateralFilter; reflect-101 borders), weighted by
//   w = exp(-(dx^2 + dy^2) / (2 sigma_s^2)) * exp(-|c - c0|^2 / (2 sigma_r^2)),
// |c - c0| the Euclidean distance of the RGB values normalised to 0..1 on 8-bit frames (as
// stored on float frames). Alpha passes through unchanged: the weights come from colour, and a
// matte smoothed with them would bleed across the very edges the filter keeps.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "tandem/error.hpp"
#include "tandem/filter.hpp"
#include "tandem/pointwise.hpp"

namespace tandem {
namespace {

std::string float_literal(float v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9ef", static_cast<double>(v));
  return text;
}

class Bilateral final : public Filter {
 public:
  explicit Bilateral(const Params& params)
      : radius_(static_cast<int>(std::ceil(2 * params["sigma_s"]))) {
    const double sigma_s = params["sigma_s"];
    const double sigma_r = params["sigma_r"];
    // exp(-x) = 2^(-x log2 e): the kernel multiplies once and calls exp2.
    const double log2e = 1.4426950408889634;
    for (int k = 0; k <= radius_; ++k) {
      spatial_.push_back(static_cast<float>(std::exp(-k * k / (2 * sigma_s * sigma_s))));
      int reach = 0;  // in integers: no root that lands a hair below a whole number
      while ((reach + 1) * (reach + 1) + k * k <= radius_ * radius_) ++reach;
      reach_.push_back(reach);
    }
    range_scale_rgba8_ = static_cast<float>(log2e / (2 * (255 * sigma_r) * (255 * sigma_r)));
    range_scale_rgba32f_ = static_cast<float>(log2e / (2 * sigma_r * sigma_r));
  }

  int halo() const override { return radius_; }
  bool fuses_epilogue() const override { return true; }

  void enqueue(BandContext& ctx, std::span<const DeviceImage> inputs,
               const DeviceImage& output) const override {
    const DeviceImage& in = inputs[0];
    const bool u8 = in.format == PixelFormat::rgba8;
    std::string options =
        "-DRADIUS=" + std::to_string(radius_) + " -DPIXEL_RGBA8=" + (u8 ? "1" : "0") +
        " -DRANGE_SCALE2=" + float_literal(u8 ? range_scale_rgba8_ : range_scale_rgba32f_);
    for (int k = 0; k <= radius_; ++k) {
      options += (k ? "," : " -DSPATIAL=") + float_literal(spatial_[k]);
    }
    for (int k = 0; k <= radius_; ++k) {
      options += (k ? "," : " -DREACH=") + std::to_string(reach_[k]);
    }

    // Pixels a work-item (kernels/bilateral.cl): 4 on GPUs (scalar lanes: 8 took 0.46 ms
    // against 0.34 on the H100), 16 elsewhere: a channel of all of them fills an AVX-512
    // register or two AVX2 ones (PoCL, 1080p: 24.5 ms against 40.4 with 8 and 55.2 with 4 on 16
    // AVX-512 cores; 300 against 348 ms with 8 on this project's 2-core AVX2 VM).
    const bool tiles = ctx.schedule() == Schedule::tiles;
    const int pixels = tiles ? 4 : 16;
    options += " -DPIXELS=" + std::to_string(pixels);
    // Within kMaxTileRadius GPUs run bilateral_tiled: the window out of a local-memory tile.
    const bool tiled = tiles && radius_ <= kMaxTileRadius;
    if (tiled) options += " -DBILATERAL_TILE=1";

    static const std::vector<std::string> kSources{"bilateral.cl"};
    cl::Program program = ctx.program(kSources, options);
    cl::Kernel kernel = ctx.kernel(program, tiled ? "bilateral_tiled" : "bilateral");
    set_image_args(kernel, 0, in);
    set_image_args(kernel, 3, output);
    kernel.setArg(6, ctx.frame_width());
    kernel.setArg(7, ctx.frame_height());
    kernel.setArg(8, ctx.y0());
    const auto width = static_cast<std::size_t>(ctx.frame_width());
    const auto rows = static_cast<std::size_t>(ctx.y1() - ctx.y0());
    if (tiled) {
      kernel.setArg(9, ctx.y1());
      ctx.set_epilogue_args(kernel, 10);
      const std::size_t groups = (width + 3) / 4;
      ctx.enqueue(kernel,
                  cl::NDRange((groups + kTileX - 1) / kTileX * kTileX,
                              (rows + kTileY - 1) / kTileY * kTileY),
                  cl::NDRange(kTileX, kTileY), "bilateral (tiled)");
      return;
    }
    ctx.set_epilogue_args(kernel, 9);
    ctx.enqueue(kernel, (width + pixels - 1) / pixels, rows, "bilateral");
  }

  // The kernel's arithmetic in its order, in float, with std::exp2 where it calls exp2.
  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    const Frame& in = *inputs[0];
    const bool u8 = in.format() == PixelFormat::rgba8;
    const float range_scale = u8 ? range_scale_rgba8_ : range_scale_rgba32f_;
    const int width = in.width();
    const int height = in.height();
    const int r = radius_;
    auto pixel = [&](int x, int y, float* v) {
      for (int c = 0; c < 4; ++c) {
        v[c] = u8 ? static_cast<float>(in.row(y)[4 * x + c]) : in.row_as<float>(y)[4 * x + c];
      }
    };
    tbb::parallel_for(tbb::blocked_range<int>(0, height), [&](const auto& range) {
      for (int y = range.begin(); y != range.end(); ++y) {
        for (int x = 0; x < width; ++x) {
          float centre[4];
          pixel(x, y, centre);
          float weights = 0;
          float sums[3] = {0, 0, 0};
          for (int dy = -r; dy <= r; ++dy) {
            const int ry = reflect101(y + dy, height);
            const int reach = reach_[std::abs(dy)];
            for (int dx = -reach; dx <= reach; ++dx) {
              float v[4];
              pixel(reflect101(x + dx, width), ry, v);
              float d[3];
              float dd[3];
              for (int c = 0; c < 3; ++c) {
                d[c] = v[c] - centre[c];
                dd[c] = d[c] * d[c];
              }
              const float distance2 = dd[0] + dd[1] + dd[2];
              const float w = spatial_[std::abs(dy)] * spatial_[std::abs(dx)] *
                              std::exp2(-distance2 * range_scale);
              weights += w;
              for (int c = 0; c < 3; ++c) sums[c] += w * d[c];
            }
          }
          for (int c = 0; c < 4; ++c) {
            const float out = c < 3 ? centre[c] + sums[c] / weights : centre[3];
            if (u8) {
              output.row(y)[4 * x + c] =
                  static_cast<std::uint8_t>(std::nearbyint(std::clamp(out, 0.0f, 255.0f)));
            } else {
              output.row_as<float>(y)[4 * x + c] = out;
            }
          }
        }
      }
    });
  }

 private:
  // bilateral_tiled's work-group (BT_GX x BT_GY) and reach: its tile of three float planes
  // takes 3 * (64 + 2 * 8) * (8 + 2 * 8) * 4 = 23,040 bytes at radius 8.
  static constexpr std::size_t kTileX = 16;
  static constexpr std::size_t kTileY = 8;
  static constexpr int kMaxTileRadius = 8;

  int radius_;
  std::vector<float> spatial_;  // exp(-k^2 / (2 sigma_s^2)) for k = 0 .. radius
  std::vector<int> reach_;      // the round window's half-width on row k = 0 .. radius
  float range_scale_rgba8_;
  float range_scale_rgba32f_;
};

FilterSpec describe_bilateral() {
  return {
      .name = "bilateral",
      .help =
          "Edge-preserving smoothing: a Gaussian blur whose weights also fall with the "
          "colour difference to the centre pixel (a round window of radius ceil(2 sigma_s), as "
          "OpenCV's); alpha unchanged.",
      .params = {{.name = "sigma_s",
                  .type = ParamType::real,
                  .default_value = 3,
                  .min = 0.5,
                  .max = 16,
                  .help =
                      "spatial standard deviation in pixels; the window reaches ceil(2 sigma_s)"},
                 {.name = "sigma_r",
                  .type = ParamType::real,
                  .default_value = 0.1,
                  .min = 0.01,
                  .max = 1,
                  .help = "range standard deviation in normalised intensity (0..1): colour "
                          "differences well above it are not smoothed across"}},
      .make = [](const Params& p) { return std::make_unique<Bilateral>(p); },
  };
}

TANDEM_REGISTER_FILTER(describe_bilateral);

}  // namespace
}  // namespace tandem
