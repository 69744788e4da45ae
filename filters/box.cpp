// box: mean over a (2 radius + 1)^2 window with reflect-101 borders, as OpenCV's
// cv::blur(src, dst, Size(2r + 1, 2r + 1), Point(-1, -1), BORDER_REFLECT_101). Running sums
// (vertical, then horizontal) make the work per pixel independent of the radius.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "tandem/error.hpp"
#include "tandem/filter.hpp"

namespace tandem {
namespace {

// Reflect-101 for any offset, as tandem_reflect101 in kernels/tandem.clh.
int reflect101(int i, int n) {
  const int period = std::max(2 * (n - 1), 1);
  i = std::abs(i) % period;
  return i >= n ? period - i : i;
}

// Length of the walks in rows (vertical) and pixels (horizontal): at least the window, so that
// starting a walk (2 radius + 1 loads) costs at most one more load per pixel; short enough for
// many work-items at small radii. A multiple of 4 for the horizontal walk's pixel groups.
int segment_length(int radius) { return (std::max(32, 2 * radius + 1) + 3) / 4 * 4; }

class Box final : public Filter {
 public:
  explicit Box(const Params& params) : radius_(params.integer("radius")) {}

  int halo() const override { return radius_; }

  void enqueue(BandContext& ctx, std::span<const DeviceImage> inputs,
               const DeviceImage& output) const override {
    const DeviceImage& in = inputs[0];
    const int width = ctx.frame_width();
    const int rows = ctx.y1() - ctx.y0();
    const int segment = segment_length(radius_);
    // Column sums: uint (rgba8) or float (rgba32f), 16 bytes a pixel either way.
    const DeviceImage sums = ctx.scratch(this, 0, PixelFormat::rgba32f, ctx.y0(), rows);

    static const std::vector<std::string> kSources{"box.cl"};
    cl::Program program =
        ctx.program(kSources, "-DRADIUS=" + std::to_string(radius_) + " -DPIXEL_RGBA8=" +
                                  (in.format == PixelFormat::rgba8 ? "1" : "0"));

    cl::Kernel vertical = ctx.kernel(program, "box_vertical");
    vertical.setArg(0, in.buffer);
    vertical.setArg(1, in.first_row);
    vertical.setArg(2, in.pitch_elements());
    vertical.setArg(3, sums.buffer);
    vertical.setArg(4, sums.first_row);
    vertical.setArg(5, sums.pitch_elements());
    vertical.setArg(6, ctx.frame_height());
    vertical.setArg(7, ctx.y0());
    vertical.setArg(8, ctx.y1());
    vertical.setArg(9, segment);
    ctx.enqueue(vertical, static_cast<std::size_t>(width + 3) / 4,
                static_cast<std::size_t>(rows + segment - 1) / segment, "box vertical pass");

    cl::Kernel horizontal = ctx.kernel(program, "box_horizontal");
    horizontal.setArg(0, sums.buffer);
    horizontal.setArg(1, sums.first_row);
    horizontal.setArg(2, sums.pitch_elements());
    horizontal.setArg(3, output.buffer);
    horizontal.setArg(4, output.first_row);
    horizontal.setArg(5, output.pitch_elements());
    horizontal.setArg(6, width);
    horizontal.setArg(7, ctx.y0());
    horizontal.setArg(8, segment);
    const int padded_width = (width + 3) / 4 * 4;
    ctx.enqueue(horizontal, static_cast<std::size_t>(padded_width + segment - 1) / segment,
                static_cast<std::size_t>(rows), "box horizontal pass");
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
            if (x > 0) s += row[4 * reflect101(x + r, width) + c] - row[4 * reflect101(x - 1 - r, width) + c];
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
      .help = "Box blur: the mean of a square window (reflect-101 borders); as fast at any "
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
