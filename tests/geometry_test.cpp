// crop, pad, transpose, hflip and vflip: the filters that change the frame's size or where its
// pixels lie. They move pixels without arithmetic, so they are exact, float frames included:
// against their host references on awkward sizes, in both schedules, on every device; against
// FFmpeg's turns and colours written out here; and a frame computed in bands (split across
// devices, in chunks, some bands wholly inside the padding) equals one device's, graphs mixing a
// size change with stencils and point-wise chains included, fused or not. Size errors name the
// node and the sizes.
//
// Tolerances: none, except against the references of graphs holding a stencil or a point-wise
// filter (gaussian and box are exact on rgba8; saturation and eq may round a tie the other way
// where a device does not contract their mad() as the host does: 1 step; float results within a
// few ulps) and between devices of different arithmetic (tolerance.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace tandem {
namespace {

using test::kAwkwardSizes;

// The host reference of a chain of one-input filters ("crop=8:8,gaussian=2"), node after node,
// each output sized by its filter (test::run_reference() keeps the input's size).
Frame reference_chain(const std::string& graph, const Frame& input) {
  const Graph g = Graph::parse(graph);
  Frame frame = input;
  for (const GraphNode& node : g.nodes()) {
    const std::unique_ptr<Filter> filter = node.spec->make(node.params);
    const Size in[] = {{frame.width(), frame.height()}};
    const PixelFormat formats[] = {frame.format()};
    const Size size = filter->output_size(in);
    Frame out(size.width, size.height, filter->output_format(formats));
    const Frame* inputs[] = {&frame};
    filter->reference(inputs, out);
    frame = std::move(out);
  }
  return frame;
}

// Against the references of graphs holding a stencil or a point-wise filter (top of the file).
test::Tolerance chain_tolerance(PixelFormat format) {
  if (format == PixelFormat::rgba8) return {1, 0, "saturation's mad() contracted or not"};
  return {2e-6, 1e-5, "float sums and mad() in another order"};
}

// Every filter with sizes and places worked out from an input of `s`, so that each fits the
// 1x1 frame too: odd offsets (a pixel a load), offsets of four and of sixteen (crop's 16- and
// 64-byte groups on CPUs).
std::vector<std::string> graphs_for(Size s) {
  const auto n = [](int v) { return std::to_string(v); };
  const int w = s.width, h = s.height;
  const int cw = std::max(1, w * 2 / 3), ch = std::max(1, h / 2);
  const int aw = std::max(1, w - 4);
  return {
      "crop",  // the input's size, centred: a copy
      "crop=" + n(cw) + ":" + n(ch),
      "crop=" + n(cw) + ":" + n(ch) + ":" + n(w - cw) + ":" + n((h - ch) / 3),
      "crop=w=" + n(aw) + ":h=" + n(ch) + ":x=" + n(std::min(4, w - aw)) + ":y=0",
      "crop=w=" + n(std::max(1, w - 16)) + ":h=" + n(ch) + ":x=" + n(w > 16 ? 16 : 0) +
          ":y=" + n(h - ch),
      "pad",  // the input's size: a copy
      "pad=" + n(w + 5) + ":" + n(h + 3) + ":2:1:red",
      "pad=" + n(w + 8) + ":" + n(h + 11) + ":-1:-1",
      "pad=w=" + n(w + 4) + ":h=" + n(h + 40) + ":x=4:y=37:color=transparent",
      "transpose",
      "transpose=clock",
      "transpose=cclock",
      "transpose=clock_flip",
      "hflip",
      "vflip",
  };
}

std::string describe(const std::string& graph, const Frame& input, const std::string& devices,
                     const std::string& split, Schedule schedule) {
  return graph + " on " + to_string(Size{input.width(), input.height()}) + " " +
         std::string(to_string(input.format())) + ", devices " + devices + ", split " + split +
         ", schedule " + std::string(to_string(schedule));
}

class GeometryTest : public ::testing::TestWithParam<std::string> {};

// Every filter against its reference, to the bit; transposes in both their schedules (the
// others have one).
TEST_P(GeometryTest, MatchesHostReferenceOnAwkwardSizes) {
  for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
    std::uint32_t seed = 1;
    for (const Size& size : kAwkwardSizes) {
      const Frame input = test::random_frame(size.width, size.height, format, seed++, 4.0f);
      for (const std::string& graph : graphs_for(size)) {
        const Frame want = reference_chain(graph, input);
        const std::vector<Schedule> schedules = graph.starts_with("transpose")
                                                    ? test::kForcedSchedules
                                                    : std::vector<Schedule>{Schedule::automatic};
        for (Schedule schedule : schedules) {
          SCOPED_TRACE(describe(graph, input, GetParam(), "single", schedule));
          PipelineOptions options;
          options.split = "single";
          options.schedule = schedule;
          const Frame got = test::run_graph(graph, input, GetParam(), options);
          ASSERT_EQ(got.width(), want.width());
          ASSERT_EQ(got.height(), want.height());
          EXPECT_EQ(got.format(), format);
          EXPECT_EQ(test::count_differences(got, want, 0.0), 0u);
        }
      }
    }
  }
}

// A 3x2 frame of six distinct pixels
//   a b c
//   d e f
// through each filter, against FFmpeg's results written out ('/' ends a row; W the colour).
TEST_P(GeometryTest, TurnsCropsAndPadsAsFfmpeg) {
  auto pixel = [](char c) -> std::array<std::uint8_t, 4> {
    if (c == 'W') return {255, 255, 255, 255};
    const auto v = static_cast<std::uint8_t>(10 * (c - 'a' + 1));
    return {v, static_cast<std::uint8_t>(v + 1), static_cast<std::uint8_t>(v + 2), 200};
  };
  auto frame_of = [&](const std::string& rows, PixelFormat format) {
    std::vector<std::string> lines(1);
    for (char c : rows) {
      if (c == '/') {
        lines.emplace_back();
      } else {
        lines.back().push_back(c);
      }
    }
    Frame f(static_cast<int>(lines[0].size()), static_cast<int>(lines.size()), format);
    for (int y = 0; y < f.height(); ++y) {
      for (int x = 0; x < f.width(); ++x) {
        const auto p = pixel(lines[y][x]);
        for (int c = 0; c < 4; ++c) {
          if (format == PixelFormat::rgba8) {
            f.row(y)[4 * x + c] = p[c];
          } else {
            f.row_as<float>(y)[4 * x + c] = p[c] / 255.0f;
          }
        }
      }
    }
    return f;
  };
  struct Expected {
    const char* graph;
    const char* rows;
  };
  const Expected cases[] = {
      {"transpose", "ad/be/cf"},
      {"transpose=cclock_flip", "ad/be/cf"},
      {"transpose=clock", "da/eb/fc"},
      {"transpose=cclock", "cf/be/ad"},
      {"transpose=clock_flip", "fc/eb/da"},
      {"hflip", "cba/fed"},
      {"vflip", "def/abc"},
      {"crop=2:1:1:1", "ef"},
      {"crop=1:2", "b/e"},
      {"pad=5:4:1:2:white", "WWWWW/WWWWW/WabcW/WdefW"},
      {"pad=4:4:-1:-1:white", "WWWW/abcW/defW/WWWW"},
  };
  for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
    const Frame input = frame_of("abc/def", format);
    for (const Expected& e : cases) {
      for (Schedule schedule : test::kForcedSchedules) {
        SCOPED_TRACE(describe(e.graph, input, GetParam(), "single", schedule));
        PipelineOptions options;
        options.split = "single";
        options.schedule = schedule;
        const Frame got = test::run_graph(e.graph, input, GetParam(), options);
        const Frame want = frame_of(e.rows, format);
        ASSERT_EQ(got.width(), want.width());
        ASSERT_EQ(got.height(), want.height());
        EXPECT_EQ(test::count_differences(got, want, 0.0), 0u);
        EXPECT_EQ(test::count_differences(reference_chain(e.graph, input), want, 0.0), 0u);
      }
    }
  }
}

// pad's colours are FFmpeg's (HTML's) by name; float frames take them / 255.
TEST_P(GeometryTest, PadColoursAreFfmpegs) {
  struct Named {
    const char* name;
    std::uint8_t rgba[4];
  };
  const Named colours[] = {{"black", {0, 0, 0, 255}},      {"white", {255, 255, 255, 255}},
                           {"gray", {128, 128, 128, 255}}, {"red", {255, 0, 0, 255}},
                           {"green", {0, 128, 0, 255}},    {"lime", {0, 255, 0, 255}},
                           {"blue", {0, 0, 255, 255}},     {"transparent", {0, 0, 0, 0}}};
  for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
    const Frame input = test::random_frame(5, 3, format, 9);
    for (const Named& c : colours) {
      const std::string graph = std::string("pad=9:5:2:1:") + c.name;
      SCOPED_TRACE(graph + " " + std::string(to_string(format)));
      const Frame got = test::run_graph(graph, input, GetParam(), "single");
      for (int i = 0; i < 4; ++i) {
        if (format == PixelFormat::rgba8) {
          EXPECT_EQ(got.row(0)[i], c.rgba[i]);
          EXPECT_EQ(got.row(4)[4 * 8 + i], c.rgba[i]);
        } else {
          EXPECT_EQ(got.row_as<float>(0)[i], c.rgba[i] / 255.0f);
          EXPECT_EQ(got.row_as<float>(4)[4 * 8 + i], c.rgba[i] / 255.0f);
        }
      }
    }
  }
}

// A point-wise chain after a size change runs in its kernel (on the padding too), as its own
// pass would: the same pixels, in both schedules.
TEST_P(GeometryTest, FusedEqualsUnfused) {
  const std::vector<std::string> graphs = {
      "crop=200:61:7:9,saturation=1.3",
      "crop=w=200:h=61:x=8:y=3,eq=brightness=0.1:contrast=1.2",
      "crop=w=203:h=61:x=16:y=5,saturation=0.7",  // 64-byte groups on CPUs
      "pad=340:100:3:11:red,eq=brightness=0.1,saturation=0.5",
      "pad=380:90:32:3:blue,saturation=1.3",  // groups of sixteen inside the input on CPUs
      "transpose=clock,saturation=1.2",
      "transpose=cclock,eq=contrast=1.3",
      "hflip,saturation=1.4",
      "vflip,saturation=0.6",
      "gaussian=sigma=2,transpose=clock,saturation=1.2",
      "crop=300:70:5:1,gaussian=sigma=2,saturation=1.3",
  };
  for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
    const Frame input = test::random_frame(333, 77, format, 5);
    for (const std::string& graph : graphs) {
      for (Schedule schedule : test::kForcedSchedules) {
        SCOPED_TRACE(describe(graph, input, GetParam(), "single", schedule));
        PipelineOptions fused;
        fused.split = "single";
        fused.schedule = schedule;
        PipelineOptions apart = fused;
        apart.fuse = false;
        const Frame a = test::run_graph(graph, input, GetParam(), fused);
        const Frame b = test::run_graph(graph, input, GetParam(), apart);
        EXPECT_EQ(test::count_differences(a, b, 0.0), 0u);
        EXPECT_TRUE(test::within(a, reference_chain(graph, input), chain_tolerance(format)));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryDevice, GeometryTest, ::testing::ValuesIn(test::device_ids()),
                         [](const auto& info) { return test::device_test_name(info.param); });

struct BandCase {
  std::string graph;
  bool pure;  // geometry alone: exact against the reference too
};

// Runs every graph on `devices` with each split and schedule, against one device and its own
// unfused run (within the devices' tolerance: chunks go to whichever device is free) and the
// references.
void check_bands(const std::string& devices, Size size, const std::vector<BandCase>& cases,
                 const std::vector<std::string>& splits) {
  const std::string one = test::device_ids().front();
  for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
    const Frame input = test::random_frame(size.width, size.height, format, 21, 4.0f);
    const test::Tolerance between = test::tolerance_within(devices, format);
    for (const BandCase& c : cases) {
      const Frame want = reference_chain(c.graph, input);
      const test::Tolerance reference = c.pure ? test::Tolerance{} : chain_tolerance(format);
      const Frame single = test::run_graph(c.graph, input, one, "single");
      EXPECT_TRUE(test::within(single, want, reference)) << c.graph;
      for (const std::string& split : splits) {
        for (Schedule schedule : test::kForcedSchedules) {
          SCOPED_TRACE(describe(c.graph, input, devices, split, schedule));
          PipelineOptions options;
          options.split = split;
          options.schedule = schedule;
          const Frame banded = test::run_graph(c.graph, input, devices, options);
          EXPECT_TRUE(test::within(banded, single, between));
          EXPECT_TRUE(test::within(banded, want, c.pure ? between : reference));
          options.fuse = false;
          const Frame apart = test::run_graph(c.graph, input, devices, options);
          EXPECT_TRUE(test::within(apart, banded, between));
        }
      }
    }
  }
}

// Bands of the output computed on different devices, each walking back through the size
// changes to the input rows it needs (a transpose: all of them), equal one device's frame.
// Uneven splits put band borders at odd rows; 0.01 leaves a band thinner than the halos.
TEST(Geometry, BandsAcrossDevicesEqualOneDevice) {
  if (test::device_ids().size() < 2) {
    GTEST_SKIP() << "needs two OpenCL devices; run with POCL_DEVICES=\"pthread basic\"";
  }
  std::vector<std::string> specs = {"all"};
  if (const std::string pair = test::same_platform_pair();
      !pair.empty() && test::device_count() > 2) {
    specs.push_back(pair);  // two devices of one context, where "all" is not that already
  }
  for (const std::string& devices : specs) {
    check_bands(devices, {1921, 1081},
                {{"crop=1000:500:7:9,gaussian=sigma=2,saturation=1.3", false},
                 {"pad=2000:1200:11:13,box=radius=2", false},
                 {"transpose=clock,gaussian=sigma=1.5", false},
                 {"gaussian=2,transpose=clock,saturation=1.2", false}},
                {test::split_first(0.3, devices)});
    check_bands(
        devices, {333, 271},
        {{"crop=250:200:3:41", true},
         {"pad=350:400:5:77:blue", true},
         {"transpose", true},
         {"transpose=cclock", true},
         {"transpose=clock_flip", true},
         {"vflip", true},
         {"hflip", true},
         {"vflip,box=radius=3,hflip", false},
         {"crop=300:250:5:20,transpose=cclock,pad=300:320:-1:-1:gray,saturation=0.7", false},
         {"transpose=clock,crop=200:300:3:2,vflip,gaussian=sigma=1.5", false}},
        {test::split_first(0.3, devices), test::split_first(0.01, devices),
         test::split_first(0.9, devices), "chunks:50"});
  }
}

// Where a band lies wholly in the padding, pad needs no input rows: its input holds none (no
// upload, no pass before it run for the band) and it only fills. The first device's band is
// the top padding (0.3 of 400 rows: 120 of its 300), the last device's the bottom padding (0.1:
// 40 of 50 rows below the input); chunks of 50 rows fall in both. A stencil after pad reads
// its halo from the padding; one before it is not run for those bands.
TEST(Geometry, BandsInsideThePaddingReadNoInput) {
  const std::vector<BandCase> cases = {
      {"pad=64:400:0:300", true},
      {"pad=71:400:3:300:white,box=radius=2", false},
      {"gaussian=sigma=2,pad=70:400:5:300:red,saturation=1.3", false},
      {"pad=64:400:0:302,pad=80:430:8:10", true},
      {"pad=64:400:0:302:blue,transpose=clock,saturation=0.5", false},
      {"vflip,pad=66:110:1:10:lime,vflip", true},
  };
  check_bands(test::device_ids().front(), {64, 48}, cases, {"chunks:50"});
  if (test::device_ids().size() < 2) {
    GTEST_SKIP() << "bands across devices need two OpenCL devices; run with "
                    "POCL_DEVICES=\"pthread basic\"";
  }
  check_bands("all", {64, 48}, cases,
              {test::split_first(0.3), test::split_first(0.9), "chunks:50"});
}

// crop's and pad's w, h, x and y take FFmpeg's expressions in the input's size (w first, then
// h, which may use ow, then w again, then x and y, which may use both), truncated.
TEST(Geometry, CropAndPadTakeFfmpegsExpressions) {
  const Size in{120, 90};
  EXPECT_EQ(Graph::parse("crop=iw/2:ih/2").output_size(in), (Size{60, 45}));
  EXPECT_EQ(Graph::parse("crop='min(iw,ih)':'min(iw,ih)'").output_size(in), (Size{90, 90}));
  EXPECT_EQ(Graph::parse("crop=ih*4/3:ih").output_size({160, 90}), (Size{120, 90}));
  EXPECT_EQ(Graph::parse("crop=w=iw/3:h=ow/a").output_size(in), (Size{40, 30}));
  EXPECT_EQ(Graph::parse("pad=iw+40:ih+40:20:20").output_size(in), (Size{160, 130}));
  EXPECT_EQ(Graph::parse("pad='max(iw,ih)':ow:(ow-iw)/2:(oh-ih)/2").output_size(in),
            (Size{120, 120}));
  // The pixels are those of the numbers the expressions make.
  const Frame input = test::random_frame(in.width, in.height, PixelFormat::rgba8, 7);
  const std::string device = test::device_ids().front();
  for (const auto& [expression, numbers] : std::vector<std::pair<std::string, std::string>>{
           {"crop=iw/2:ih/2:iw/4:ih/4", "crop=60:45:30:22"},
           {"crop=iw/2:ih/3", "crop=60:30:30:30"},  // centred by default: (iw-ow)/2
           {"pad=iw+41:ih+40:(ow-iw)/2:(oh-ih)/2:color=red", "pad=161:130:20:20:color=red"},
       }) {
    SCOPED_TRACE(expression);
    EXPECT_EQ(test::max_difference(test::run_graph(expression, input, device, "single"),
                                   test::run_graph(numbers, input, device, "single")),
              0);
  }
  // Each filter makes integers as FFmpeg's does, and ow and oh stand for what FFmpeg's do: crop
  // rounds to nearest (lrint) and its x, y see ow and oh unrounded; pad truncates and its x, y
  // see them unrounded. FFmpeg 5.1 on a 451x300 picture made these (identical pixels).
  const Frame odd = test::random_frame(451, 300, PixelFormat::rgba8, 8);
  for (const auto& [expression, numbers] : std::vector<std::pair<std::string, std::string>>{
           {"crop=iw/2:ih/3", "crop=226:100:113:100"},  // 225.5 -> 226; x (451 - 225.5) / 2
           {"pad=iw*1.5:ih*1.25:(ow-iw)/2:(oh-ih)/2", "pad=676:375:112:37"},  // 676.5, 112.75
       }) {
    SCOPED_TRACE(expression);
    EXPECT_EQ(test::max_difference(test::run_graph(expression, odd, device, "single"),
                                   test::run_graph(numbers, odd, device, "single")),
              0);
  }
  EXPECT_EQ(Graph::parse("crop=iw/2:ih/3").output_size({451, 300}), (Size{226, 100}));
  EXPECT_EQ(Graph::parse("pad=iw*1.5:ih*1.25").output_size({451, 300}), (Size{676, 375}));
  EXPECT_EQ(Graph::parse("scale=iw/2:-1").output_size({451, 300}), (Size{225, 150}));  // truncated
}

// Sizes a graph cannot take are errors naming the node and the sizes, before anything runs.
TEST(Geometry, SizeErrorsNameTheNodeAndTheSizes) {
  auto size_error = [](const std::string& graph, Size input) {
    return test::error_of([&] { Graph::parse(graph).output_size(input); });
  };
  EXPECT_NE(size_error("crop=100:100:50:50", {120, 90})
                .find("crop: 100x100 at 50,50 leaves the 120x90 input"),
            std::string::npos)
      << size_error("crop=100:100:50:50", {120, 90});
  // Centred where it does not fit; after a transpose, its size.
  EXPECT_NE(size_error("gaussian=2,transpose=clock,crop=100:100", {120, 90})
                .find("crop: 100x100 at -5,10 leaves the 90x120 input"),
            std::string::npos)
      << size_error("gaussian=2,transpose=clock,crop=100:100", {120, 90});
  EXPECT_NE(size_error("saturation=1.2,pad=100:80", {120, 90})
                .find("pad: the 120x90 input at 0,0 leaves the 100x80 output"),
            std::string::npos)
      << size_error("saturation=1.2,pad=100:80", {120, 90});
  EXPECT_NE(size_error("pad=130:95:20", {120, 90})
                .find("pad: the 120x90 input at 20,0 leaves the 130x95 output"),
            std::string::npos);

  EXPECT_EQ(Graph::parse("crop=100:50,transpose=clock,pad=60:110:5:5").output_size({120, 90}),
            (Size{60, 110}));
  EXPECT_EQ(Graph::parse("crop,pad").output_size({7, 3}), (Size{7, 3}));
  EXPECT_EQ(Graph::parse("crop=-1:2,pad=0:5:0:-1").output_size({7, 3}), (Size{7, 5}));
  EXPECT_EQ(Graph::parse("hflip,vflip,transpose=cclock").output_size({7, 3}), (Size{3, 7}));

  // Running it fails the same way, with a tandem::Error.
  const Frame small = test::random_frame(64, 64, PixelFormat::rgba8, 1);
  EXPECT_NE(test::error_of([&] {
              test::run_graph("crop=100:100", small, test::device_ids().front(), "single");
            }).find("leaves the 64x64 input"),
            std::string::npos);

  // Values outside the tables.
  EXPECT_THROW(Graph::parse("transpose=sideways"), Error);
  EXPECT_THROW(Graph::parse("pad=color=purple"), Error);
  EXPECT_THROW(Graph::parse("crop=w=-2"), Error);
  EXPECT_THROW(Graph::parse("pad=x=-3"), Error);

  // Expressions that leave a side negative, or have no value.
  EXPECT_NE(size_error("pad=iw-200:ih", {120, 90})
                .find("pad: w=iw-200:h=ih:x=0:y=0 of a 120x90 "
                      "input makes a side of -80"),
            std::string::npos)
      << size_error("pad=iw-200:ih", {120, 90});
  EXPECT_NE(size_error("crop=x=iw/0", {120, 90}).find("crop: x=iw/0 of a 120x90 input is infinite"),
            std::string::npos)
      << size_error("crop=x=iw/0", {120, 90});
  EXPECT_NE(test::error_of([] { Graph::parse("crop=iwx/2"); }).find("unknown name 'iwx'"),
            std::string::npos);

  // Filters see the working formats only; they refuse the plane formats by name.
  for (const char* name : {"crop", "pad", "transpose", "hflip", "vflip"}) {
    const FilterSpec& spec = FilterRegistry::instance().get(name);
    const std::unique_ptr<Filter> filter = spec.make(Params(spec.params));
    const PixelFormat yuv[] = {PixelFormat::yuv420p};
    EXPECT_NE(test::error_of([&] { filter->output_format(yuv); }).find(name), std::string::npos);
  }
}

}  // namespace
}  // namespace tandem
