// gaussian: separable Gaussian blur with reflect-101 borders, matching OpenCV's
// cv::GaussianBlur(src, dst, Size(0, 0), sigma, sigma, BORDER_REFLECT_101), in two passes
// (vertical, then horizontal: through a float scratch image of the band's rows, a row at a time
// through local memory on CPUs on rgba8, or through a local-memory tile on GPUs):
//  - rgba8: OpenCV's kernel size for 8-bit images, ksize = cvRound(6 sigma + 1) | 1, and its
//    8-bit weights: the bit-exact Gaussian (getGaussianKernelBitExact) quantised to multiples
//    of 1/256 with error diffusion (getGaussianKernelFixedPoint_ED). With such weights every
//    sum of both passes is exact in float (in either order), so the result is OpenCV's to the
//    bit (rounded half up, as its fixed-point code does). Plain float weights differ from it
//    by up to 2 LSB at sigma 12.
//  - rgba32f: OpenCV's rule for float images, ksize = cvRound(8 sigma + 1) | 1, with the
//    Gaussian's float weights.
//  - Y'CbCr 4:2:0 planes (yuv420p, yuv420p10, yuv420p12; works_on_planes()): each plane on its own with the 8-bit
//    weights, Y' with sigma and the 4:2:0 chroma planes, half as wide and high, with sigma / 2,
//    so that the blur reaches as far across the picture in every plane. An 8-bit plane gets
//    OpenCV's GaussianBlur of it to the bit. This is not the RGB blur converted: chroma is blurred
//    at its own resolution, and nothing is clipped to R'G'B' in between.
// The weights and the radius are compile-time constants of the kernels, so the loops unroll.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
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

// One side of a symmetric kernel: weights[0] is the centre, weights[k] the taps at +-k.
struct Taps {
  int radius = 0;
  std::vector<float> weights;
};

// OpenCV's getGaussianKernelBitExact for sigma > 0 (in double arithmetic rather than its
// softdouble; the two agree far below what moves a weight's 1/256 rounding).
std::vector<double> opencv_gaussian(int n, double sigma) {
  const double scale = -0.125 / (sigma * sigma);  // x runs over 2 * (i - centre)
  const int half = (n - 1) / 2;
  std::vector<double> values(half);
  double sum = 0;
  for (int i = 0, x = 1 - n; i < half; ++i, x += 2) {
    values[i] = std::exp(static_cast<double>(x * x) * scale);
    sum += values[i];
  }
  sum = sum * 2 + 1;
  const double centre = 1 / sum;
  std::vector<double> kernel(n);
  for (int i = 0; i < half; ++i) kernel[i] = kernel[n - 1 - i] = values[i] * centre;
  kernel[half] = centre;
  return kernel;
}

// cvRound: to nearest, ties to even.
int cv_round(double v) {
  return static_cast<int>(std::nearbyint(v));
}

Taps taps_rgba8(double sigma) {
  const int n = cv_round(sigma * 3 * 2 + 1) | 1;
  const std::vector<double> kernel = opencv_gaussian(n, sigma);
  // getGaussianKernelFixedPoint_ED with 8 fraction bits: the rounding error of each tap is
  // carried to the next, and the centre takes what makes the sum exactly 256.
  const int half = n / 2;
  std::vector<int> q(n);
  double error = 0;
  int sum = 0;
  for (int i = 0; i < half; ++i) {
    const double adjusted = kernel[i] * 256 + error;
    q[i] = cv_round(adjusted);
    q[n - 1 - i] = q[i];  // symmetric
    error = adjusted - q[i];
    sum += q[i];
  }
  q[half] = 256 - 2 * sum;
  Taps taps{half, {}};
  for (int k = 0; k <= half; ++k) taps.weights.push_back(static_cast<float>(q[half + k]) / 256.0f);
  return taps;
}

Taps taps_rgba32f(double sigma) {
  const int n = cv_round(sigma * 4 * 2 + 1) | 1;
  const std::vector<double> kernel = opencv_gaussian(n, sigma);
  Taps taps{n / 2, {}};
  for (int k = 0; k <= n / 2; ++k) taps.weights.push_back(static_cast<float>(kernel[n / 2 + k]));
  return taps;
}

std::string program_options(const Taps& taps, PixelFormat format) {
  std::string options = "-DRADIUS=" + std::to_string(taps.radius) +
                        " -DPIXEL_RGBA8=" + (format == PixelFormat::rgba8 ? "1" : "0") +
                        " -DWEIGHTS=";
  for (std::size_t k = 0; k < taps.weights.size(); ++k) {
    char literal[32];
    std::snprintf(literal, sizeof literal, "%s%.9ef", k ? "," : "",
                  static_cast<double>(taps.weights[k]));
    options += literal;
  }
  return options;
}

// Vertical pass rows per work-item; see GAUSSIAN_VROWS in kernels/gaussian.cl.
int vertical_rows_per_item(const Device& device) {
  return device.info().type == DeviceType::gpu ? 4 : 1;
}

// -D<name>=: the 8-bit weights as the integers they are multiples of 1/256 of (TAPS for the
// tiled schedule, ROW_TAPS for the rows schedule's vertical pass on CPUs).
std::string integer_taps(const Taps& taps, const char* name = "TAPS") {
  std::string list;
  for (float w : taps.weights) {
    if (!list.empty()) list += ',';
    list += std::to_string(std::lround(w * 256));
  }
  return std::string(" -D") + name + "=" + list;
}

// The program options of the plane kernels of the rows schedule for `taps` on samples of `bits`.
std::string plane_options(const Taps& taps, int bits) {
  return "-DRADIUS=" + std::to_string(taps.radius) + " -DPLANE_BITS=" + std::to_string(bits) +
         integer_taps(taps, "ROW_TAPS");
}

// Those of the tiles schedule: Y' with `luma`'s taps and Cb and Cr with `chroma`'s.
std::string plane_options(const Taps& luma, const Taps& chroma, int bits) {
  return "-DRADIUS=" + std::to_string(luma.radius) +
         " -DCHROMA_RADIUS=" + std::to_string(chroma.radius) +
         " -DPLANE_BITS=" + std::to_string(bits) + integer_taps(luma, "LUMA_TAPS") +
         integer_taps(chroma, "CHROMA_TAPS");
}

class Gaussian final : public Filter {
 public:
  explicit Gaussian(const Params& params)
      : rgba8_(taps_rgba8(params["sigma"])),
        rgba32f_(taps_rgba32f(params["sigma"])),
        chroma_(taps_rgba8(params["sigma"] / 2)) {
    // Made once: the options are part of each frame's program look-up.
    const std::string rgba8 = program_options(rgba8_, PixelFormat::rgba8);
    options_rgba8_ = rgba8 + integer_taps(rgba8_, "ROW_TAPS");
    options_rgba32f_ = program_options(rgba32f_, PixelFormat::rgba32f);
    options_tiled_ = rgba8 + integer_taps(rgba8_) + " -DGAUSSIAN_VROWS=1";
    for (int b = 0; b < 2; ++b) {
      const int bits = b ? 10 : 8;
      options_planes_rows_[b][0] = plane_options(rgba8_, bits);
      options_planes_rows_[b][1] = plane_options(chroma_, bits);
      options_planes_tiled_[b] = plane_options(rgba8_, chroma_, bits);
    }
  }

  // The widest of the kernels; the halo does not know the pixel format. In frame rows: a chroma
  // row of 4:2:0 spans two.
  int halo() const override {
    return std::max({rgba8_.radius, rgba32f_.radius, 2 * chroma_.radius});
  }
  bool fuses_epilogue() const override { return true; }
  bool works_on_planes() const override { return true; }

  void enqueue(BandContext& ctx, std::span<const DeviceImage> inputs,
               const DeviceImage& output) const override {
    const DeviceImage& in = inputs[0];
    if (is_planar(in.format)) {
      enqueue_planes(ctx, in, output);
      return;
    }
    if (ctx.schedule() == Schedule::tiles && in.format == PixelFormat::rgba8 &&
        separable::fits(ctx.device(), rgba8_.radius)) {
      enqueue_tiled(ctx, in, output);
      return;
    }
    const int width = ctx.frame_width();
    const int rows = ctx.y1() - ctx.y0();
    const int vrows = vertical_rows_per_item(ctx.device());
    static const std::vector<std::string> kSources{"gaussian.cl"};
    // CPUs on rgba8: both passes in one launch, a row's vertical sums in local memory.
    const std::size_t line_bytes =
        sizeof(cl_float4) * static_cast<std::size_t>((width + 3) / 4 * 4 + 2 * rgba8_.radius);
    if (in.format == PixelFormat::rgba8 && ctx.device().info().type == DeviceType::cpu &&
        line_bytes <= ctx.device().info().local_memory) {
      cl::Program program = ctx.program(kSources, options_rgba8_ + " -DGAUSSIAN_VROWS=1");
      cl::Kernel lines = ctx.kernel(program, "gaussian_lines");
      set_image_args(lines, 0, in);
      set_image_args(lines, 3, output);
      lines.setArg(6, width);
      lines.setArg(7, ctx.frame_height());
      lines.setArg(8, ctx.y0());
      lines.setArg(9, cl::Local(line_bytes));
      ctx.set_epilogue_args(lines, 10);
      ctx.enqueue(lines, cl::NDRange(static_cast<std::size_t>(rows)), cl::NDRange(1),
                  "gaussian (lines)");
      return;
    }
    // The vertical pass's result for the band's rows: float, 16 bytes a pixel.
    const DeviceImage columns = ctx.scratch(this, 0, PixelFormat::rgba32f, ctx.y0(), rows);
    cl::Program program = ctx.program(
        kSources, (in.format == PixelFormat::rgba8 ? options_rgba8_ : options_rgba32f_) +
                      " -DGAUSSIAN_VROWS=" + std::to_string(vrows));
    const std::size_t groups = static_cast<std::size_t>(width + 3) / 4;

    cl::Kernel vertical = ctx.kernel(program, "gaussian_vertical");
    set_image_args(vertical, 0, in);
    set_image_args(vertical, 3, columns);
    vertical.setArg(6, ctx.frame_height());
    vertical.setArg(7, ctx.y0());
    vertical.setArg(8, ctx.y1());
    ctx.enqueue(vertical, groups, static_cast<std::size_t>(rows + vrows - 1) / vrows,
                "gaussian vertical pass");

    cl::Kernel horizontal = ctx.kernel(program, "gaussian_horizontal");
    set_image_args(horizontal, 0, columns);
    set_image_args(horizontal, 3, output);
    horizontal.setArg(6, width);
    horizontal.setArg(7, ctx.y0());
    ctx.set_epilogue_args(horizontal, 8);
    ctx.enqueue(horizontal, groups, static_cast<std::size_t>(rows), "gaussian horizontal pass");
  }

  // Both passes in one launch through a local-memory tile (kernels/separable.clh).
  void enqueue_tiled(BandContext& ctx, const DeviceImage& in, const DeviceImage& output) const {
    static const std::vector<std::string> kSources{"separable.clh", "gaussian.cl"};
    cl::Program program = ctx.program(kSources, options_tiled_);
    cl::Kernel kernel = ctx.kernel(program, "gaussian_tiled");
    separable::set_band_args(kernel, ctx, in, output);
    ctx.enqueue(kernel, separable::grid(ctx), separable::group(), "gaussian (tiled)");
  }

  // Each plane on its own, in a launch a pass (rows schedule), or all three in one (tiles),
  // through a scratch image of the vertical sums (kernels/gaussian.cl's plane kernels; the
  // queue runs in order, so the planes of the rows schedule take the scratch image in turn).
  void enqueue_planes(BandContext& ctx, const DeviceImage& in, const DeviceImage& output) const {
    const int bits = sample_bits(in.format);
    const int width = ctx.frame_width();
    const int height = ctx.frame_height();
    const int y0 = ctx.y0();
    const int y1 = std::min(ctx.y1(), height);
    static const std::vector<std::string> kSources{"gaussian.cl"};
    if (ctx.schedule() == Schedule::tiles) {
      // 4:2:0: a chroma row for each row pair, a chroma sample for each pair of pixels.
      const int rows = (y1 - y0) + 2 * ((y1 + 1) / 2 - y0 / 2);
      const int column_pitch = (width + 15) / 16 * 16;
      // Rows of rgba8 pitch: at least 4 bytes a sample, rounded up to 64 bytes, 16 4-byte sums.
      const DeviceImage columns = ctx.scratch(this, 1, PixelFormat::rgba8, y0, rows);
      cl::Program program = ctx.program(kSources, options_planes_tiled_[bits == 8 ? 0 : 1]);
      const std::size_t items = static_cast<std::size_t>(column_pitch / 16);
      cl::Kernel vertical = ctx.kernel(program, "gaussian_plane_tiled_vertical");
      set_image_args(vertical, 0, in);
      vertical.setArg(3, columns.buffer);
      vertical.setArg(4, column_pitch);
      vertical.setArg(5, width);
      vertical.setArg(6, height);
      vertical.setArg(7, y0);
      vertical.setArg(8, y1);
      ctx.enqueue(vertical, items, static_cast<std::size_t>(rows),
                  "gaussian vertical pass on planes");
      cl::Kernel horizontal = ctx.kernel(program, "gaussian_plane_tiled_horizontal");
      horizontal.setArg(0, columns.buffer);
      horizontal.setArg(1, column_pitch);
      set_image_args(horizontal, 2, output);
      horizontal.setArg(5, width);
      horizontal.setArg(6, height);
      horizontal.setArg(7, y0);
      horizontal.setArg(8, y1);
      ctx.set_epilogue_args(horizontal, 9);
      ctx.enqueue(horizontal, items, static_cast<std::size_t>(rows),
                  "gaussian horizontal pass on planes");
      return;
    }
    const DeviceImage columns = ctx.scratch(this, 1, PixelFormat::rgba32f, y0, ctx.y1() - ctx.y0());
    // Pitch in sums: a row of rgba32f is 16 bytes a pixel.
    const int column_pitch = static_cast<int>(columns.pitch / (bits == 8 ? 2 : 4));
    // Y's program, and Cb's and Cr's, looked up once a band.
    const cl::Program programs[2] = {
        ctx.program(kSources, options_planes_rows_[bits == 8 ? 0 : 1][0]),
        ctx.program(kSources, options_planes_rows_[bits == 8 ? 0 : 1][1])};
    for (int plane = 0; plane < 3; ++plane) {
      const bool chroma = plane > 0;
      const cl::Program& program = programs[chroma ? 1 : 0];
      const int plane_width = chroma ? (width + 1) / 2 : width;
      const int plane_height = chroma ? (height + 1) / 2 : height;
      const int lo = chroma ? y0 / 2 : y0;
      const int hi = chroma ? (y1 + 1) / 2 : y1;
      const std::size_t items = static_cast<std::size_t>(plane_width + 15) / 16;

      cl::Kernel vertical = ctx.kernel(program, "gaussian_plane_vertical");
      set_image_args(vertical, 0, in);
      vertical.setArg(3, columns.buffer);
      vertical.setArg(4, column_pitch);
      vertical.setArg(5, plane);
      vertical.setArg(6, plane_height);
      vertical.setArg(7, lo);
      ctx.enqueue(vertical, items, static_cast<std::size_t>(hi - lo),
                  "gaussian vertical pass on a plane");

      cl::Kernel horizontal = ctx.kernel(program, "gaussian_plane_horizontal");
      horizontal.setArg(0, columns.buffer);
      horizontal.setArg(1, column_pitch);
      set_image_args(horizontal, 2, output);
      horizontal.setArg(5, plane);
      horizontal.setArg(6, plane_width);
      horizontal.setArg(7, lo);
      ctx.set_epilogue_args(horizontal, 8);
      ctx.enqueue(horizontal, items, static_cast<std::size_t>(hi - lo),
                  "gaussian horizontal pass on a plane");
    }
  }

  // The plane kernels' integer arithmetic, plane by plane.
  void reference_planes(const Frame& in, Frame& output) const {
    for (int plane = 0; plane < 3; ++plane) {
      const Taps& taps = plane ? chroma_ : rgba8_;
      std::vector<std::uint32_t> t;
      for (float w : taps.weights) t.push_back(static_cast<std::uint32_t>(std::lround(w * 256)));
      const int width = in.plane_width(plane);
      const int height = in.plane_height(plane);
      std::vector<std::uint32_t> columns(static_cast<std::size_t>(width) * height);
      tbb::parallel_for(0, height, [&](int y) {
        for (int x = 0; x < width; ++x) {
          std::uint32_t acc = t[0] * in.sample(plane, x, y);
          for (int k = 1; k <= taps.radius; ++k) {
            acc += t[k] * (in.sample(plane, x, reflect101(y - k, height)) +
                           in.sample(plane, x, reflect101(y + k, height)));
          }
          columns[static_cast<std::size_t>(y) * width + x] = acc;
        }
      });
      tbb::parallel_for(0, height, [&](int y) {
        const std::uint32_t* row = &columns[static_cast<std::size_t>(y) * width];
        for (int x = 0; x < width; ++x) {
          std::uint32_t acc = t[0] * row[x];
          for (int k = 1; k <= taps.radius; ++k) {
            acc += t[k] * (row[reflect101(x - k, width)] + row[reflect101(x + k, width)]);
          }
          output.set_sample(plane, x, y, static_cast<int>((acc + 32768) >> 16));
        }
      });
    }
  }

  // The kernels' arithmetic in their order: vertical, then horizontal; in each the centre, then
  // the pairs at +-k from k = 1 outwards.
  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    const Frame& in = *inputs[0];
    if (is_planar(in.format())) {
      reference_planes(in, output);
      return;
    }
    const bool u8 = in.format() == PixelFormat::rgba8;
    const Taps& taps = taps_for(in.format());
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
          float acc = taps.weights[0] * value(y, i);
          for (int k = 1; k <= taps.radius; ++k) {
            acc += taps.weights[k] *
                   (value(reflect101(y - k, height), i) + value(reflect101(y + k, height), i));
          }
          columns[y * stride + i] = acc;
        }
      }
    });

    tbb::parallel_for(tbb::blocked_range<int>(0, height), [&](const auto& range) {
      for (int y = range.begin(); y != range.end(); ++y) {
        const float* row = &columns[y * stride];
        for (int x = 0; x < width; ++x) {
          for (int c = 0; c < 4; ++c) {
            float acc = taps.weights[0] * row[4 * x + c];
            for (int k = 1; k <= taps.radius; ++k) {
              acc += taps.weights[k] * (row[4 * reflect101(x - k, width) + c] +
                                        row[4 * reflect101(x + k, width) + c]);
            }
            if (u8) {
              output.row(y)[4 * x + c] =
                  static_cast<std::uint8_t>(std::clamp(std::floor(acc + 0.5f), 0.0f, 255.0f));
            } else {
              output.row_as<float>(y)[4 * x + c] = acc;
            }
          }
        }
      }
    });
  }

 private:
  const Taps& taps_for(PixelFormat format) const {
    return format == PixelFormat::rgba8 ? rgba8_ : rgba32f_;
  }

  Taps rgba8_;
  Taps rgba32f_;
  Taps chroma_;  // the 4:2:0 chroma planes'
  std::string options_rgba8_;
  std::string options_rgba32f_;
  std::string options_tiled_;
  std::string options_planes_rows_[2][2];  // [8 or 10 bits][Y' or Cb and Cr]
  std::string options_planes_tiled_[2];
};

FilterSpec describe_gaussian() {
  return {
      .name = "gaussian",
      .help =
          "Gaussian blur (separable, reflect-101 borders); on 8-bit frames it matches "
          "OpenCV's GaussianBlur to the bit. Works on video's Y'CbCr planes as they are (4:2:0 "
          "chroma with half the sigma).",
      .params = {{.name = "sigma",
                  .type = ParamType::real,
                  .default_value = 1,
                  .min = 0,
                  .max = 64,
                  .help = "standard deviation in pixels; the kernel reaches 3 sigma on 8-bit "
                          "frames and 4 sigma on float frames, as OpenCV's",
                  .min_exclusive = true}},
      .make = [](const Params& p) { return std::make_unique<Gaussian>(p); },
  };
}

TANDEM_REGISTER_FILTER(describe_gaussian);

}  // namespace
}  // namespace tandem
