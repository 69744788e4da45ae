// scale: resizes the frame as OpenCV's cv::resize does, with its coefficients and its arithmetic
// for each method, so that rgba8 results are OpenCV's within 1 LSB (tests/scale_cv_test.cpp):
//   bilinear  INTER_LINEAR: pixel centres onto pixel centres, src = (dst + 0.5) in / out - 0.5,
//             2 taps a side (a 2x2 downscale is INTER_AREA's, as in OpenCV)
//   bicubic   INTER_CUBIC: 4 taps, A = -0.75. The default, as FFmpeg's scale defaults to bicubic
//             (FFmpeg's bicubic is swscale's, not this one)
//   lanczos   INTER_LANCZOS4: 8 taps
//   area      INTER_AREA: downscales average the input pixels each output pixel covers, with
//             exact area weights where the factor is not whole; upscales are OpenCV's variant of
//             bilinear
// Borders replicate. Sizes follow FFmpeg's scale=w:h: 0 keeps the input's side, -1 the aspect
// ratio, -n the aspect ratio rounded to a multiple of n.
//
// The host builds a table once per pair of sizes: for every output column and row its taps'
// input indices (clamped: the border) and weights (8-bit: OpenCV's 11-bit fixed point). The
// kernels (kernels/scale.cl) compute each output pixel from its taps with them, the point-wise
// chain after it in their store; the reference reads the same table in the kernels'
// arithmetic, which is OpenCV's (see Sum). Per device and sizes, one of:
//   blocks      area by whole factors up to kMaxBlock: no table, the blocks loaded at fixed
//               offsets (16-byte words for 2x2 blocks of rgba8 and for rgba32f); on CPUs,
//               2x2 blocks of rgba8 sixteen output pixels a work-item (scale_halves16)
//   tiled       GPUs, where each input row's sums serve several output rows (upscales): the row
//               sums of a work-group's rows in local memory, then its output rows, one launch
//   walks       CPUs on 8 bits with integer sums (scale_rows16): a work-item walks down
//               row_walk() output rows of kWalkGroups groups of four columns, 16 lanes wide
//               a group, keeping the sums of the input rows it reached in a ring, so that each
//               input row's are computed once a walk, as row sums would be, without a scratch
//               image; the table's columns laid on consecutive input pixels
//               (consecutive_taps()) so that a pair of taps is one load
//   two passes  the same through a scratch image of row sums, where that saves taps (see
//               enqueue): rgba32f and area by other factors on CPUs, and GPUs where no tile
//               fits (taps that go back up the rows, more rows than local memory holds)
//   direct      every output pixel straight from its taps
#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "tandem/device.hpp"
#include "tandem/error.hpp"
#include "tandem/filter.hpp"

#include "size_expressions.hpp"

namespace tandem {
namespace {

/// The largest side of an output, in pixels.
constexpr int kMaxSide = 32768;
/// The widest whole block scale_blocks loads into registers; wider ones go through the table.
constexpr int kMaxBlock = 8;
/// scale_tiled's work-group: kTileWidth work-items of four columns by kTileHeight, which
/// compute the output rows of a tile of kTileRows[k] rows, the tallest whose local memory
/// (tile_local_bytes) fits in kTileLocalBytes (64 only where kTallTileTaps says). 16 x 8 rather
/// than 32 x 8: H200, kernel medians of 1080p upscales, 4K bicubic 0.0424 ms against 0.0444,
/// lanczos 0.0750 against 0.0797, rgba32f bicubic 0.0896 against 0.0931, rgba32f to 2000x1200
/// lanczos 0.0646 against 0.0921, bilinear 0.0313 against 0.0312
/// (bench-results/2026-11-29-h200-s33-scale-4k-experiments.txt).
constexpr int kTileWidth = 16;
constexpr int kTileHeight = 8;
constexpr int kTallTileRows = 64;
constexpr std::array<int, 4> kTileRows = {kTallTileRows, 32, 16, 8};
/// Tiles of kTallTileRows only for 8-bit lanczos (8 taps a side): H200, 1080p to 3840x2160, kernel
/// medians against 32 rows, lanczos 67.3-67.5 us against 72.9-73.0, but bicubic 40.5 against
/// 41.3, bilinear 31.1-31.2 against 29.9 and to 2880x1620 bicubic 32.3-32.4 against 30.6-30.7
/// (bench-results/2026-11-29-h200-s36-scale-columns-and-tile-rows.txt).
constexpr int kTallTileTaps = 8;
constexpr std::size_t kTileLocalBytes = 48 * 1024;
/// scale_rows16's groups of four columns a work-item: the 64 bytes of output a row, and about
/// as many input bytes of each row it reads, where four columns left a work-item most of a cache
/// line's neighbours to others (PoCL, 2 cores, 1080p, alternated in one process: to 1280x720
/// bilinear 2.33 ms against 2.68 with walks of 2, to 3840x2160 bicubic 18.4 against 22.5).
constexpr int kWalkGroups = 4;

enum class Method { bilinear, bicubic, lanczos, area };
const char* const kMethodNames[] = {"bilinear", "bicubic", "lanczos", "area"};

// FFmpeg's force_original_aspect_ratio: the size asked for taken as a box that the input's
// aspect ratio fits into (decrease) or covers (increase).
enum class Fit { disable, decrease, increase };
const char* const kFitNames[] = {"disable", "decrease", "increase"};

/// How the taps are added up: OpenCV's way for the method, the pixel type and the sizes (the
/// SUM_* of kernels/scale.cl, in its numbering).
enum class Sum {
  linear8 = 1,   // 8-bit bilinear (and area upscales): integer rows, OpenCV's vertical rounding
  cubic8 = 2,    // 8-bit bicubic: integer rows, a float vertical pass
  fixed8 = 3,    // 8-bit lanczos: integers throughout
  blocks8 = 4,   // 8-bit area by whole factors: block sums
  weighted = 5,  // float weights and sums: rgba32f, and 8-bit area by other factors
};

// OpenCV's 8-bit interpolation weights are multiples of 2^-11.
constexpr int kCoefficientBits = 11;
constexpr float kCoefficientScale = 1 << kCoefficientBits;

/// Taps of one axis: for each output index, `taps` input indices (clamped into the input) and
/// their weights.
struct Axis {
  int taps = 0;
  std::vector<int> index;
  std::vector<float> weight;
};

int floor_int(double v) {
  return static_cast<int>(std::floor(v));
}

// OpenCV's interpolateCubic(), in its float arithmetic.
void cubic_coefficients(float x, float* c) {
  const float A = -0.75f;
  c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
  c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
  c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = 1.f - c[0] - c[1] - c[2];
}

// OpenCV's interpolateLanczos4(): sin/cos in double, normalised in float.
void lanczos_coefficients(float x, float* c) {
  constexpr double s45 = 0.70710678118654752440084436210485;
  static const double cs[][2] = {{1, 0},  {-s45, -s45}, {0, 1},  {s45, -s45},
                                 {-1, 0}, {s45, s45},   {0, -1}, {-s45, s45}};
  constexpr double pi = 3.1415926535897932384626433832795;
  float sum = 0;
  const double y0 = -(x + 3) * pi * 0.25, s0 = std::sin(y0), c0 = std::cos(y0);
  for (int i = 0; i < 8; ++i) {
    const float y0_ = x + 3 - static_cast<float>(i);
    if (std::fabs(y0_) >= 1e-6f) {
      const double y = -y0_ * pi * 0.25;
      c[i] = static_cast<float>((cs[i][0] * s0 + cs[i][1] * c0) / (y * y));
    } else {
      c[i] = 1e30f;  // x ~ 0: the centre tap alone, after the normalisation
    }
    sum += c[i];
  }
  sum = 1.f / sum;
  for (int i = 0; i < 8; ++i) c[i] *= sum;
}

// The interpolating methods (and area upscales, `area_mode`) along one axis, as cv::resize
// lays them out: `fixed_point` rounds the weights to OpenCV's 8-bit shorts. Along x, bilinear
// moves taps before the first pixel or past the last onto it with weight 1; along y OpenCV keeps
// them and replicates the border rows, with their weights.
Axis interpolating_axis(Method method, bool area_mode, int src, int dst, bool along_x,
                        bool fixed_point) {
  const double inv_scale = static_cast<double>(dst) / src;
  const double scale = 1. / inv_scale;
  const int ksize = method == Method::bicubic ? 4 : method == Method::lanczos ? 8 : 2;
  const bool interpolates = method == Method::bicubic || method == Method::lanczos;
  Axis axis;
  axis.taps = ksize;
  axis.index.resize(static_cast<std::size_t>(dst) * ksize);
  axis.weight.resize(axis.index.size());
  for (int d = 0; d < dst; ++d) {
    float f;
    int s;
    if (!area_mode) {
      f = static_cast<float>((d + 0.5) * scale - 0.5);
      s = floor_int(f);
      f -= static_cast<float>(s);
    } else {
      s = floor_int(d * scale);
      f = static_cast<float>((d + 1) - (s + 1) * inv_scale);
      f = f <= 0 ? 0.f : f - static_cast<float>(floor_int(f));
    }
    if (along_x && !interpolates) {
      if (s < 0) f = 0, s = 0;
      if (s >= src - 1) f = 0, s = src - 1;
    }
    float c[8];
    if (method == Method::bicubic) {
      cubic_coefficients(f, c);
    } else if (method == Method::lanczos) {
      lanczos_coefficients(f, c);
    } else {
      c[0] = 1.f - f;
      c[1] = f;
    }
    for (int k = 0; k < ksize; ++k) {
      const std::size_t i = static_cast<std::size_t>(d) * ksize + k;
      axis.index[i] = std::clamp(s - ksize / 2 + 1 + k, 0, src - 1);
      // saturate_cast<short>: rounded to nearest even, saturated.
      axis.weight[i] = fixed_point
                           ? std::clamp(std::nearbyint(c[k] * kCoefficientScale), -32768.f, 32767.f)
                           : c[k];
    }
  }
  return axis;
}

// INTER_AREA's downscale along one axis (OpenCV's computeResizeAreaTab): the input pixels each
// output pixel's cell covers, weighted by the part covered over the cell's width; slivers under
// 1e-3 of a pixel are left out, as OpenCV does. Outputs with fewer entries than others end with
// weights 0.
Axis area_axis(int src, int dst, double scale) {
  std::vector<std::vector<std::pair<int, float>>> entries(static_cast<std::size_t>(dst));
  std::size_t taps = 1;
  for (int d = 0; d < dst; ++d) {
    const double fsx1 = d * scale;
    const double fsx2 = fsx1 + scale;
    const double cell = std::min(scale, src - fsx1);
    int sx1 = static_cast<int>(std::ceil(fsx1)), sx2 = floor_int(fsx2);
    sx2 = std::min(sx2, src - 1);
    sx1 = std::min(sx1, sx2);
    auto& e = entries[static_cast<std::size_t>(d)];
    if (sx1 - fsx1 > 1e-3) e.push_back({sx1 - 1, static_cast<float>((sx1 - fsx1) / cell)});
    for (int sx = sx1; sx < sx2; ++sx) e.push_back({sx, static_cast<float>(1.0 / cell)});
    if (fsx2 - sx2 > 1e-3) {
      e.push_back({sx2, static_cast<float>(std::min(std::min(fsx2 - sx2, 1.), cell) / cell)});
    }
    taps = std::max(taps, e.size());
  }
  Axis axis;
  axis.taps = static_cast<int>(taps);
  for (const auto& e : entries) {
    for (std::size_t k = 0; k < taps; ++k) {
      const bool real = k < e.size();
      axis.index.push_back(real ? e[k].first : (e.empty() ? 0 : e.back().first));
      axis.weight.push_back(real ? e[k].second : 0.f);
    }
  }
  return axis;
}

// The most input rows any `window` consecutive output rows reach along `y`, which scale_tiled
// holds in local memory, taking them to be the first row's lowest tap to the last row's
// highest; 0 where that does not hold (a row whose taps go below the row before's).
int tile_rows(const Axis& y, int height, int window) {
  std::vector<int> lo(static_cast<std::size_t>(height)), hi(lo.size());
  for (int d = 0; d < height; ++d) {
    const auto taps = y.index.begin() + static_cast<std::ptrdiff_t>(d) * y.taps;
    lo[d] = *std::min_element(taps, taps + y.taps);
    hi[d] = *std::max_element(taps, taps + y.taps);
    if (d > 0 && (lo[d] < lo[d - 1] || hi[d] < hi[d - 1])) return 0;
  }
  int rows = 0;
  for (int d = 0; d < height; ++d) {
    rows = std::max(rows, hi[std::min(d + window, height) - 1] - lo[d] + 1);
  }
  return rows;
}

// scale_tiled's local memory: the sums of `input_rows` rows (16 bytes a pixel) and the `rows`
// output rows' entries of the table (8-bit pixels read those from there).
std::size_t tile_local_bytes(int rows, int input_rows, int taps_y) {
  return static_cast<std::size_t>(input_rows) * 4 * kTileWidth * 16 +
         static_cast<std::size_t>(rows) * 2 * taps_y * sizeof(std::int32_t);
}

// Whole blocks of `factor` input pixels, weight 1 each.
Axis block_axis(int factor, int dst) {
  Axis axis;
  axis.taps = factor;
  for (int d = 0; d < dst; ++d) {
    for (int k = 0; k < factor; ++k) {
      axis.index.push_back(d * factor + k);
      axis.weight.push_back(1.f);
    }
  }
  return axis;
}

// Lays each output index's taps out on consecutive input indices from the lowest, where the
// input has as many: taps clamped onto one index become one tap with their weights' sum and
// taps of weight 0 fill the rest. The same sums in integers (bytes times integer weights), so
// the same pixels. Leaves the axis as it is and returns false where some index's taps span more
// input pixels than there are taps, or the input has fewer pixels than taps.
bool consecutive_taps(Axis* axis, int src) {
  if (src < axis->taps) return false;
  const std::size_t taps = static_cast<std::size_t>(axis->taps);
  std::vector<int> first(axis->index.size() / taps);
  for (std::size_t at = 0, d = 0; at < axis->index.size(); at += taps, ++d) {
    const int lo = *std::min_element(axis->index.begin() + at, axis->index.begin() + at + taps);
    first[d] = std::min(lo, src - axis->taps);
    for (std::size_t k = 0; k < taps; ++k) {
      if (axis->index[at + k] - first[d] >= axis->taps) return false;
    }
  }
  for (std::size_t at = 0, d = 0; at < axis->index.size(); at += taps, ++d) {
    std::vector<float> weight(taps, 0.f);
    for (std::size_t k = 0; k < taps; ++k) {
      weight[axis->index[at + k] - first[d]] += axis->weight[at + k];
    }
    for (std::size_t k = 0; k < taps; ++k) {
      axis->index[at + k] = first[d] + static_cast<int>(k);
      axis->weight[at + k] = weight[k];
    }
  }
  return true;
}

/// What computes one frame size from another: the table the kernel and the reference read, and
/// how they add up its taps.
struct Plan {
  Sum sum = Sum::weighted;
  int taps_x = 0, taps_y = 0;
  bool halves = false;           // blocks of 2x2 (OpenCV's (s + 2) >> 2 on 8 bits)
  float inv_area = 1;            // blocks: 1 / pixels of a block
  int padded_width = 0;          // output columns in the table: a multiple of 4
  int block_x = 0, block_y = 0;  // whole blocks for scale_blocks, 0 where not
  // scale_tiled's output rows a tile, and the most input rows they reach; 0: no scale_tiled.
  int tile_rows = 0, tile_input_rows = 0;
  // scale_tiled's shortcuts (kernels/scale.cl): an exact 2x upscale across (TWICE_X), and two
  // output rows a work-item where the rows upscale (PAIRS).
  bool twice_x = false, pairs = false;
  // Every output row's taps within taps_y consecutive input rows from its first, the first and
  // the last never going back up: scale_rows16 walks down the rows with a ring of row sums.
  bool row_walks = false;
  double rows_per_row = 1;  // input rows an output row moves down by (the vertical scale)
  int y_offset = 0;         // where the rows' entries start
  int x_offset = 0;         // where the columns' entries by tap start (kernels/scale.cl), 4-aligned
  std::vector<std::int32_t> table;
  std::string options;                       // the kernel's build options
  std::map<cl_context, cl::Buffer> buffers;  // the table on each context, made once

  const std::int32_t* column(int x) const { return table.data() + x * 2 * taps_x; }
  const std::int32_t* row(int y) const { return table.data() + y_offset + y * 2 * taps_y; }
  bool integer_weights() const { return sum != Sum::weighted; }
};

// cv::resize's choice of implementation for the sizes, the method and the pixel type, and the
// tables that follow from it.
std::shared_ptr<Plan> make_plan(Method method, Size in, Size out, bool u8) {
  const double inv_x = static_cast<double>(out.width) / in.width;
  const double inv_y = static_cast<double>(out.height) / in.height;
  const double scale_x = 1. / inv_x, scale_y = 1. / inv_y;
  const int iscale_x = static_cast<int>(std::nearbyint(std::min(scale_x, 1e9)));
  const int iscale_y = static_cast<int>(std::nearbyint(std::min(scale_y, 1e9)));
  const bool whole =
      std::abs(scale_x - iscale_x) < DBL_EPSILON && std::abs(scale_y - iscale_y) < DBL_EPSILON;
  auto plan = std::make_shared<Plan>();
  Axis x, y;
  if (in == out) {
    // OpenCV copies: blocks of one pixel.
    method = Method::area;
  } else if (method == Method::bilinear && whole && iscale_x == 2 && iscale_y == 2) {
    method = Method::area;  // OpenCV's INTER_LINEAR is INTER_AREA's for a 2x2 downscale
  }
  if (method == Method::area && scale_x >= 1 && scale_y >= 1) {
    if (whole) {
      x = block_axis(iscale_x, out.width);
      y = block_axis(iscale_y, out.height);
      plan->sum = u8 ? Sum::blocks8 : Sum::weighted;
      plan->halves = iscale_x == 2 && iscale_y == 2;
      plan->inv_area = 1.f / static_cast<float>(iscale_x * iscale_y);
      if (iscale_x <= kMaxBlock) plan->block_x = iscale_x, plan->block_y = iscale_y;
    } else {
      x = area_axis(in.width, out.width, scale_x);
      y = area_axis(in.height, out.height, scale_y);
      plan->sum = Sum::weighted;
    }
  } else {
    const bool area_mode = method == Method::area;
    x = interpolating_axis(method, area_mode, in.width, out.width, true, u8);
    y = interpolating_axis(method, area_mode, in.height, out.height, false, u8);
    plan->sum = !u8                         ? Sum::weighted
                : method == Method::bicubic ? Sum::cubic8
                : method == Method::lanczos ? Sum::fixed8
                                            : Sum::linear8;
  }

  // Every column's taps on consecutive input pixels (kernels/scale.cl's CONSECUTIVE).
  const bool consecutive =
      plan->integer_weights() && plan->sum != Sum::blocks8 && consecutive_taps(&x, in.width);
  plan->taps_x = x.taps;
  plan->taps_y = y.taps;
  plan->padded_width = (out.width + 3) / 4 * 4;
  auto put = [&](const Axis& axis, int d) {
    const std::size_t at = static_cast<std::size_t>(d) * axis.taps;
    for (int k = 0; k < axis.taps; ++k) plan->table.push_back(axis.index[at + k]);
    for (int k = 0; k < axis.taps; ++k) {
      const float w = axis.weight[at + k];
      plan->table.push_back(plan->integer_weights() ? static_cast<std::int32_t>(w)
                                                    : std::bit_cast<std::int32_t>(w));
    }
  };
  // The padding columns repeat the last one: the kernel's last group of a row reads them.
  for (int d = 0; d < plan->padded_width; ++d) put(x, std::min(d, out.width - 1));
  plan->y_offset = static_cast<int>(plan->table.size());
  for (int d = 0; d < out.height; ++d) put(y, d);
  // The columns again, by tap: the kernels load four columns' index or weight of a tap at once.
  plan->table.resize((plan->table.size() + 3) / 4 * 4);
  plan->x_offset = static_cast<int>(plan->table.size());
  plan->table.reserve(plan->table.size() +
                      2 * static_cast<std::size_t>(x.taps) * plan->padded_width);
  for (int part = 0; part < 2; ++part) {
    for (int k = 0; k < x.taps; ++k) {
      for (int d = 0; d < plan->padded_width; ++d) {
        plan->table.push_back(plan->column(d)[part * x.taps + k]);
      }
    }
  }
  for (int rows : kTileRows) {
    if (rows == kTallTileRows && !(u8 && y.taps >= kTallTileTaps)) continue;
    const int input_rows = tile_rows(y, out.height, rows);
    if (input_rows > 0 && tile_local_bytes(rows, input_rows, y.taps) <= kTileLocalBytes) {
      plan->tile_rows = rows;
      plan->tile_input_rows = input_rows;
      break;
    }
  }

  // Each where it measured faster (H200, 1080p to 3840x2160, kernel medians of two rounds
  // alternated: bicubic 39.7 us with TWICE_X against 41.6-41.7 without, 40.4 with both; lanczos
  // 61.6-61.7 with TWICE_X, 62.6-62.7 with PAIRS, 58.7 with both, 67.6 with neither; bilinear
  // 30.1-30.2 with neither, 30.9-31.5 with either or both; to 2880x1620 bicubic 30.8-30.9 against
  // 32.5 with PAIRS; bench-results/2026-11-30-h200-s42-scale-shortcuts.txt). TWICE_X needs an
  // even first tap (TAPS_X / 2 even: bicubic's 4, lanczos's 8).
  if (u8 && plan->sum != Sum::weighted && plan->sum != Sum::blocks8) {
    plan->twice_x = out.width == 2 * in.width && (x.taps == 4 || x.taps == 8);
    plan->pairs = out.height >= in.height && y.taps >= 8;
  }

  const int row_span = tile_rows(y, out.height, 1);
  plan->row_walks = row_span > 0 && row_span <= y.taps;
  plan->rows_per_row = scale_y;

  char constants[160];
  std::snprintf(constants, sizeof constants, " -DSUM=%d -DTAPS_X=%d -DTAPS_Y=%d -DHALVES=%d",
                static_cast<int>(plan->sum), plan->taps_x, plan->taps_y, plan->halves ? 1 : 0);
  plan->options = constants;
  plan->options += consecutive ? " -DCONSECUTIVE=1" : " -DCONSECUTIVE=0";
  // Hexadecimal float literals: the kernel's constants are the host's to the bit.
  if (plan->sum == Sum::blocks8) {
    std::snprintf(constants, sizeof constants, " -DINV_AREA=%af",
                  static_cast<double>(plan->inv_area));
    plan->options += constants;
  } else if (plan->sum == Sum::weighted && plan->inv_area != 1) {
    std::snprintf(constants, sizeof constants, " -DFINAL_SCALE=%af",
                  static_cast<double>(plan->inv_area));
    plan->options += constants;
  }
  if (plan->block_x > 0) {
    std::snprintf(constants, sizeof constants, " -DBLOCK_X=%d -DBLOCK_Y=%d", plan->block_x,
                  plan->block_y);
    plan->options += constants;
  }
  return plan;
}

// The output rows a work-item of scale_rows16 walks: each walk sums its first row's taps_y input
// rows afresh, so longer walks sum fewer rows, but a walk's column of input rows, taps_y + (walk
// - 1) * rows_per_row of them a pitch apart, costs more than that saves once it passes 2 taps_y
// (measured; why is not: most likely the lines a work-item touches collide in the core's
// cache, 1080p's pitch of 7680 bytes mapping rows 8 apart to one set). PoCL, 2 cores (AMD EPYC,
// AVX2), 1080p, frames alternated in one process, walks of 2 and 4 against the 16 and 32 before: to
// 1280x720 bilinear 2.33 ms against 3.64 (walk 16), bicubic 3.98 against 6.35, lanczos 7.24
// against 8.75 (walk 32), to 960x540 bicubic 2.37 against 5.67; upscales keep long walks (to
// 3840x2160 bicubic, walk 9 by this rule, 8 19.5 ms and 16 18.4).
int row_walk(const Plan& plan) {
  const double walk = 1 + std::floor(plan.taps_y / plan.rows_per_row);
  return static_cast<int>(std::clamp(walk, 2.0, 32.0));
}

// FFmpeg's av_rescale(a, b, c) for positive values: a * b / c rounded to nearest, halves up.
std::int64_t rescale(std::int64_t a, std::int64_t b, std::int64_t c) {
  return (a * b + c / 2) / c;
}

std::uint8_t to_u8(float v) {
  return static_cast<std::uint8_t>(std::nearbyint(std::clamp(v, 0.0f, 255.0f)));
}

std::uint8_t to_u8(std::int32_t v) {
  return static_cast<std::uint8_t>(std::clamp(v, 0, 255));
}

class Scale final : public Filter {
 public:
  explicit Scale(const Params& params)
      : sizes_(params, SizeRounding::truncate_sides, false),
        method_(static_cast<Method>(params.integer("flags"))),
        fit_(static_cast<Fit>(params.integer("force_original_aspect_ratio"))),
        divisible_by_(params.integer("force_divisible_by")) {}

  PixelFormat output_format(std::span<const PixelFormat> inputs) const override {
    if (inputs.size() != 1) throw Error("scale takes one input");
    if (inputs[0] != PixelFormat::rgba8 && inputs[0] != PixelFormat::rgba32f) {
      throw Error("scale takes rgba8 or rgba32f frames, not " + std::string(to_string(inputs[0])));
    }
    return inputs[0];
  }

  // FFmpeg's rules (ff_scale_eval_dimensions, ff_scale_adjust_dimensions): w, then h (which may
  // use ow), then w again (which may use oh), each truncated to an integer; 0 is the input's
  // side; both negative keep the input's size; one negative, -n, follows the other side in the
  // input's aspect ratio, rounded to a multiple of n. Then force_original_aspect_ratio makes
  // each side the smaller (decrease) or the larger (increase) of itself and the side that the
  // other gives in the input's aspect ratio, and force_divisible_by rounds both down (decrease)
  // or up (increase) to its multiples.
  Size output_size(std::span<const Size> inputs) const override {
    if (inputs.size() != 1) throw Error("scale takes one input");
    const Size in = inputs[0];
    if (in.width <= 0 || in.height <= 0) throw Error("cannot scale a " + to_string(in) + " frame");
    // -n keeps the aspect ratio, rounded to a multiple of n: n up to 64.
    const auto side = [&](std::int64_t v, int input) -> std::int64_t {
      if (v < -64) {
        throw Error(sizes_.describe() + " of a " + to_string(in) + " input makes a side of " +
                    std::to_string(v) +
                    ": -n rounds the side kept in proportion to a multiple of n, n up to 64");
      }
      return v == 0 ? input : v;
    };
    const SizeExpressions::Values v = sizes_.evaluate(in, side);
    std::int64_t w = v.w, h = v.h;
    if (w < 0 && h < 0) {
      w = in.width;
      h = in.height;
    } else if (w < 0) {
      w = rescale(h, in.width, static_cast<std::int64_t>(in.height) * -w) * -w;
    } else if (h < 0) {
      h = rescale(w, in.height, static_cast<std::int64_t>(in.width) * -h) * -h;
    }
    std::string asked = sizes_.describe();
    if (fit_ != Fit::disable && w >= 1 && h >= 1 && w <= kMaxSide && h <= kMaxSide) {
      asked += std::string(":force_original_aspect_ratio=") + kFitNames[static_cast<int>(fit_)] +
               ":force_divisible_by=" + std::to_string(divisible_by_);
      const std::int64_t kept_w = rescale(h, in.width, in.height);
      const std::int64_t kept_h = rescale(w, in.height, in.width);
      const std::int64_t n = divisible_by_;
      if (fit_ == Fit::decrease) {
        w = std::min(w, kept_w) / n * n;
        h = std::min(h, kept_h) / n * n;
      } else {
        w = (std::max(w, kept_w) + n - 1) / n * n;
        h = (std::max(h, kept_h) + n - 1) / n * n;
      }
    }
    const std::string made = asked + " of a " + to_string(in) + " input makes " +
                             std::to_string(w) + "x" + std::to_string(h);
    if (w < 1 || h < 1) {
      throw Error(made + ": the " + (w < 1 ? "width" : "height") +
                  (fit_ == Fit::disable ? " kept in proportion" : " fitted and made divisible") +
                  " rounds to 0");
    }
    if (w > kMaxSide || h > kMaxSide) {
      throw Error(made + ", larger than " + std::to_string(kMaxSide) + " pixels a side");
    }
    return {static_cast<int>(w), static_cast<int>(h)};
  }

  // The rows the output rows' taps reach, clamped: the table's own indices.
  RowRange input_rows(RowRange rows, int, Size in, Size out) const override {
    rows = {std::max(rows.lo, 0), std::min(rows.hi, out.height)};
    if (rows.empty()) return {};
    const std::shared_ptr<const Plan> plan = plan_for(in, out, true);
    const std::int32_t* first = plan->row(rows.lo);
    const std::int32_t* last = plan->row(rows.hi - 1);
    const int lo = *std::min_element(first, first + plan->taps_y);
    const int hi = *std::max_element(last, last + plan->taps_y);
    return {lo, hi + 1};
  }

  bool fuses_epilogue() const override { return true; }

  void enqueue(BandContext& ctx, std::span<const DeviceImage> inputs,
               const DeviceImage& output) const override {
    const DeviceImage& in = inputs[0];
    const bool u8 = in.format == PixelFormat::rgba8;
    const std::shared_ptr<Plan> plan =
        plan_for({in.width, in.height}, {ctx.frame_width(), ctx.frame_height()}, u8);
    static const std::vector<std::string> kSources{"scale.cl"};
    // CPUs on 8 bits with interpolation weights: scale_rows16, walking down the rows (WALK).
    // Whole blocks past kMaxBlock stay on scale_rows.
    const bool rows16 = u8 && plan->sum != Sum::weighted && plan->sum != Sum::blocks8 &&
                        plan->row_walks && ctx.schedule() != Schedule::tiles;
    const int walk = rows16 ? row_walk(*plan) : 0;
    // CPUs on 8-bit 2x2 blocks: scale_halves16, a cache line of output a row a work-item, not
    // read before it is written where it goes to the host. PoCL, 2 cores, 1080p to 960x540
    // bilinear, against scale_blocks alone, alternated eight times: kernel medians 0.63-1.08 ms
    // (median of the eight 0.69) against 0.70-1.08 (0.79), OpenCV's frame over tandem's
    // 0.77-1.05x (0.95) against 0.73-0.98x (0.87).
    const bool halves16 = u8 && plan->halves && ctx.schedule() != Schedule::tiles;
    // scale_rows16 streams its four groups' 64 bytes a row likewise: PoCL, 16 Xeon cores, 1080p,
    // frame medians alternated twice, to 3840x2160 bicubic 1.90-1.96 ms against 1.99, to
    // 1280x720 bilinear 0.33-0.34 either way; this VM's 2 cores, three times, 1280x720
    // 0.72-0.73 ms against 0.76-0.85, 3840x2160 bicubic 6.5-6.7 against 6.3-6.5
    // (bench-results/2026-11-29-s36-scale-streamed-walks.txt).
    const bool stream = (halves16 || rows16) && ctx.streams_output() && !ctx.epilogue();
    // GPUs (tiles) read the columns' taps from the table's copy by tap, CPUs (rows) in place.
    const std::string options =
        plan->options + " -DPIXEL_RGBA8=" + (u8 ? "1" : "0") +
        " -DCOLUMNS_BY_TAP=" + (ctx.schedule() == Schedule::tiles ? "1" : "0") +
        (rows16 ? " -DWALK=" + std::to_string(walk) + " -DGROUPS16=" + std::to_string(kWalkGroups)
                : "") +
        (stream ? " -DTANDEM_STREAM_STORES=1" : "");
    cl::Program program = ctx.program(kSources, options);
    const std::size_t groups = static_cast<std::size_t>(plan->padded_width / 4);
    const int rows = ctx.y1() - ctx.y0();
    if (plan->block_x > 0) {
      // Sixteen pixels a work-item where scale_halves16 takes them, then the groups of four
      // inside the width, then the row's last one apart where it is not.
      const int width = ctx.frame_width();
      int x_from = 0;
      if (halves16 && width >= 16) {
        cl::Kernel wide = ctx.kernel(program, "scale_halves16");
        set_image_args(wide, 0, in);
        set_image_args(wide, 3, output);
        wide.setArg(6, 0);
        wide.setArg(7, ctx.y0());
        ctx.set_epilogue_args(wide, 8);
        ctx.enqueue(wide, static_cast<std::size_t>(width / 16), static_cast<std::size_t>(rows),
                    "scale (2x2 blocks, sixteen pixels a work-item)");
        x_from = width / 16 * 16;
      }
      cl::Kernel kernel = ctx.kernel(program, "scale_blocks");
      set_image_args(kernel, 0, in);
      set_image_args(kernel, 3, output);
      kernel.setArg(6, width);
      kernel.setArg(9, ctx.y0());
      ctx.set_epilogue_args(kernel, 10);
      if (width - x_from >= 4) {
        kernel.setArg(7, x_from);
        kernel.setArg(8, 0);
        ctx.enqueue(kernel, static_cast<std::size_t>((width - x_from) / 4),
                    static_cast<std::size_t>(rows), "scale (blocks)");
      }
      if (width % 4 != 0) {
        kernel.setArg(7, width / 4 * 4);
        kernel.setArg(8, 1);
        ctx.enqueue(kernel, 1, static_cast<std::size_t>(rows), "scale (blocks, last pixels)");
      }
      return;
    }
    const cl::Buffer table = table_on(ctx.device(), *plan);
    // What scale_rows16, scale_tiled and scale_rows take alike: the images, the table, where the
    // rows' entries start and the band's first row (and its end, `end`), then the epilogue's.
    const auto set_band_args = [&](cl::Kernel& kernel, bool end) {
      set_image_args(kernel, 0, in);
      set_image_args(kernel, 3, output);
      cl_uint next = set_table_args(kernel, 6, table, *plan);
      kernel.setArg(next++, plan->y_offset);
      kernel.setArg(next++, ctx.y0());
      if (end) kernel.setArg(next++, ctx.y1());
      ctx.set_epilogue_args(kernel, next);
    };
    if (rows16) {
      cl::Kernel kernel = ctx.kernel(program, "scale_rows16");
      set_band_args(kernel, true);
      ctx.enqueue(kernel, (groups + kWalkGroups - 1) / kWalkGroups,
                  static_cast<std::size_t>((rows + walk - 1) / walk), "scale (walks)");
      return;
    }
    // Row sums first where they save taps: each input row's once, rather than once for every
    // output row that reads it (upscales, and downscales by less than the taps; cv::resize
    // always does).
    const RowRange read = input_rows({ctx.y0(), ctx.y1()}, 0, {in.width, in.height},
                                     {ctx.frame_width(), ctx.frame_height()});
    const bool row_sums = static_cast<long long>(read.rows()) * plan->taps_x +
                              static_cast<long long>(rows) * plan->taps_y <
                          static_cast<long long>(rows) * plan->taps_x * plan->taps_y;
    if (row_sums && ctx.schedule() == Schedule::tiles && fits_tile(ctx.device(), *plan)) {
      char tile[128];
      std::snprintf(tile, sizeof tile,
                    " -DTILE_W=%d -DTILE_H=%d -DTILE_ROWS=%d -DIN_ROWS=%d -DTWICE_X=%d -DPAIRS=%d",
                    kTileWidth, kTileHeight, plan->tile_rows, plan->tile_input_rows,
                    plan->twice_x ? 1 : 0, plan->pairs ? 1 : 0);
      cl::Kernel kernel = ctx.kernel(ctx.program(kSources, options + tile), "scale_tiled");
      // A device that cannot run the work-group with this kernel's registers takes two passes.
      if (kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(ctx.device().cl_device()) >=
          static_cast<std::size_t>(kTileWidth * kTileHeight)) {
        set_band_args(kernel, true);
        const auto round_up = [](std::size_t n, std::size_t m) { return (n + m - 1) / m * m; };
        ctx.enqueue(kernel,
                    cl::NDRange(round_up(groups, kTileWidth),
                                round_up(static_cast<std::size_t>(rows), plan->tile_rows) /
                                    plan->tile_rows * kTileHeight),
                    cl::NDRange(kTileWidth, kTileHeight), "scale (tiled)");
        return;
      }
    }
    if (row_sums) {
      // 16 bytes a pixel of the output's width, as an rgba32f scratch image's rows hold.
      const DeviceImage sums = ctx.scratch(this, 0, PixelFormat::rgba32f, read.lo, read.rows());
      const int sums_pitch = static_cast<int>(sums.pitch / 16);
      cl::Kernel horizontal = ctx.kernel(program, "scale_horizontal");
      set_image_args(horizontal, 0, in);
      horizontal.setArg(3, sums.buffer);
      horizontal.setArg(4, read.lo);
      horizontal.setArg(5, sums_pitch);
      horizontal.setArg(set_table_args(horizontal, 6, table, *plan), read.lo);
      ctx.enqueue(horizontal, groups, static_cast<std::size_t>(read.rows()), "scale row sums");
      cl::Kernel vertical = ctx.kernel(program, "scale_vertical");
      vertical.setArg(0, sums.buffer);
      vertical.setArg(1, read.lo);
      vertical.setArg(2, sums_pitch);
      set_image_args(vertical, 3, output);
      vertical.setArg(6, table);
      vertical.setArg(7, plan->y_offset);
      vertical.setArg(8, ctx.y0());
      ctx.set_epilogue_args(vertical, 9);
      ctx.enqueue(vertical, groups, static_cast<std::size_t>(rows), "scale columns");
      return;
    }
    cl::Kernel kernel = ctx.kernel(program, "scale_rows");
    set_band_args(kernel, false);
    ctx.enqueue(kernel, groups, static_cast<std::size_t>(rows), "scale");
  }

  // The kernel's arithmetic on the same table, pixel by pixel (see Sum and kernels/scale.cl).
  // An output of another size or format is replaced by one of the output's.
  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    const Frame& in = *inputs[0];
    const PixelFormat format = output_format(std::array{in.format()});
    const Size from{in.width(), in.height()};
    const Size to = output_size(std::array{from});
    if (output.empty() || output.width() != to.width || output.height() != to.height ||
        output.format() != format) {
      output = Frame(to.width, to.height, format);
    }
    const bool u8 = format == PixelFormat::rgba8;
    const std::shared_ptr<const Plan> held = plan_for(from, to, u8);
    const Plan& plan = *held;
    tbb::parallel_for(tbb::blocked_range<int>(0, to.height), [&](const auto& range) {
      for (int y = range.begin(); y != range.end(); ++y) {
        const std::int32_t* ye = plan.row(y);
        for (int x = 0; x < to.width; ++x) {
          const std::int32_t* xe = plan.column(x);
          for (int c = 0; c < 4; ++c) {
            if (u8) {
              output.row(y)[4 * x + c] = pixel8(plan, in, xe, ye, c);
            } else {
              output.row_as<float>(y)[4 * x + c] = weighted(plan, in, xe, ye, c) * plan.inv_area;
            }
          }
        }
      }
    });
  }

 private:
  // Channel c of one 8-bit output pixel.
  static std::uint8_t pixel8(const Plan& plan, const Frame& in, const std::int32_t* xe,
                             const std::int32_t* ye, int c) {
    const int tx = plan.taps_x, ty = plan.taps_y;
    auto row_sum = [&](int j) {
      const std::uint8_t* row = in.row(ye[j]);
      std::int32_t h = 0;
      for (int i = 0; i < tx; ++i) h += row[4 * xe[i] + c] * xe[tx + i];
      return h;
    };
    switch (plan.sum) {
      case Sum::linear8: {
        const std::int32_t v =
            ((ye[2] * (row_sum(0) >> 4)) >> 16) + ((ye[3] * (row_sum(1) >> 4)) >> 16);
        return to_u8((v + 2) >> 2);
      }
      case Sum::cubic8: {
        auto term = [&](int j) {
          return static_cast<float>(row_sum(j)) * (static_cast<float>(ye[ty + j]) * 0x1.0p-22f);
        };
        float acc = term(3);
        for (int j = 2; j >= 0; --j) acc = term(j) + acc;
        return to_u8(acc);
      }
      case Sum::fixed8: {
        std::int32_t v = 0;
        for (int j = 0; j < ty; ++j) v += row_sum(j) * ye[ty + j];
        return to_u8((v + (1 << 21)) >> 22);
      }
      case Sum::blocks8: {
        std::int32_t s = 0;
        for (int j = 0; j < ty; ++j) s += row_sum(j);
        return plan.halves ? to_u8((s + 2) >> 2) : to_u8(static_cast<float>(s) * plan.inv_area);
      }
      case Sum::weighted:
        break;
    }
    return to_u8(weighted(plan, in, xe, ye, c));
  }

  // Channel c of one output pixel by float weights: each row's sum of its taps, then the sum of
  // the rows, each a product and an addition rounded apart (as compiled for x86-64's baseline,
  // which has no fused multiply-add to contract them into).
  static float weighted(const Plan& plan, const Frame& in, const std::int32_t* xe,
                        const std::int32_t* ye, int c) {
    const int tx = plan.taps_x, ty = plan.taps_y;
    const bool u8 = in.format() == PixelFormat::rgba8;
    float v = 0;
    for (int j = 0; j < ty; ++j) {
      auto tap = [&](int i) {
        const std::size_t at = 4 * static_cast<std::size_t>(xe[i]) + c;
        return u8 ? static_cast<float>(in.row(ye[j])[at]) : in.row_as<float>(ye[j])[at];
      };
      float h = tap(0) * std::bit_cast<float>(xe[tx]);
      for (int i = 1; i < tx; ++i) h = h + tap(i) * std::bit_cast<float>(xe[tx + i]);
      const float term = std::bit_cast<float>(ye[ty + j]) * h;
      v = j == 0 ? term : v + term;
    }
    return v;
  }

  // Sets the table and where its columns by tap lie (x_offset, padded_width) from `index` on;
  // returns the index after them.
  static cl_uint set_table_args(cl::Kernel& kernel, cl_uint index, const cl::Buffer& table,
                                const Plan& plan) {
    kernel.setArg(index, table);
    kernel.setArg(index + 1, plan.x_offset);
    kernel.setArg(index + 2, plan.padded_width);
    return index + 3;
  }

  // Whether scale_tiled's work-group and its local memory fit the device.
  static bool fits_tile(const Device& device, const Plan& plan) {
    const std::size_t bytes = tile_local_bytes(plan.tile_rows, plan.tile_input_rows, plan.taps_y);
    return plan.tile_rows > 0 && kTileWidth * kTileHeight <= device.info().max_work_group_size &&
           bytes <= device.info().local_memory;
  }

  std::shared_ptr<Plan> plan_for(Size in, Size out, bool u8) const {
    const std::tuple key{in.width, in.height, out.width, out.height, u8};
    std::lock_guard lock(mutex_);
    std::shared_ptr<Plan>& plan = plans_[key];
    if (!plan) {
      // Sizes seldom change; a long video of changing sizes would otherwise keep every table.
      if (plans_.size() > 16) {
        plans_.clear();
        return plans_[key] = make_plan(method_, in, out, u8);
      }
      plan = make_plan(method_, in, out, u8);
    }
    return plan;
  }

  // The table in `device`'s context, copied there the first time.
  cl::Buffer table_on(Device& device, Plan& plan) const {
    std::lock_guard lock(mutex_);
    cl::Buffer& buffer = plan.buffers[device.context()()];
    if (!buffer()) {
      try {
        buffer = cl::Buffer(device.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                            plan.table.size() * sizeof(std::int32_t), plan.table.data());
      } catch (const cl::Error& e) {
        throw Error(e.err(), "clCreateBuffer", "copying scale's table to " + device.info().name);
      }
    }
    return buffer;
  }

  SizeExpressions sizes_;
  Method method_;
  Fit fit_;
  int divisible_by_;
  mutable std::mutex mutex_;
  mutable std::map<std::tuple<int, int, int, int, bool>, std::shared_ptr<Plan>> plans_;
};

FilterSpec describe_scale() {
  const std::string side =
      " in pixels, a number or an expression as FFmpeg's scale takes (iw/2, ih*2/3, "
      "'min(1280,iw)': quoted where it has a comma; w may use oh or h ow, not both): 0 keeps "
      "the input's, -1 follows the other side in the input's aspect ratio, -n does so rounded "
      "to a multiple of n (n up to 64)";
  return {
      .name = "scale",
      .help =
          "Resizes the frame as OpenCV's cv::resize does (pixel centres onto pixel centres, "
          "borders replicated): scale=w:h, FFmpeg's sizes.",
      .params = {size_param("w", "iw", -64, kMaxSide, "output width" + side),
                 size_param("h", "ih", -64, kMaxSide, "output height" + side),
                 {.name = "flags",
                  .type = ParamType::choice,
                  .default_value = static_cast<double>(Method::bicubic),
                  .help = "bilinear, bicubic (A = -0.75, FFmpeg's default method), lanczos (8 "
                          "taps) or area (averages what each output pixel covers): OpenCV's "
                          "INTER_LINEAR, INTER_CUBIC, INTER_LANCZOS4, INTER_AREA",
                  .choices = {kMethodNames[0], kMethodNames[1], kMethodNames[2], kMethodNames[3]}},
                 {.name = "force_original_aspect_ratio",
                  .type = ParamType::choice,
                  .default_value = static_cast<double>(Fit::disable),
                  .help = "as FFmpeg's: disable, or w:h as a box that the input's aspect ratio "
                          "fits into (decrease: scale=1280:720:force_original_aspect_ratio="
                          "decrease makes a 4:3 input 960x720) or covers (increase)",
                  .choices = {kFitNames[0], kFitNames[1], kFitNames[2]}},
                 {.name = "force_divisible_by",
                  .type = ParamType::integer,
                  .default_value = 1,
                  .min = 1,
                  .max = 256,
                  .help = "with force_original_aspect_ratio: both sides rounded to multiples of "
                          "this, down for decrease and up for increase (FFmpeg's)"}},
      .make = [](const Params& p) { return std::make_unique<Scale>(p); },
  };
}

TANDEM_REGISTER_FILTER(describe_scale);

}  // namespace
}  // namespace tandem
