// box: mean over a (2 radius + 1)^2 window with reflect-101 borders, as OpenCV's
// cv::blur(src, dst, Size(2r + 1, 2r + 1), Point(-1, -1), BORDER_REFLECT_101). Running sums
// (vertical, then horizontal; on GPUs column walks and prefix sums along rows in local memory,
// one launch) make the work per pixel independent of the radius; on GPUs small radii sum
// directly in a tile.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "separable.hpp"
#include "tandem/device.hpp"
#include "tandem/error.hpp"
#include "tandem/filter.hpp"
#include "tandem/pointwise.hpp"

namespace tandem {
namespace {

// How long the walks are: rows for the vertical pass, pixels (a multiple of 4) for the
// horizontal one. A walk starts by summing its first window (2 radius + 1 loads); walks at least
// as long as the window keep the work per pixel independent of the radius. Per device:
//  - GPU: the window, or 32 when shorter: many short walks keep its thousands of lanes busy.
//  - CPU, vertical: the window, or 32 rows when shorter, as on GPUs. Walks of 32 rows up to
//    radius 96 (until 2026-11-27) began every 32 rows with 2 radius + 1 loads. In one process,
//    alternating frames of 1920x1080 (bench-results/2026-11-27-s25-box-cpu.txt), 32-row walks
//    against 128-row ones: PoCL on the H100 machine's 16 Xeon cores, with the horizontal step
//    of 5109c04, radius 1 0.78 ms against 0.92, radius 16 0.90 against 0.99, radius 64 1.55
//    against 1.31, radius 128 (257 rows either way) alike; on this project's VM (2 EPYC
//    cores), with the horizontal step before it, radius 2 alike, radius 16 4.3 against 3.8,
//    radius 64 4.7-6.9 against 4.0-6.2 (three runs). Short walks suit the Xeon (each step down
//    a column is a new page, so long walks miss the TLB), long ones the large radii; the
//    window's length is the compromise (33 rows at radius 16, where the VM ran 128 faster).
//  - CPU, horizontal: 256 pixels or the window; walks along a row stay on a few pages.
struct Walks {
  int rows;
  int pixels;
};

Walks walk_lengths(const Device& device, int radius) {
  const int window = 2 * radius + 1;
  auto multiple_of_4 = [](int n) { return (n + 3) / 4 * 4; };
  if (device.info().type == DeviceType::gpu) {
    return {std::max(32, window), multiple_of_4(std::max(32, window))};
  }
  return {std::max(32, window), multiple_of_4(std::max(256, window))};
}

/// The largest radius of the direct sums in the separable tile on GPUs: past it, box_sliding's
/// work per pixel, independent of the radius, is less.
constexpr int kMaxTiledRadius = 8;

/// The largest radius of the GPU's sliding schedule: its work-groups' 256 work-items walk down
/// the 128 + 2 radius columns they need, two each at most.
constexpr int kMaxSlideRadius = 128;

class Box final : public Filter {
 public:
  explicit Box(const Params& params) : radius_(params.integer("radius")) {}

  int halo() const override { return radius_; }
  bool fuses_epilogue() const override { return true; }

  void enqueue(BandContext& ctx, std::span<const DeviceImage> inputs,
               const DeviceImage& output) const override {
    const DeviceImage& in = inputs[0];
    if (ctx.schedule() == Schedule::tiles && in.format == PixelFormat::rgba8) {
      if (radius_ <= kMaxTiledRadius && separable::fits(ctx.device(), radius_)) {
        enqueue_tiled(ctx, in, output);
        return;
      }
      if (radius_ <= kMaxSlideRadius) {
        if (const std::optional<Slide> s = slide(ctx.device())) {
          enqueue_sliding(ctx, *s, in, output);
          return;
        }
      }
    }
    const int width = ctx.frame_width();
    const int rows = ctx.y1() - ctx.y0();
    const Walks walks = walk_lengths(ctx.device(), radius_);
    // Column sums: float (rgba32f) or uint (rgba8), 16 bytes a pixel; ushort (rgba8 up to
    // radius 128, kernels/box.cl), 8 bytes a pixel: rows then take the first half of the
    // image, at half its pitch in bytes and the same pitch in elements.
    const DeviceImage sums = ctx.scratch(this, 0, PixelFormat::rgba32f, ctx.y0(), rows);

    static const std::vector<std::string> kSources{"box.cl"};
    cl::Program program = ctx.program(
        kSources, "-DRADIUS=" + std::to_string(radius_) +
                      " -DPIXEL_RGBA8=" + (in.format == PixelFormat::rgba8 ? "1" : "0"));

    cl::Kernel vertical = ctx.kernel(program, "box_vertical");
    set_image_args(vertical, 0, in);
    set_image_args(vertical, 3, sums);
    vertical.setArg(6, ctx.frame_height());
    vertical.setArg(7, ctx.y0());
    vertical.setArg(8, ctx.y1());
    vertical.setArg(9, walks.rows);
    ctx.enqueue(vertical, static_cast<std::size_t>(width + 3) / 4,
                static_cast<std::size_t>(rows + walks.rows - 1) / walks.rows, "box vertical pass");

    cl::Kernel horizontal = ctx.kernel(program, "box_horizontal");
    set_image_args(horizontal, 0, sums);
    set_image_args(horizontal, 3, output);
    horizontal.setArg(6, width);
    horizontal.setArg(7, ctx.y0());
    horizontal.setArg(8, walks.pixels);
    ctx.set_epilogue_args(horizontal, 9);
    const int padded_width = (width + 3) / 4 * 4;
    ctx.enqueue(horizontal,
                static_cast<std::size_t>(padded_width + walks.pixels - 1) / walks.pixels,
                static_cast<std::size_t>(rows), "box horizontal pass");
  }

  // The direct sums of both passes in one launch through a local-memory tile
  // (kernels/separable.clh): at small radii, less work than starting running sums.
  void enqueue_tiled(BandContext& ctx, const DeviceImage& in, const DeviceImage& output) const {
    static const std::vector<std::string> kSources{"separable.clh", "box.cl"};
    std::string taps;
    for (int k = 0; k <= radius_; ++k) taps += k ? ",1" : "1";
    cl::Program program = ctx.program(
        kSources, "-DRADIUS=" + std::to_string(radius_) + " -DPIXEL_RGBA8=1 -DTAPS=" + taps);
    cl::Kernel kernel = ctx.kernel(program, "box_tiled");
    separable::set_band_args(kernel, ctx, in, output);
    ctx.enqueue(kernel, separable::grid(ctx), separable::group(), "box (tiled)");
  }

  // Past the tile's reach on GPUs: box_sliding, one launch per band. A work-group walks down the
  // column sums of kSlideWidth + 2 radius columns for its share of the band's rows and takes the
  // row sums out of prefix sums in local memory, a chunk of rows at a time (kernels/box.cl).
  // None where the device's work-groups or local memory are too small for it. Each walk first
  // sums a window of 2 radius + 1 rows, so longer walks start fewer of them: on the H100 at
  // 1080p, radius 64, 128 x 128 took 0.0365 ms, 128 x 64 0.0411, 128 x 32 0.0506, 64 x 64 0.0735
  // and 256 x 64 0.0712 (bench-results/2026-11-27-h100-s24-box-slide.txt).
  static constexpr int kSlideWidth = 128;
  static constexpr int kSlideGroup = 256;

  struct Slide {
    int span;   // TILE_SPAN
    int chunk;  // TILE_CHUNK
  };

  std::optional<Slide> slide(const Device& device) const {
    const int span = (kSlideWidth + 2 * radius_ + 7) / 8 * 8;
    const int segments = span / 8;
    if (device.info().max_work_group_size < static_cast<std::size_t>(kSlideGroup)) return {};
    // Local memory: per row of a chunk, span + span / 8 column sums and the segments' totals.
    const std::size_t row_bytes = sizeof(cl_uint4) * (span + span / 8 + segments);
    for (int chunk = 8; chunk >= 1; chunk /= 2) {
      if (chunk * segments <= kSlideGroup && chunk * row_bytes <= device.info().local_memory) {
        return Slide{span, chunk};
      }
    }
    return {};
  }

  // Whether box_sliding adds up a row's segment totals by warp shuffles (kernels/box.cl,
  // WARP_SCAN) rather than through local memory and a barrier: NVIDIA's GPUs, where a row's
  // segments fit a warp's 32 lanes. On the H100 at 1080p, radius 64: 0.0338 ms against 0.0365
  // (bench-results/2026-11-27-h100-s27-box-warp-scan.txt).
  static bool warp_scan(const Device& device, const Slide& slide) {
    const DeviceInfo& info = device.info();
    return info.type == DeviceType::gpu && info.vendor.find("NVIDIA") != std::string::npos &&
           slide.span / 8 <= 32 && slide.chunk * 32 <= kSlideGroup;
  }

  // Work-groups down the band (the kernel shares its rows out between them in whole chunks):
  // one wave of work-groups, one a compute unit, whatever the frame's height. A work-group's time
  // follows the rows it walks, and one of box_sliding's work-groups fills an H100
  // multiprocessor (155 registers a work-item). Radius 64 there: 3840x2160 took 0.1174-0.1184 ms
  // in 4 work-groups down (540 rows each, 120 in all) against 0.1266-0.1273 in 17 of 128 rows;
  // 1080p 0.0337-0.0340 in 8 (136 rows) against 0.0334-0.0337 in 128-row tiles (9, the last of
  // 56 rows), 0.0574 in 9 of 120 (135 in all: two whole waves), 0.0586 in 4
  // (bench-results/2026-11-27-h100-s28-box-groups-down.txt).
  static std::size_t groups_down(const Device& device, std::size_t across, int rows,
                                 const Slide& slide) {
    const std::size_t wave = std::max<std::size_t>(1, device.info().compute_units / across);
    const std::size_t chunks = static_cast<std::size_t>((rows + slide.chunk - 1) / slide.chunk);
    return std::max<std::size_t>(1, std::min(wave, chunks));
  }

  void enqueue_sliding(BandContext& ctx, const Slide& slide, const DeviceImage& in,
                       const DeviceImage& output) const {
    static const std::vector<std::string> kSources{"box.cl"};
    cl::Program program =
        ctx.program(kSources, "-DRADIUS=" + std::to_string(radius_) +
                                  " -DPIXEL_RGBA8=1 -DTILE_W=" + std::to_string(kSlideWidth) +
                                  " -DTILE_SPAN=" + std::to_string(slide.span) +
                                  " -DTILE_CHUNK=" + std::to_string(slide.chunk) +
                                  " -DTILE_GROUP=" + std::to_string(kSlideGroup) +
                                  " -DWARP_SCAN=" + (warp_scan(ctx.device(), slide) ? "1" : "0"));
    cl::Kernel kernel = ctx.kernel(program, "box_sliding");
    separable::set_band_args(kernel, ctx, in, output);
    const auto groups = [](int n, int per) {
      return static_cast<std::size_t>((n + per - 1) / per);
    };
    const std::size_t across = groups(ctx.frame_width(), kSlideWidth);
    ctx.enqueue(kernel,
                cl::NDRange(across * kSlideGroup,
                            groups_down(ctx.device(), across, ctx.y1() - ctx.y0(), slide)),
                cl::NDRange(kSlideGroup, 1), "box (sliding)");
  }

  // Running sums in double: exact for 8-bit values, and far below the kernels' float error for
  // float frames.
  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    const Frame& in = *inputs[0];
    const bool u8 = in.format() == PixelFormat::rgba8;
    const int width = in.width();
    const int height = in.height();
    const int r = radius_;
    const std::size_t stride = static_cast<std::size_t>(width) * 4;
    auto value = [&](int y, std::size_t i) -> double {
      return u8 ? in.row(y)[i] : in.row_as<float>(y)[i];
    };

    // Column sums, walking down every column of a block of values.
    std::vector<double> columns(stride * height);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, stride, 256), [&](const auto& range) {
      std::vector<double> sum(range.size(), 0.0);
      for (std::size_t i = range.begin(); i != range.end(); ++i) {
        for (int k = -r; k <= r; ++k) sum[i - range.begin()] += value(reflect101(k, height), i);
      }
      for (int y = 0; y < height; ++y) {
        for (std::size_t i = range.begin(); i != range.end(); ++i) {
          double& s = sum[i - range.begin()];
          if (y > 0) {
            s += value(reflect101(y + r, height), i) - value(reflect101(y - 1 - r, height), i);
          }
          columns[y * stride + i] = s;
        }
      }
    });

    const double area = static_cast<double>(2 * r + 1) * (2 * r + 1);
    tbb::parallel_for(tbb::blocked_range<int>(0, height), [&](const auto& range) {
      for (int y = range.begin(); y != range.end(); ++y) {
        const double* row = &columns[y * stride];
        for (int c = 0; c < 4; ++c) {
          double s = 0;
          for (int k = -r; k <= r; ++k) s += row[4 * reflect101(k, width) + c];
          for (int x = 0; x < width; ++x) {
            if (x > 0) {
              s += row[4 * reflect101(x + r, width) + c];
              s -= row[4 * reflect101(x - 1 - r, width) + c];
            }
            if (u8) {
              const auto sum = static_cast<std::int64_t>(s);
              const auto n = static_cast<std::int64_t>(area);
              output.row(y)[4 * x + c] = static_cast<std::uint8_t>((sum + n / 2) / n);
            } else {
              output.row_as<float>(y)[4 * x + c] = static_cast<float>(s / area);
            }
          }
        }
      }
    });
  }

 private:
  int radius_;
};

FilterSpec describe_box() {
  return {
      .name = "box",
      .help =
          "Box blur: the mean of a square window (reflect-101 borders); as fast at any "
          "radius.",
      .params = {{.name = "radius",
                  .type = ParamType::integer,
                  .default_value = 2,
                  .min = 1,
                  .max = 256,
                  .help = "the window reaches this many pixels on each side (2 radius + 1 wide)"}},
      .make = [](const Params& p) { return std::make_unique<Box>(p); },
  };
}

TANDEM_REGISTER_FILTER(describe_box);

}  // namespace
}  // namespace tandem
