// transpose, hflip, vflip: turns and mirrors, one job (kernels/transpose.cl). transpose=dir is
// FFmpeg's: cclock_flip (0, the default; the plain transpose), clock (1), cclock (2) and
// clock_flip (3), the output w and h the input's h and w; every output row reads a whole input
// column, so a band needs all of the input's rows. hflip mirrors each row; vflip the order of
// the rows, a band reading the mirrored band. One launch per band; a point-wise chain after it
// runs in its kernel.
#include <cstring>
#include <string>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "tandem/device.hpp"
#include "tandem/error.hpp"
#include "tandem/filter.hpp"

namespace tandem {
namespace {

// FFmpeg's numbering: bit 0 reads the input's rows bottom up, bit 1 its columns right to left.
enum class Turn { cclock_flip, clock, cclock, clock_flip, hflip, vflip };
const char* const kDirNames[] = {"cclock_flip", "clock", "cclock", "clock_flip"};

/// The tiled schedule's block: TILE x TILE pixels, TILE / 4 x TILE work-items.
constexpr int kTile = 32;

class Transpose final : public Filter {
 public:
  Transpose(Turn turn, const char* name) : turn_(turn), name_(name) {}

  PixelFormat output_format(std::span<const PixelFormat> inputs) const override {
    if (inputs.size() != 1) throw Error(std::string(name_) + " takes one input");
    if (is_planar(inputs[0])) {
      throw Error(std::string(name_) + " takes rgba8 or rgba32f frames, not " +
                  std::string(to_string(inputs[0])));
    }
    return inputs[0];
  }

  Size output_size(std::span<const Size> inputs) const override {
    if (inputs.size() != 1) throw Error(std::string(name_) + " takes one input");
    return turns() ? Size{inputs[0].height, inputs[0].width} : inputs[0];
  }

  RowRange input_rows(RowRange rows, int, Size in, Size) const override {
    if (turns()) return {0, in.height};
    if (turn_ == Turn::vflip) return {in.height - rows.hi, in.height - rows.lo};
    return rows;
  }

  bool fuses_epilogue() const override { return true; }

  void enqueue(BandContext& ctx, std::span<const DeviceImage> inputs,
               const DeviceImage& output) const override {
    const DeviceImage& in = inputs[0];
    const bool u8 = in.format == PixelFormat::rgba8;
    const std::string pixels = std::string("-DPIXEL_RGBA8=") + (u8 ? "1" : "0");
    static const std::vector<std::string> kSources{"transpose.cl"};
    const int width = ctx.frame_width();
    const auto items = static_cast<std::size_t>(width + 3) / 4;
    const auto rows = static_cast<std::size_t>(ctx.y1() - ctx.y0());
    if (!turns()) {
      // 16-byte loads on CPUs only, as crop's (filters/crop.cpp).
      const bool h = turn_ == Turn::hflip;
      const bool wide = u8 && (!h || width % 4 == 0) && ctx.device().info().type != DeviceType::gpu;
      cl::Program program = ctx.program(kSources, pixels + (wide ? " -DWIDE_LOADS=1" : ""));
      cl::Kernel kernel = ctx.kernel(program, h ? "hflip" : "vflip");
      set_image_args(kernel, 0, in);
      set_image_args(kernel, 3, output);
      kernel.setArg(6, h ? width : ctx.frame_height());
      kernel.setArg(7, ctx.y0());
      ctx.set_epilogue_args(kernel, 8);
      ctx.enqueue(kernel, items, rows, name_);
      return;
    }
    const int dir = static_cast<int>(turn_);
    const bool tiled = ctx.schedule() == Schedule::tiles && fits(ctx.device(), u8);
    cl::Program program = ctx.program(
        kSources, pixels + (tiled ? " -DTILE=" + std::to_string(kTile) : std::string()));
    const bool by_blocks = !tiled && u8;
    cl::Kernel kernel = ctx.kernel(
        program, tiled ? "transpose_tiled" : by_blocks ? "transpose_blocks" : "transpose_rows");
    set_image_args(kernel, 0, in);
    set_image_args(kernel, 3, output);
    kernel.setArg(6, width);
    kernel.setArg(7, in.width);
    kernel.setArg(8, dir & 1);
    kernel.setArg(9, (dir >> 1) & 1);
    kernel.setArg(10, ctx.y0());
    if (by_blocks) {
      kernel.setArg(11, ctx.y1());
      ctx.set_epilogue_args(kernel, 12);
      ctx.enqueue(kernel, items, (rows + 3) / 4, "transpose (blocks)");
      return;
    }
    if (!tiled) {
      ctx.set_epilogue_args(kernel, 11);
      ctx.enqueue(kernel, items, rows, "transpose");
      return;
    }
    // The band's rows are input columns [lo, hi); blocks start on a multiple of the tile.
    const int lo = dir & 2 ? in.width - ctx.y1() : ctx.y0();
    const int hi = dir & 2 ? in.width - ctx.y0() : ctx.y1();
    const int from = lo / kTile * kTile;
    kernel.setArg(11, ctx.y1());
    kernel.setArg(12, from);
    ctx.set_epilogue_args(kernel, 13);
    const auto blocks = [](int n) { return static_cast<std::size_t>((n + kTile - 1) / kTile); };
    ctx.enqueue(kernel, cl::NDRange(blocks(width) * (kTile / 4), blocks(hi - from) * kTile),
                cl::NDRange(kTile / 4, kTile), "transpose (tiled)");
  }

  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    const Frame& in = *inputs[0];
    const std::size_t bytes = bytes_per_pixel(in.format());
    const int iw = in.width(), ih = in.height();
    const int dir = static_cast<int>(turn_);
    tbb::parallel_for(tbb::blocked_range<int>(0, output.height()), [&](const auto& range) {
      for (int y = range.begin(); y != range.end(); ++y) {
        std::uint8_t* row = output.row(y);
        for (int x = 0; x < output.width(); ++x) {
          int sx = x, sy = y;
          if (turns()) {
            sx = dir & 2 ? iw - 1 - y : y;
            sy = dir & 1 ? ih - 1 - x : x;
          } else if (turn_ == Turn::hflip) {
            sx = iw - 1 - x;
          } else {
            sy = ih - 1 - y;
          }
          std::memcpy(row + x * bytes, in.row(sy) + sx * bytes, bytes);
        }
      }
    });
  }

 private:
  bool turns() const { return turn_ != Turn::hflip && turn_ != Turn::vflip; }

  // Whether the tiled schedule's work-group and block fit the device.
  static bool fits(const Device& device, bool u8) {
    const std::size_t block_bytes = kTile * (kTile + 1) * (u8 ? 4 : 16);
    return kTile / 4 * kTile <= device.info().max_work_group_size &&
           block_bytes <= device.info().local_memory;
  }

  Turn turn_;
  const char* name_;
};

FilterSpec describe_transpose() {
  return {
      .name = "transpose",
      .help =
          "Turns the frame a quarter, as FFmpeg's transpose: rows become columns, w and h "
          "swap.",
      .params = {{.name = "dir",
                  .type = ParamType::choice,
                  .default_value = 0,
                  .help = "cclock_flip: the plain transpose (turned counter-clockwise and "
                          "flipped upside down); clock, cclock: turned clockwise, "
                          "counter-clockwise; clock_flip: turned clockwise and flipped",
                  .choices = {kDirNames[0], kDirNames[1], kDirNames[2], kDirNames[3]}}},
      .make =
          [](const Params& p) {
            return std::make_unique<Transpose>(static_cast<Turn>(p.integer("dir")), "transpose");
          },
  };
}

FilterSpec describe_hflip() {
  return {
      .name = "hflip",
      .help = "Mirrors the frame left to right, as FFmpeg's hflip.",
      .make = [](const Params&) { return std::make_unique<Transpose>(Turn::hflip, "hflip"); },
  };
}

FilterSpec describe_vflip() {
  return {
      .name = "vflip",
      .help = "Turns the frame upside down (mirrors it top to bottom), as FFmpeg's vflip.",
      .make = [](const Params&) { return std::make_unique<Transpose>(Turn::vflip, "vflip"); },
  };
}

TANDEM_REGISTER_FILTER(describe_transpose);
TANDEM_REGISTER_FILTER(describe_hflip);
TANDEM_REGISTER_FILTER(describe_vflip);

}  // namespace
}  // namespace tandem
