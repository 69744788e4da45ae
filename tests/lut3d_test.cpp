// lut3d against its host reference on every device (awkward sizes, both formats, the three
// interpolations, tables of 2 to 65 points a side with a domain other than 0..1), against an
// affine function its tables sample (which trilinear and tetrahedral interpolation reproduce),
// co-executed and fused; .cube files that are not tables fail with their line; text options
// (the file's path) parse, print and quote.
// Tolerances: 1 LSB on 8-bit (host and device round the same float arithmetic, the device's
// fma() against std::fma; a value at a rounding tie may go either way), 1e-5 on float values.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>

#include "test_support.hpp"

namespace tandem {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using test::run_graph;
using test::run_reference;

class Lut3dFiles {
 public:
  Lut3dFiles() : dir_(fs::temp_directory_path() / ("tandem-lut3d-" + std::to_string(::getpid()))) {
    fs::create_directories(dir_);
  }
  ~Lut3dFiles() { fs::remove_all(dir_); }
  // A .cube file of `text`, under `name`.
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }
  // A table of n points a side over [lo, hi] of f at each point, red fastest.
  std::string table(const std::string& name, int n, float lo, float hi,
                    const std::function<std::array<float, 3>(float, float, float)>& f) const {
    std::string text = "TITLE \"test\"\n# a comment\nLUT_3D_SIZE " + std::to_string(n) + "\n";
    if (lo != 0 || hi != 1) {
      text += "DOMAIN_MIN " + std::to_string(lo) + " " + std::to_string(lo) + " " +
              std::to_string(lo) + "\nDOMAIN_MAX " + std::to_string(hi) + " " + std::to_string(hi) +
              " " + std::to_string(hi) + "\n";
    }
    char line[96];
    for (int b = 0; b < n; ++b) {
      for (int g = 0; g < n; ++g) {
        for (int r = 0; r < n; ++r) {
          auto at = [&](int i) { return lo + (hi - lo) * static_cast<float>(i) / (n - 1); };
          const auto v = f(at(r), at(g), at(b));
          std::snprintf(line, sizeof line, "%.9g %.9g %.9g\n", v[0], v[1], v[2]);
          text += line;
        }
      }
    }
    return write(name, text);
  }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

// An affine colour transform (a grade): interpolation between its samples reproduces it.
std::array<float, 3> affine(float r, float g, float b) {
  return {0.7f * r + 0.2f * g + 0.05f, 0.1f * r + 0.8f * g + 0.1f * b, 0.3f * b + 0.6f * r + 0.02f};
}

// A curved table, so that the interpolations differ.
std::array<float, 3> curved(float r, float g, float b) {
  return {std::sqrt(std::max(r, 0.0f)) * 0.9f + 0.05f * g, g * g,
          0.5f + 0.5f * std::sin(3 * b + r)};
}

class Lut3dTest : public ::testing::TestWithParam<std::string> {
 protected:
  Lut3dFiles files_;
};

TEST_P(Lut3dTest, MatchesHostReference) {
  const std::string device = GetParam();
  const std::string small = files_.table("small.cube", 2, 0, 1, curved);
  const std::string medium = files_.table("medium.cube", 17, -0.25f, 1.25f, curved);
  const std::string large = files_.table("large.cube", 65, 0, 1, curved);
  for (const auto& size : test::kAwkwardSizes) {
    for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
      // Float values reach past the tables' domains on both sides.
      Frame input = test::random_frame(size.width, size.height, format, 5 + size.width, 1.6f);
      if (format == PixelFormat::rgba32f) {
        for (int y = 0; y < size.height; ++y) {
          for (int i = 0; i < 4 * size.width; ++i) input.row_as<float>(y)[i] -= 0.3f;
        }
      }
      for (const std::string& table : {small, medium, large}) {
        for (const char* interp : {"nearest", "trilinear", "tetrahedral"}) {
          const std::string graph = "lut3d=file=" + table + ":interp=" + interp;
          SCOPED_TRACE(graph + " on " + std::to_string(size.width) + "x" +
                       std::to_string(size.height) + " " + std::string(to_string(format)));
          const Frame got = run_graph(graph, input, device, "single");
          const Frame want = run_reference(graph, input);
          if (format == PixelFormat::rgba8) {
            EXPECT_LE(test::max_difference(got, want), 1.0);
          } else {
            EXPECT_LE(test::max_difference(got, want), 1e-5);
          }
        }
      }
    }
  }
}

TEST_P(Lut3dTest, ReproducesTheAffineFunctionItSamples) {
  const std::string table = files_.table("affine.cube", 9, 0, 1, affine);
  const Frame input = test::random_frame(67, 19, PixelFormat::rgba32f, 9, 1.0f);
  for (const char* interp : {"trilinear", "tetrahedral"}) {
    SCOPED_TRACE(interp);
    const Frame got =
        run_graph("lut3d=file=" + table + ":interp=" + interp, input, GetParam(), "single");
    double worst = 0;
    for (int y = 0; y < input.height(); ++y) {
      for (int x = 0; x < input.width(); ++x) {
        const float* p = input.row_as<float>(y) + 4 * x;
        const float* q = got.row_as<float>(y) + 4 * x;
        const auto want = affine(p[0], p[1], p[2]);
        for (int c = 0; c < 3; ++c) worst = std::max(worst, std::abs(double(q[c]) - want[c]));
        EXPECT_EQ(q[3], p[3]);  // alpha kept
      }
    }
    EXPECT_LE(worst, 1e-5);
  }
}

TEST_P(Lut3dTest, CoExecutedAndFusedEqualOneDeviceUnfused) {
  const std::string table = files_.table("grade.cube", 33, 0, 1, curved);
  const std::string graph = "box=radius=1,lut3d=file=" + table + ",saturation=1.3";
  const Frame input = test::random_frame(203, 117, PixelFormat::rgba8, 21);
  const Frame single = run_graph(graph, input, GetParam(), "single");
  EXPECT_EQ(test::max_difference(run_graph(graph, input, GetParam(), "single", false), single),
            0.0);
  // The passes: box, then lut3d running saturation in its kernel.
  DeviceSet devices = DeviceSet::open(GetParam());
  Pipeline pipeline(devices, Graph::parse(graph), {.persist_split = false});
  Frame output;
  pipeline.process(input, output);
  EXPECT_EQ(pipeline.passes().size(), 2u);
  const std::string pair = test::same_platform_pair();
  if (!pair.empty()) {
    EXPECT_EQ(test::max_difference(run_graph(graph, input, pair, test::split_first(0.37, pair)),
                                   run_graph(graph, input, pair, "single")),
              0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryDevice, Lut3dTest, ::testing::ValuesIn(test::device_ids()),
                         [](const auto& info) { return test::device_test_name(info.param); });

// Validating the graph reads the table: a file that is not one fails with its line.
std::string cube_error(const Lut3dFiles& files, const std::string& text) {
  const std::string path = files.write("bad.cube", text);
  return error_of([&] { Graph::parse("lut3d=file=" + path).validate(PixelFormat::rgba8); });
}

TEST(Lut3d, MalformedFilesFailWithTheirLine) {
  Lut3dFiles files;
  EXPECT_NE(cube_error(files, "LUT_3D_SIZE 2\n0 0 0\n1 0 0\n0 x 0\n")
                .find("bad.cube:4: 'x' is not a number"),
            std::string::npos);
  EXPECT_NE(
      cube_error(files, "LUT_3D_SIZE 2\n0 0 0\n1 0\n").find("bad.cube:3: expected three numbers"),
      std::string::npos);
  EXPECT_NE(cube_error(files, "0 0 0\n").find("bad.cube:1: a table entry before LUT_3D_SIZE"),
            std::string::npos);
  EXPECT_NE(cube_error(files, "LUT_3D_SIZE 66\n")
                .find("bad.cube:1: LUT_3D_SIZE must be a whole number from 2 to 65"),
            std::string::npos);
  EXPECT_NE(cube_error(files, "# x\nLUT_1D_SIZE 4\n").find("bad.cube:2: a 1D table"),
            std::string::npos);
  EXPECT_NE(
      cube_error(files, "LUT_3D_SIZE 2\nGAMMA 2\n").find("bad.cube:2: unknown keyword 'GAMMA'"),
      std::string::npos);
  EXPECT_NE(
      cube_error(files, "LUT_3D_SIZE 2\n0 0 0\n").find("1 entries where LUT_3D_SIZE 2 needs 8"),
      std::string::npos);
  std::string nine = "LUT_3D_SIZE 2\n";
  for (int i = 0; i < 9; ++i) nine += "0 0 0\n";
  EXPECT_NE(cube_error(files, nine).find("bad.cube:10: more than LUT_3D_SIZE^3 = 8 entries"),
            std::string::npos);
  EXPECT_NE(cube_error(files, "").find("no LUT_3D_SIZE"), std::string::npos);
  const std::string missing = error_of([&] {
    Graph::parse("lut3d=file=" + (files.dir() / "none.cube").string()).validate(PixelFormat::rgba8);
  });
  EXPECT_NE(missing.find("cannot read"), std::string::npos) << missing;
  const std::string no_file = error_of([] { Graph::parse("lut3d").validate(PixelFormat::rgba8); });
  EXPECT_NE(no_file.find("lut3d needs a table"), std::string::npos) << no_file;
}

TEST(Lut3d, PathsParsePrintAndQuote) {
  Lut3dFiles files;
  const std::string spaced = files.table("a grade: v2.cube", 2, 0, 1, affine);
  const Graph g = Graph::parse("lut3d=file='" + spaced + "':interp=trilinear,saturation=1.1");
  EXPECT_EQ(g.nodes()[0].params.text("file"), spaced);
  const Graph again = Graph::parse(g.to_string());
  EXPECT_EQ(again.nodes()[0].params, g.nodes()[0].params);
  EXPECT_EQ(again.to_string(), g.to_string());
  EXPECT_NO_THROW(again.validate(PixelFormat::rgba8));
  // Positional, as FFmpeg's lut3d=NAME.
  const std::string plain = files.table("plain.cube", 2, 0, 1, affine);
  EXPECT_EQ(Graph::parse("lut3d=" + plain).nodes()[0].params.text("file"), plain);
  const std::string open = error_of([] { Graph::parse("lut3d=file='x.cube"); });
  EXPECT_NE(open.find("unterminated quote"), std::string::npos) << open;
}

}  // namespace
}  // namespace tandem
