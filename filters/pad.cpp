// pad: the input placed at x, y on a w x h frame of one colour, as FFmpeg's pad=w:h:x:y:color.
// A size change: output row y reads input row y - top, and rows of the padding read none (a band
// wholly inside it uploads nothing and only fills). One launch per band; a point-wise chain after
// it runs in its kernel, on the padding too (kernels/pad.cl).
#include <algorithm>
#include <cstdint>
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

// FFmpeg's (HTML's) colour names, for the colours a numeric parameter table can offer.
struct Colour {
  const char* name;
  std::uint8_t rgba[4];
};
constexpr Colour kColours[] = {
    {"black", {0, 0, 0, 255}},      {"white", {255, 255, 255, 255}},
    {"gray", {128, 128, 128, 255}}, {"red", {255, 0, 0, 255}},
    {"green", {0, 128, 0, 255}},    {"lime", {0, 255, 0, 255}},
    {"blue", {0, 0, 255, 255}},     {"yellow", {255, 255, 0, 255}},
    {"cyan", {0, 255, 255, 255}},   {"magenta", {255, 0, 255, 255}},
    {"transparent", {0, 0, 0, 0}},
};

class Pad final : public Filter {
 public:
  explicit Pad(const Params& params)
      : sizes_(params, SizeRounding::truncate, true), colour_(kColours[params.integer("color")]) {
    // Float frames take the 8-bit colour normalised, as filters see 8-bit values.
    for (int c = 0; c < 4; ++c) colour_float_[c] = colour_.rgba[c] / 255.0f;
  }

  PixelFormat output_format(std::span<const PixelFormat> inputs) const override {
    if (inputs.size() != 1) throw Error("pad takes one input");
    if (is_planar(inputs[0])) {
      throw Error("pad takes rgba8 or rgba32f frames, not " + std::string(to_string(inputs[0])));
    }
    return inputs[0];
  }

  Size output_size(std::span<const Size> inputs) const override {
    if (inputs.size() != 1) throw Error("pad takes one input");
    return place(inputs[0]).size;
  }

  RowRange input_rows(RowRange rows, int, Size in, Size) const override {
    const int top = place(in).top;
    const RowRange r{std::clamp(rows.lo - top, 0, in.height),
                     std::clamp(rows.hi - top, 0, in.height)};
    return r.empty() ? RowRange{} : r;
  }

  bool fuses_epilogue() const override { return true; }

  void enqueue(BandContext& ctx, std::span<const DeviceImage> inputs,
               const DeviceImage& output) const override {
    const DeviceImage& in = inputs[0];
    const bool u8 = output.format == PixelFormat::rgba8;
    // Sixteen 8-bit pixels a work-item on CPUs, one 64-byte load where they lie inside the input
    // (bench-results/2026-11-27-vm-s24-pad16.txt); four elsewhere.
    const int group = u8 && ctx.device().info().type != DeviceType::gpu ? 16 : 4;
    static const std::vector<std::string> kSources{"pad.cl"};
    cl::Program program = ctx.program(kSources, std::string("-DPIXEL_RGBA8=") + (u8 ? "1" : "0") +
                                                    " -DGROUP=" + std::to_string(group));
    const std::size_t items = static_cast<std::size_t>((ctx.frame_width() + group - 1) / group);
    const std::size_t rows = static_cast<std::size_t>(ctx.y1() - ctx.y0());
    cl_uint arg = 0;
    cl::Kernel kernel;
    if (in.rows == 0) {
      // The band lies wholly in the padding: the executor holds no input rows for it.
      kernel = ctx.kernel(program, "pad_fill");
      arg = set_image_args(kernel, 0, output);
      kernel.setArg(arg++, ctx.y0());
    } else {
      const Placement p = place({in.width, in.height});
      kernel = ctx.kernel(program, "pad");
      set_image_args(kernel, 0, in);
      arg = set_image_args(kernel, 3, output);
      kernel.setArg(arg++, in.width);
      kernel.setArg(arg++, in.height);
      kernel.setArg(arg++, p.left);
      kernel.setArg(arg++, p.top);
      kernel.setArg(arg++, ctx.y0());
    }
    if (u8) {
      kernel.setArg(
          arg++, cl_uchar4{{colour_.rgba[0], colour_.rgba[1], colour_.rgba[2], colour_.rgba[3]}});
    } else {
      kernel.setArg(arg++, cl_float4{{colour_float_[0], colour_float_[1], colour_float_[2],
                                      colour_float_[3]}});
    }
    ctx.set_epilogue_args(kernel, arg);
    ctx.enqueue(kernel, items, rows, in.rows == 0 ? "pad (padding alone)" : "pad");
  }

  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    const Frame& in = *inputs[0];
    const Placement p = place({in.width(), in.height()});
    const std::size_t bytes = bytes_per_pixel(in.format());
    std::uint8_t fill[16];
    if (in.format() == PixelFormat::rgba8) {
      std::memcpy(fill, colour_.rgba, 4);
    } else {
      std::memcpy(fill, colour_float_, 16);
    }
    tbb::parallel_for(tbb::blocked_range<int>(0, p.size.height), [&](const auto& range) {
      for (int y = range.begin(); y != range.end(); ++y) {
        std::uint8_t* row = output.row(y);
        for (int x = 0; x < p.size.width; ++x) std::memcpy(row + x * bytes, fill, bytes);
        if (y >= p.top && y < p.top + in.height()) {
          std::memcpy(row + p.left * bytes, in.row(y - p.top), in.width() * bytes);
        }
      }
    });
  }

 private:
  struct Placement {
    Size size;
    int left, top;
  };

  // The output's size and where an input of `in` lies on it: 0 (or -1) sizes are the input's,
  // -1 places it centred.
  Placement place(Size in) const {
    const SizeExpressions::Values v = sizes_.evaluate(in);
    Placement p;
    p.size = {static_cast<int>(v.w), static_cast<int>(v.h)};
    p.left = v.x == -1 ? (p.size.width - in.width) / 2 : static_cast<int>(v.x);
    p.top = v.y == -1 ? (p.size.height - in.height) / 2 : static_cast<int>(v.y);
    if (p.left < 0 || p.top < 0 || p.left + in.width > p.size.width ||
        p.top + in.height > p.size.height) {
      throw Error("the " + to_string(in) + " input at " + std::to_string(p.left) + "," +
                  std::to_string(p.top) + " leaves the " + to_string(p.size) + " output");
    }
    return p;
  }

  SizeExpressions sizes_;
  Colour colour_;
  float colour_float_[4];
};

FilterSpec describe_pad() {
  constexpr double kLargest = 1 << 16;
  std::vector<std::string> colours;
  for (const Colour& c : kColours) colours.emplace_back(c.name);
  const std::string kExpressions = " (or an expression: iw+40, (ow-iw)/2)";
  return {
      .name = "pad",
      .help =
          "Places the input at x, y on a w x h frame of one colour, as FFmpeg's pad (by "
          "default at the top left).",
      .params = {size_param("w", "iw", -1, kLargest,
                            "width of the output, at least the input's (0 or -1: the input's)" +
                                kExpressions),
                 size_param("h", "ih", -1, kLargest,
                            "height of the output, at least the input's (0 or -1: the input's)" +
                                kExpressions),
                 size_param("x", "0", -1, kLargest,
                            "column of the input's left edge (-1: centred)" + kExpressions),
                 size_param("y", "0", -1, kLargest,
                            "row of the input's top edge (-1: centred)" + kExpressions),
                 {.name = "color",
                  .type = ParamType::choice,
                  .default_value = 0,
                  .help = "colour of the padding (FFmpeg's names: green is 0x008000, lime "
                          "0x00ff00; float frames take the 8-bit values / 255)",
                  .choices = std::move(colours)}},
      .make = [](const Params& p) { return std::make_unique<Pad>(p); },
  };
}

TANDEM_REGISTER_FILTER(describe_pad);

}  // namespace
}  // namespace tandem
