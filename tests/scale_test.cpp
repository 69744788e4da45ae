// scale on the devices, without OpenCV (tests/scale_cv_test.cpp holds it against cv::resize):
// the kernel against the host reference on every device, on awkward sizes and factors, for every
// method and both pixel formats, in both schedules (tiles: scale_tiled and the table's columns
// by tap, as on GPUs; rows: as on CPUs); bands on several devices, chunks and chains equal one
// device in both schedules; the fused chain equals the unfused one; the sizes FFmpeg's
// scale=w:h gives, the rows a band reads, and the errors.
//
// Tolerances, kernel against reference:
//  - rgba8, bilinear, lanczos and area by whole factors: exact. Their sums are integers on both
//    sides (OpenCV's fixed point).
//  - rgba8, bicubic and area by other factors: 1 LSB. Both sides add the same float products in
//    the same order with contraction off (exact on PoCL and on an NVIDIA H200), but a device
//    that contracted a multiply-add anyway could round a value at a tie the other way.
//  - rgba32f: 1e-5 relative (to max(1, |reference|); values in [0, 4)), for the same reason;
//    exact on PoCL and the H200.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "test_support.hpp"

namespace tandem::test {
namespace {

constexpr double kFloatTolerance = 1e-5;
const std::vector<std::string> kMethods = {"bilinear", "bicubic", "lanczos", "area"};

// Checks `actual` against `expected`: within `tolerance8` LSB on rgba8, kFloatTolerance
// relative on rgba32f; returns the difference for the log.
double expect_close(const Frame& actual, const Frame& expected, double tolerance8) {
  EXPECT_EQ(actual.width(), expected.width());
  EXPECT_EQ(actual.height(), expected.height());
  EXPECT_EQ(actual.format(), expected.format());
  if (actual.width() != expected.width() || actual.height() != expected.height()) return INFINITY;
  if (actual.format() == PixelFormat::rgba8) {
    const double d = max_difference(actual, expected);
    EXPECT_LE(d, tolerance8);
    return d;
  }
  const double d = max_relative_difference(actual, expected);
  EXPECT_LE(d, kFloatTolerance);
  return d;
}

struct Resize {
  Size from, to;
};

// Awkward sizes and factors: from and to one pixel, odd sizes, factors that are not whole,
// 3x and 1/3 (whole: OpenCV's block sums for area), 1/2 (bilinear becomes area's 2x2 blocks),
// the same size (a copy), up along one axis while down along the other, down by 32 (area:
// 33 taps a side, more than the GPUs' kernels hold in registers), and down by 18 (area: whole
// blocks larger than scale_blocks takes, through the table), and 2x across (the GPUs' tile
// loads those taps as words) with 2x and 3x along the height (lanczos's output rows in pairs).
const std::vector<Resize> kResizes = {
    {{1, 1}, {3, 5}},           {{7, 5}, {1, 1}},         {{3, 7}, {5, 2}},
    {{111, 67}, {333, 201}},    {{333, 201}, {111, 67}},  {{128, 96}, {64, 48}},
    {{97, 61}, {140, 90}},      {{64, 64}, {64, 64}},     {{100, 60}, {250, 29}},
    {{1921, 1081}, {640, 361}}, {{1921, 1081}, {60, 34}}, {{180, 90}, {10, 5}},
    {{61, 41}, {122, 82}},      {{97, 61}, {194, 183}},
};

std::string graph_for(const Resize& r, const std::string& method) {
  return "scale=" + std::to_string(r.to.width) + ":" + std::to_string(r.to.height) +
         ":flags=" + method;
}

// Exact where both sides add integers (see the top of this file).
double tolerance8(const std::string& method) {
  return method == "bilinear" || method == "lanczos" ? 0 : 1;
}

TEST(Scale, MatchesReferenceOnEveryDevice) {
  for (const std::string& device : device_ids()) {
    for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
      std::uint32_t seed = 1;
      for (const Resize& r : kResizes) {
        const Frame input = random_frame(r.from.width, r.from.height, format, seed++, 4.0f);
        for (const std::string& method : kMethods) {
          const std::string graph = graph_for(r, method);
          const Frame expected = run_reference(graph, input);
          for (Schedule schedule : kForcedSchedules) {
            SCOPED_TRACE(graph + " of " + to_string(r.from) + " " + std::string(to_string(format)) +
                         ", device " + device + ", schedule " + std::string(to_string(schedule)));
            PipelineOptions options;
            options.split = "single";
            options.schedule = schedule;
            const Frame actual = run_graph(graph, input, device, options);
            const double d = expect_close(actual, expected, tolerance8(method));
            std::printf("  %-36s of %-9s %-7s device %s, %-5s: max difference %g\n", graph.c_str(),
                        to_string(r.from).c_str(), std::string(to_string(format)).c_str(),
                        device.c_str(), std::string(to_string(schedule)).c_str(), d);
          }
        }
      }
    }
  }
}

// Large 8-bit resizes of a 1080p frame each way, in both schedules: rows computes all three in
// scale_rows16's walks (1623 and 721 rows: walks cut short at the band's end), tiles upscales
// through its tile (an exact 2x by its shortcuts) and downscales straight.
TEST(Scale, LargeEightBitResizesMatchTheReference) {
  const std::vector<std::pair<Size, std::string>> cases = {
      {{2883, 1623}, "bilinear"}, {{2883, 1623}, "bicubic"}, {{2883, 1623}, "lanczos"},
      {{1283, 721}, "bicubic"},   {{1283, 721}, "lanczos"},  {{3842, 2162}, "bicubic"},
      {{3842, 2162}, "lanczos"},
  };
  const Frame input = random_frame(1921, 1081, PixelFormat::rgba8, 5, 4.0f);
  for (const auto& [to, method] : cases) {
    const std::string graph = graph_for({{1921, 1081}, to}, method);
    const Frame expected = run_reference(graph, input);
    for (const std::string& device : device_ids()) {
      for (Schedule schedule : kForcedSchedules) {
        SCOPED_TRACE(graph + ", device " + device + ", schedule " +
                     std::string(to_string(schedule)));
        PipelineOptions options;
        options.split = "single";
        options.schedule = schedule;
        expect_close(run_graph(graph, input, device, options), expected, tolerance8(method));
      }
    }
  }
}

// Area by whole factors sums integers: exact on every device. 1/3 both ways, 1/3 across only,
// and bilinear's 2x2 downscale, which OpenCV computes as area's blocks.
TEST(Scale, AreaByWholeFactorsIsExact) {
  const std::vector<std::pair<Resize, std::string>> cases = {
      {{{333, 201}, {111, 67}}, "area"},
      {{{333, 201}, {111, 201}}, "area"},
      {{{332, 200}, {166, 100}}, "bilinear"},
  };
  for (const std::string& device : device_ids()) {
    std::uint32_t seed = 3;
    for (const auto& [r, method] : cases) {
      const std::string graph = graph_for(r, method);
      SCOPED_TRACE(graph + ", device " + device);
      const Frame input = random_frame(r.from.width, r.from.height, PixelFormat::rgba8, seed++);
      EXPECT_EQ(
          max_difference(run_graph(graph, input, device, "single"), run_reference(graph, input)),
          0);
    }
  }
}

// The same size is a copy, as in OpenCV, whatever the method.
TEST(Scale, SameSizeIsACopy) {
  for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
    const Frame input = random_frame(67, 33, format, 5, 4.0f);
    for (const std::string& method : kMethods) {
      SCOPED_TRACE(method + " " + std::string(to_string(format)));
      EXPECT_EQ(
          max_difference(run_graph("scale=flags=" + method, input, device_ids().front(), "single"),
                         input),
          0);
    }
  }
}

// A flat frame stays flat: every method's weights sum to one. On 8 bits OpenCV rounds each
// fixed-point weight on its own, so that 4 (bicubic) or 8 (lanczos) of them may sum to a few
// 2^-11 more or less than one, a level at most after both passes.
TEST(Scale, FlatStaysFlat) {
  Frame flat(97, 61, PixelFormat::rgba8);
  const std::uint8_t value[4] = {0, 77, 200, 255};
  for (int y = 0; y < flat.height(); ++y) {
    for (int x = 0; x < flat.width(); ++x) std::copy(value, value + 4, flat.row(y) + 4 * x);
  }
  for (const std::string& method : kMethods) {
    for (const char* size : {"300:200", "31:17", "194:-1"}) {
      const std::string graph = std::string("scale=") + size + ":flags=" + method;
      SCOPED_TRACE(graph);
      const Frame out = run_graph(graph, flat, device_ids().front(), "single");
      int worst = 0;
      for (int y = 0; y < out.height(); ++y) {
        for (int i = 0; i < 4 * out.width(); ++i) {
          worst = std::max(worst, std::abs(out.row(y)[i] - value[i % 4]));
        }
      }
      EXPECT_LE(worst, method == "bicubic" || method == "lanczos" ? 1 : 0);
    }
  }
}

// Bands on different devices (each reading the input rows its output rows reach), chunks on
// one device, and chains where the scale's input is an intermediate holding only the band's rows
// and a stencil reads the scale's output with a halo, all equal the whole frame on one device.
// Uneven splits put band borders at odd rows; 0.01 leaves one device a band of a row or two.
TEST(Scale, BandsEqualTheWholeFrame) {
  const std::string one = device_ids().front();
  std::vector<std::string> splits = {"chunks:7", "chunks:64"};
  if (device_count("all") > 1) {
    for (double a : {0.01, 0.3, 0.5, 0.9}) splits.push_back(split_first(a));
  }
  const std::vector<std::string> graphs = {
      "scale=640:361:flags=bicubic",
      "scale=3843:2163:flags=bilinear",
      "scale=2883:1623:flags=bicubic",
      "scale=641:-1:flags=lanczos",
      "scale=640:360:flags=area",
      "scale=700:400:flags=area",
      "gaussian=sigma=2,scale=-2:170:flags=lanczos,box=radius=3",
      "box=radius=1,scale=1280:720:flags=area,gaussian=sigma=1",
      // Whole blocks (scale_blocks), 1x23 with the row's last pixel apart, and 2x2.
      "scale=1921:47:flags=area",
      "crop=1920:1080:0:0,scale=960:540:flags=bilinear",
  };
  for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
    const Frame input = random_frame(1921, 1081, format, 9, 4.0f);
    for (const std::string& graph : graphs) {
      const Frame single = run_graph(graph, input, one, "single");
      for (const std::string& split : splits) {
        for (Schedule schedule : kForcedSchedules) {
          SCOPED_TRACE(graph + " split " + split + " " + std::string(to_string(format)) +
                       ", schedule " + std::string(to_string(schedule)));
          PipelineOptions options;
          options.split = split;
          options.schedule = schedule;
          EXPECT_TRUE(within(run_graph(graph, input, "all", options), single,
                             tolerance_within("all", format)));
        }
      }
    }
  }
}

// Two devices of one platform share one context and one copy of the table.
TEST(Scale, TwoDevicesOfOnePlatformEqualOne) {
  const std::string pair = same_platform_pair();
  if (pair.empty()) {
    GTEST_SKIP() << "no platform here has two devices (POCL_DEVICES=\"pthread basic\" gives two)";
  }
  for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
    const Frame input = random_frame(641, 357, format, 21, 4.0f);
    for (const std::string& method : kMethods) {
      const std::string graph = "scale=1000:-1:flags=" + method + ",saturation=1.3";
      SCOPED_TRACE(graph + " " + std::string(to_string(format)));
      const Frame single = run_graph(graph, input, pair, "single");
      const Frame co = run_graph(graph, input, pair, split_first(0.43, pair));
      EXPECT_TRUE(within(co, single, tolerance_within(pair, format).amplified(1.3, format)));
    }
  }
}

// The epilogue runs the chain after the scale as the chain's own pass would: fused equals
// unfused to the bit.
TEST(Scale, FusedEqualsUnfused) {
  for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
    const Frame input = random_frame(333, 77, format, 5, 4.0f);
    for (const std::string& device : device_ids()) {
      std::vector<std::string> graphs;
      for (const std::string& method : kMethods) {
        graphs.push_back("scale=500:-1:flags=" + method + ",saturation=1.3");
      }
      graphs.push_back("scale=111:11:flags=area,saturation=1.3");  // whole 3x7 blocks
      for (const std::string& graph : graphs) {
        SCOPED_TRACE(graph + " " + std::string(to_string(format)) + ", device " + device);
        EXPECT_EQ(max_difference(run_graph(graph, input, device, "single", true),
                                 run_graph(graph, input, device, "single", false)),
                  0.0);
      }
    }
  }
}

TEST(Scale, SizesAreFfmpegs) {
  const Size hd{1920, 1080};
  EXPECT_EQ(Graph::parse("scale=960:540").output_size(hd), (Size{960, 540}));
  EXPECT_EQ(Graph::parse("scale").output_size(hd), hd);  // 0:0 keeps the input's size
  EXPECT_EQ(Graph::parse("scale=0:0").output_size(hd), hd);
  EXPECT_EQ(Graph::parse("scale=-1:-1").output_size(hd), hd);
  EXPECT_EQ(Graph::parse("scale=640:0").output_size(hd), (Size{640, 1080}));
  EXPECT_EQ(Graph::parse("scale=-1:540").output_size(hd), (Size{960, 540}));
  EXPECT_EQ(Graph::parse("scale=w=1280:h=-1").output_size(hd), (Size{1280, 720}));
  // -1 rounds to nearest: 101 * 16 / 9 = 179.6; -2 to the nearest even width.
  EXPECT_EQ(Graph::parse("scale=-1:101").output_size(hd), (Size{180, 101}));
  EXPECT_EQ(Graph::parse("scale=-1:100").output_size(hd), (Size{178, 100}));  // 177.8
  EXPECT_EQ(Graph::parse("scale=-2:100").output_size(hd), (Size{178, 100}));
  EXPECT_EQ(Graph::parse("scale=333:-2").output_size(hd), (Size{333, 188}));  // 187.3
  EXPECT_EQ(Graph::parse("scale=333:-1").output_size(hd), (Size{333, 187}));
  EXPECT_EQ(Graph::parse("scale=-8:100").output_size(hd), (Size{176, 100}));  // 22.2 * 8
  EXPECT_EQ(Graph::parse("scale=3:-1").output_size({1, 1}), (Size{3, 3}));
  EXPECT_EQ(Graph::parse("scale=32768:-1").output_size({32, 32}), (Size{32768, 32768}));
  // FFmpeg's expressions: w first, then h (which may use ow), then w again (which may use oh);
  // each truncated.
  EXPECT_EQ(Graph::parse("scale=iw/2:ih/2").output_size(hd), (Size{960, 540}));
  EXPECT_EQ(Graph::parse("scale=in_w*2/3:in_h*2/3").output_size(hd), (Size{1280, 720}));
  EXPECT_EQ(Graph::parse("scale=iw/7:-2").output_size(hd), (Size{274, 154}));  // 274.3, 154.1
  EXPECT_EQ(Graph::parse("scale=oh*a:720").output_size(hd), (Size{1280, 720}));
  EXPECT_EQ(Graph::parse("scale=1280:ow/a").output_size(hd), (Size{1280, 720}));
  EXPECT_EQ(Graph::parse("scale=iw*sar:ih/dar").output_size(hd), (Size{1920, 607}));  // 607.5
  EXPECT_EQ(Graph::parse("scale='min(1280,iw)':-2").output_size(hd), (Size{1280, 720}));
  EXPECT_EQ(Graph::parse("scale='trunc(oh*a/2)*2':100").output_size(hd), (Size{176, 100}));
  EXPECT_EQ(Graph::parse("scale=iw-iw:ih").output_size(hd), hd);  // 0 is the input's side
  EXPECT_EQ(Graph::parse("scale=w=iw/3:h=-1").output_size({1921, 1081}), (Size{640, 360}));
}

TEST(Scale, FitsIntoABoxAsFfmpegDoes) {
  // force_original_aspect_ratio and force_divisible_by: every size here is what FFmpeg 5.1's
  // scale made of the same options (ffmpeg -vf scale=... on frames of these sizes, sizes read
  // with ffprobe).
  const Size cat{451, 300};
  const Size hd{1920, 1080};
  const std::vector<std::tuple<std::string, Size, Size>> cases = {
      {"200:200:force_original_aspect_ratio=decrease", cat, {200, 133}},
      {"200:200:force_original_aspect_ratio=increase", cat, {301, 200}},
      {"200:200:force_original_aspect_ratio=decrease:force_divisible_by=4", cat, {200, 132}},
      {"200:200:force_original_aspect_ratio=increase:force_divisible_by=4", cat, {304, 200}},
      {"200:200:force_original_aspect_ratio=2:force_divisible_by=3", cat, {303, 201}},
      {"200:200:force_original_aspect_ratio=1", cat, {200, 133}},
      {"-2:100:force_original_aspect_ratio=decrease", cat, {150, 100}},
      {"100:-1:force_original_aspect_ratio=increase", cat, {101, 67}},
      {"0:100:force_original_aspect_ratio=decrease", cat, {150, 100}},
      {"1280:720:force_original_aspect_ratio=decrease:force_divisible_by=2", cat, {1082, 720}},
      {"-1:-1:force_original_aspect_ratio=increase", cat, {451, 300}},
      {"451:1:force_original_aspect_ratio=decrease", cat, {2, 1}},
      // Without force_original_aspect_ratio, force_divisible_by changes nothing.
      {"1000:700:force_divisible_by=16", cat, {1000, 700}},
      {"1280:720:force_original_aspect_ratio=decrease", {640, 480}, {960, 720}},
      {"1280:1280:force_original_aspect_ratio=decrease", hd, {1280, 720}},
      {"720:720:force_original_aspect_ratio=increase", hd, {1280, 720}},
      {"1000:1000:force_original_aspect_ratio=decrease:force_divisible_by=16", hd, {992, 560}},
      {"iw/3:ih/2:force_original_aspect_ratio=increase:force_divisible_by=8", hd, {960, 544}},
  };
  for (const auto& [options, in, out] : cases) {
    EXPECT_EQ(Graph::parse("scale=" + options).output_size(in), out) << options;
  }
  // A box rounded to nothing (FFmpeg: swscaler's "Value 0 ... for parameter 'dstw'").
  const std::string nothing = error_of([&] {
    Graph::parse("scale=3:3:force_original_aspect_ratio=decrease:force_divisible_by=4")
        .output_size(cat);
  });
  EXPECT_NE(nothing.find("force_original_aspect_ratio=decrease:force_divisible_by=4 of a "
                         "451x300 input makes 0x0"),
            std::string::npos)
      << nothing;
  for (const char* graph :
       {"scale=100:100:force_original_aspect_ratio=shrink", "scale=100:100:force_divisible_by=0",
        "scale=100:100:force_divisible_by=257"}) {
    const std::string e = error_of([&] { Graph::parse(graph); });
    EXPECT_NE(e.find("scale"), std::string::npos) << graph << ": " << e;
  }
}

TEST(Scale, SizeErrorsNameTheSizes) {
  // The side kept in proportion rounds to nothing.
  const std::string nothing = error_of([] { Graph::parse("scale=1:-1").output_size({1000, 1}); });
  EXPECT_NE(nothing.find("scale"), std::string::npos) << nothing;
  EXPECT_NE(nothing.find("1000x1"), std::string::npos) << nothing;
  EXPECT_NE(nothing.find("1x0"), std::string::npos) << nothing;
  // Past the largest side.
  const std::string large = error_of([] {
    Graph::parse("scale=32768:-1").output_size({100, 1000});
  });
  EXPECT_NE(large.find("100x1000"), std::string::npos) << large;
  EXPECT_NE(large.find("32768x327680"), std::string::npos) << large;
  EXPECT_NE(large.find("32768"), std::string::npos) << large;
  // Out of the parameters' ranges, or not expressions of theirs, when parsed.
  for (const char* graph : {"scale=32769:10", "scale=10:-65", "scale=flags=nearest",
                            "scale=iwx/2:10", "scale=iw/2:(ih", "scale=foo(iw):10"}) {
    const std::string e = error_of([&] { Graph::parse(graph); });
    EXPECT_NE(e, "(no error)") << graph;
    EXPECT_NE(e.find("scale"), std::string::npos) << graph << ": " << e;
  }
  const std::string name = error_of([] { Graph::parse("scale=iwx/2:10"); });
  EXPECT_NE(name.find("unknown name 'iwx'"), std::string::npos) << name;
  EXPECT_NE(name.find("iw, ih, in_w, in_h, ow, oh"), std::string::npos) << name;
  // Expressions that have no value for the input: each side named with its expression.
  const std::vector<std::pair<std::string, std::string>> unsized = {
      {"scale=oh:ow", "h=ow of a 1920x1080 input is not a number"},
      {"scale=iw/2:oh*a", "h=oh*a of a 1920x1080 input is not a number"},
      {"scale=iw/0:10", "w=iw/0 of a 1920x1080 input is infinite"},
      {"scale=iw*1e9:10", "w=iw*1e9 of a 1920x1080 input is too large"},
      {"scale=-ih:10", "w=-ih:h=10 of a 1920x1080 input makes a side of -1080"},
      {"scale=iw*20:-1", "w=iw*20:h=-1 of a 1920x1080 input makes 38400x21600"},
  };
  for (const auto& [graph, part] : unsized) {
    const std::string e = error_of([&] { Graph::parse(graph).output_size({1920, 1080}); });
    EXPECT_NE(e.find(part), std::string::npos) << graph << ": " << e;
  }
  // A pipeline refuses before running anything.
  DeviceSet devices = DeviceSet::open(device_ids().front());
  PipelineOptions options;
  options.persist_split = false;
  Pipeline pipeline(devices, Graph::parse("scale=1:-1"), options);
  Frame input = random_frame(1000, 1, PixelFormat::rgba8, 1), output;
  const std::string run = error_of([&] { pipeline.process(input, output); });
  EXPECT_NE(run.find("1000x1"), std::string::npos) << run;
}

// Planes are converted to rgba before a filter that does not work on them: scale itself takes
// only rgba8 and rgba32f.
TEST(Scale, RefusesPlaneFormats) {
  const Graph g = Graph::parse("scale=10:10");
  const GraphNode& node = g.nodes().at(0);
  const auto filter = node.spec->make(node.params);
  const std::string e = error_of([&] { filter->output_format(std::array{PixelFormat::yuv420p}); });
  EXPECT_NE(e.find("yuv420p"), std::string::npos) << e;
  EXPECT_EQ(filter->output_format(std::array{PixelFormat::rgba32f}), PixelFormat::rgba32f);
}

// The rows a band of output rows reads: the taps of its first and last rows, clamped.
TEST(Scale, InputRowsAreTheTapsOfTheOutputRows) {
  auto rows = [](const std::string& graph, RowRange out_rows, Size in) {
    const Graph g = Graph::parse(graph);
    const GraphNode& node = g.nodes().at(0);
    return node.spec->make(node.params)->input_rows(out_rows, 0, in, g.output_size(in));
  };
  // Area by 3: rows 3r .. 3r + 2.
  EXPECT_EQ(rows("scale=100:30:flags=area", {1, 2}, {300, 90}), (RowRange{3, 6}));
  EXPECT_EQ(rows("scale=100:30:flags=area", {0, 30}, {300, 90}), (RowRange{0, 90}));
  // Bilinear 3x up: output row 0 maps to -1/3, its taps rows -1 and 0 (clamped: 0);
  // row 4 to 1, taps 1 and 2; the last row reads the last input row.
  EXPECT_EQ(rows("scale=30:30:flags=bilinear", {0, 1}, {10, 10}), (RowRange{0, 1}));
  EXPECT_EQ(rows("scale=30:30:flags=bilinear", {4, 5}, {10, 10}), (RowRange{1, 3}));
  EXPECT_EQ(rows("scale=30:30:flags=bilinear", {29, 30}, {10, 10}), (RowRange{9, 10}));
  // Bicubic reaches one row further on each side, lanczos three above and four below.
  EXPECT_EQ(rows("scale=30:30:flags=bicubic", {4, 5}, {10, 10}), (RowRange{0, 4}));
  EXPECT_EQ(rows("scale=30:30:flags=lanczos", {13, 14}, {10, 10}), (RowRange{1, 9}));
  // Area by a factor that is not whole: the cells' rows, partly covered ones included.
  EXPECT_EQ(rows("scale=40:40:flags=area", {1, 2}, {100, 100}), (RowRange{2, 5}));
}

}  // namespace
}  // namespace tandem::test
