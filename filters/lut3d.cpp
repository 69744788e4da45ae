// lut3d: a colour look-up table from an Adobe/Resolve .cube file, as FFmpeg's lut3d applies it:
// R'G'B' scaled from the table's domain to its grid, then interpolated between the nearest
// entries (nearest, trilinear, or tetrahedral: four entries, FFmpeg's default). The table lives
// in device memory, copied once per device (BandContext::constant()); the kernel runs the
// point-wise chain after it (kernels/lut3d.cl). Parsed tables are kept by path while the file
// is unchanged (file_cache.hpp).
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "file_cache.hpp"
#include "tandem/error.hpp"
#include "tandem/filter.hpp"
#include "tandem/pointwise.hpp"

namespace tandem {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxSize = 65;

// A parsed .cube table: entry (r, g, b) at r + n (g + n b), red fastest as the file lists them;
// each entry R, G, B and a zero, as the kernel loads float4s.
struct Table {
  int n = 0;
  std::array<float, 3> domain_min{0, 0, 0}, domain_max{1, 1, 1};
  std::vector<float> entries;
  std::uint64_t version = 0;
};

// The words of a line, split at spaces and tabs.
std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool to_number(std::string_view word, float& value) {
  const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  return ec == std::errc() && ptr == word.data() + word.size() && std::isfinite(value);
}

std::shared_ptr<const Table> parse_cube(const std::string& name) {
  const fs::path path(name);
  std::ifstream in(path);
  if (!in) throw Error("cannot read '" + path.string() + "'");
  auto table = std::make_shared<Table>();
  std::size_t count = 0, expected = 0;
  int line_number = 0;
  std::string line;
  auto fail = [&](const std::string& message) {
    throw Error(path.string() + ":" + std::to_string(line_number) + ": " + message);
  };
  auto numbers = [&](const std::vector<std::string_view>& w, std::size_t first, std::size_t n) {
    std::array<float, 3> v{};
    if (w.size() != first + n) {
      fail("expected " + std::to_string(n) + " numbers after " + std::string(w[0]));
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (!to_number(w[first + i], v[i])) {
        std::string word(w[first + i]);
        fail("'" + word.append("' is not a number"));
      }
    }
    return v;
  };
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::vector<std::string_view> w = words(line);
    if (w.empty() || w[0].front() == '#') continue;
    const std::string_view key = w[0];
    if (key == "TITLE") continue;
    if (key == "LUT_1D_SIZE") fail("a 1D table (LUT_1D_SIZE): lut3d takes 3D tables (LUT_3D_SIZE)");
    if (key == "LUT_3D_SIZE") {
      if (table->n) fail("LUT_3D_SIZE given twice");
      float n = 0;
      if (w.size() != 2 || !to_number(w[1], n) || n != std::floor(n) || n < 2 || n > kMaxSize) {
        fail("LUT_3D_SIZE must be a whole number from 2 to " + std::to_string(kMaxSize));
      }
      table->n = static_cast<int>(n);
      expected = static_cast<std::size_t>(table->n) * table->n * table->n;
      table->entries.reserve(4 * expected);
      continue;
    }
    if (key == "DOMAIN_MIN" || key == "DOMAIN_MAX") {
      (key == "DOMAIN_MIN" ? table->domain_min : table->domain_max) = numbers(w, 1, 3);
      continue;
    }
    if (key == "LUT_3D_INPUT_RANGE") {  // Resolve's: one range for the three channels
      const std::array<float, 3> r = numbers(w, 1, 2);
      table->domain_min = {r[0], r[0], r[0]};
      table->domain_max = {r[1], r[1], r[1]};
      continue;
    }
    float first = 0;
    if (!to_number(key, first)) fail("unknown keyword '" + std::string(key) + "'");
    if (!table->n) fail("a table entry before LUT_3D_SIZE");
    if (count == expected) {
      fail("more than LUT_3D_SIZE^3 = " + std::to_string(expected) + " entries");
    }
    if (w.size() != 3) fail("expected three numbers (R G B), found " + std::to_string(w.size()));
    const std::array<float, 3> v = numbers(w, 0, 3);
    table->entries.insert(table->entries.end(), {v[0], v[1], v[2], 0.0f});
    ++count;
  }
  if (!table->n) throw Error(path.string() + ": no LUT_3D_SIZE: not a 3D .cube table");
  if (count != expected) {
    throw Error(path.string() + ": " + std::to_string(count) + " entries where LUT_3D_SIZE " +
                std::to_string(table->n) + " needs " + std::to_string(expected));
  }
  for (int c = 0; c < 3; ++c) {
    if (!(table->domain_max[c] > table->domain_min[c])) {
      throw Error(path.string() + ": the domain's maximum must exceed its minimum");
    }
  }
  table->version = file_cache::next_version();
  return table;
}

enum class Interp { nearest, trilinear, tetrahedral };

class Lut3d final : public Filter {
 public:
  explicit Lut3d(const Params& params) : interp_(static_cast<Interp>(params.integer("interp"))) {
    const std::string& file = params.text("file");
    if (file.empty()) throw Error("lut3d needs a table: lut3d=file=NAME.cube");
    table_ = file_cache::load<Table>(file, parse_cube);
    for (int c = 0; c < 3; ++c) {
      scale_.s[c] =
          static_cast<float>(table_->n - 1) / (table_->domain_max[c] - table_->domain_min[c]);
      min_.s[c] = table_->domain_min[c];
    }
    scale_.s[3] = min_.s[3] = 0;
  }

  bool fuses_epilogue() const override { return true; }

  void enqueue(BandContext& ctx, std::span<const DeviceImage> inputs,
               const DeviceImage& output) const override {
    const DeviceImage& in = inputs[0];
    const cl::Buffer lut = ctx.constant(this, 0, table_->entries.data(),
                                        table_->entries.size() * sizeof(float), table_->version);
    static const std::vector<std::string> kSources{"lut3d.cl"};
    cl::Program program = ctx.program(
        kSources, "-DPIXEL_RGBA8=" + std::string(in.format == PixelFormat::rgba8 ? "1" : "0") +
                      " -DINTERP=" + std::to_string(static_cast<int>(interp_)));
    cl::Kernel kernel = ctx.kernel(program, "lut3d");
    cl_uint arg = set_image_args(kernel, 0, in);
    arg = set_image_args(kernel, arg, output);
    kernel.setArg(arg++, ctx.y0());
    kernel.setArg(arg++, lut);
    kernel.setArg(arg++, table_->n);
    kernel.setArg(arg++, scale_);
    kernel.setArg(arg++, min_);
    ctx.set_epilogue_args(kernel, arg);
    ctx.enqueue(kernel, static_cast<std::size_t>(ctx.frame_width() + 3) / 4,
                static_cast<std::size_t>(ctx.y1() - ctx.y0()), "lut3d");
  }

  // The kernel's arithmetic in its order, its fma()s as std::fma (lookup() in kernels/lut3d.cl).
  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    for_each_pixel(*inputs[0], output, [&](Pixel px) { return lookup(px); });
  }

 private:
  std::array<float, 3> entry(int r, int g, int b) const {
    const float* e = &table_->entries[4 * (static_cast<std::size_t>(b) * table_->n * table_->n +
                                           static_cast<std::size_t>(g) * table_->n + r)];
    return {e[0], e[1], e[2]};
  }

  Pixel lookup(Pixel px) const {
    const float top = static_cast<float>(table_->n - 1);
    const float in[3] = {px.r, px.g, px.b};
    float s[3], d[3];
    int lo[3], hi[3];
    for (int c = 0; c < 3; ++c) {
      // OpenCL's clamp() is fmin(fmax()): NaN becomes 0.
      s[c] = std::fmin(std::fmax((in[c] - min_.s[c]) * scale_.s[c], 0.0f), top);
      lo[c] = static_cast<int>(s[c]);
      hi[c] = std::min(lo[c] + 1, table_->n - 1);
      d[c] = s[c] - static_cast<float>(lo[c]);
    }
    std::array<float, 3> out{};
    auto at = [&](bool r, bool g, bool b) {
      return entry(r ? hi[0] : lo[0], g ? hi[1] : lo[1], b ? hi[2] : lo[2]);
    };
    if (interp_ == Interp::nearest) {
      out = entry(static_cast<int>(s[0] + 0.5f), static_cast<int>(s[1] + 0.5f),
                  static_cast<int>(s[2] + 0.5f));
    } else if (interp_ == Interp::trilinear) {
      for (int c = 0; c < 3; ++c) {
        auto lerp = [&](float a, float b, float t) { return std::fma(b - a, t, a); };
        const float c00 = lerp(at(0, 0, 0)[c], at(1, 0, 0)[c], d[0]);
        const float c01 = lerp(at(0, 0, 1)[c], at(1, 0, 1)[c], d[0]);
        const float c10 = lerp(at(0, 1, 0)[c], at(1, 1, 0)[c], d[0]);
        const float c11 = lerp(at(0, 1, 1)[c], at(1, 1, 1)[c], d[0]);
        out[c] = lerp(lerp(c00, c10, d[1]), lerp(c01, c11, d[1]), d[2]);
      }
    } else {
      // Four entries of the tetrahedron the point lies in: weights 1 - largest, the
      // differences of the sorted fractions, and the smallest.
      const float r = d[0], g = d[1], b = d[2];
      std::array<float, 3> e1, e2;
      float w0, w1, w2, w3;
      if (r > g) {
        if (g > b) {
          e1 = at(1, 0, 0), e2 = at(1, 1, 0), w0 = 1 - r, w1 = r - g, w2 = g - b, w3 = b;
        } else if (r > b) {
          e1 = at(1, 0, 0), e2 = at(1, 0, 1), w0 = 1 - r, w1 = r - b, w2 = b - g, w3 = g;
        } else {
          e1 = at(0, 0, 1), e2 = at(1, 0, 1), w0 = 1 - b, w1 = b - r, w2 = r - g, w3 = g;
        }
      } else {
        if (b > g) {
          e1 = at(0, 0, 1), e2 = at(0, 1, 1), w0 = 1 - b, w1 = b - g, w2 = g - r, w3 = r;
        } else if (b > r) {
          e1 = at(0, 1, 0), e2 = at(0, 1, 1), w0 = 1 - g, w1 = g - b, w2 = b - r, w3 = r;
        } else {
          e1 = at(0, 1, 0), e2 = at(1, 1, 0), w0 = 1 - g, w1 = g - r, w2 = r - b, w3 = b;
        }
      }
      const std::array<float, 3> e0 = at(0, 0, 0), e3 = at(1, 1, 1);
      for (int c = 0; c < 3; ++c) {
        out[c] = std::fma(w3, e3[c], std::fma(w2, e2[c], std::fma(w1, e1[c], w0 * e0[c])));
      }
    }
    return {out[0], out[1], out[2], px.a};
  }

  Interp interp_;
  std::shared_ptr<const Table> table_;
  cl_float4 scale_{}, min_{};
};

FilterSpec describe_lut3d() {
  return {
      .name = "lut3d",
      .help =
          "A colour look-up table from an Adobe/Resolve .cube file (LUT_3D_SIZE up to 65, "
          "DOMAIN_MIN/MAX), as FFmpeg's lut3d applies it; alpha unchanged.",
      .params = {{.name = "file",
                  .type = ParamType::text,
                  .help = "the .cube file (quote a path with spaces or colons: file='a b.cube')"},
                 {.name = "interp",
                  .type = ParamType::choice,
                  .default_value = 2,
                  .help = "how entries between the grid's points are made",
                  .choices = {"nearest", "trilinear", "tetrahedral"}}},
      .make = [](const Params& p) { return std::make_unique<Lut3d>(p); },
  };
}

TANDEM_REGISTER_FILTER(describe_lut3d);

}  // namespace
}  // namespace tandem
