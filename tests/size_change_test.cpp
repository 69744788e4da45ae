// Graphs whose nodes change the frame's size (crop, pad, scale, transpose): the sizes a graph
// computes and its errors, frame statistics of a value of another size than the output, whole
// frames per device, planes, and process() refusing them. The filters themselves are tested
// against their references in geometry_test.cpp and scale_cv_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "test_support.hpp"

namespace tandem {
namespace {

using test::error_of;
using test::run_graph;
using test::split_first;

TEST(SizeChange, EveryNodeHasItsSize) {
  const Graph g = Graph::parse("crop=100:50:3:4,pad=120:60:-1:-1,transpose=clock,box=radius=1");
  const std::vector<Size> sizes = g.node_sizes({321, 123});
  ASSERT_EQ(sizes.size(), 4u);
  EXPECT_EQ(sizes[0], (Size{100, 50}));
  EXPECT_EQ(sizes[1], (Size{120, 60}));
  EXPECT_EQ(sizes[2], (Size{60, 120}));
  EXPECT_EQ(sizes[3], (Size{60, 120}));
  EXPECT_EQ(g.output_size({321, 123}), (Size{60, 120}));
  // A graph without size changes keeps the input's.
  EXPECT_EQ(Graph::parse("gaussian=2,saturation=1.2").output_size({7, 3}), (Size{7, 3}));
}

TEST(SizeChange, ErrorsNameTheNodeAndTheSizes) {
  // A crop larger than its input, pointed at in the graph's text.
  const std::string crop = error_of([] {
    Graph::parse("box,crop=200:100").output_size({150, 90});
  });
  EXPECT_NE(crop.find("crop"), std::string::npos) << crop;
  EXPECT_NE(crop.find("150x90"), std::string::npos) << crop;
  EXPECT_NE(crop.find("^"), std::string::npos) << crop;
  // Two inputs of a point-wise filter must have one size.
  const std::string blend = error_of([] {
    Graph::parse("[in]split[a][b];[a]crop=50:40:0:0[c];[c][b]blend=mode=screen")
        .output_size({100, 80});
  });
  EXPECT_NE(blend.find("blend: inputs of different sizes, 50x40 and 100x80"), std::string::npos)
      << blend;
  // The pipeline says so before running anything.
  DeviceSet devices = DeviceSet::open("all");
  Pipeline pipeline(devices, Graph::parse("crop=64:64"), {.persist_split = false});
  Frame input = test::random_frame(32, 32, PixelFormat::rgba8, 1), output;
  const std::string run = error_of([&] { pipeline.process(input, output); });
  EXPECT_NE(run.find("32x32"), std::string::npos) << run;
}

// An HDR frame whose left part is far brighter than the rest: statistics over the wrong pixels
// (the whole frame's, or a band's rows counted twice) give another picture.
Frame two_halves(int width, int height) {
  Frame f = test::random_frame(width, height, PixelFormat::rgba32f, 7, 1.0f);
  for (int y = 0; y < height; ++y) {
    float* row = f.row_as<float>(y);
    for (int x = 0; x < width; ++x) {
      const float scale = x < width / 3 ? 40.0f : 0.02f;
      for (int c = 0; c < 3; ++c) row[4 * x + c] *= scale;
    }
  }
  return f;
}

// Frame statistics count the pixels of the value they are taken over: before a crop the whole
// frame's (each band its share of those rows), after it the crop's; on one device or several.
TEST(SizeChange, FrameStatisticsCountTheirOwnValuesPixels) {
  const Frame input = two_halves(301, 157);
  const Frame cropped = test::run_reference("crop=100:150:0:3", input);
  const Frame after_crop = test::run_reference("tonemap=op=reinhard", cropped);
  const Frame whole_tonemapped = test::run_reference("tonemap=op=reinhard", input);
  const Frame before_crop = test::run_reference("crop=100:150:0:3", whole_tonemapped);
  const auto tol =
      test::tolerance_within("all", PixelFormat::rgba8).amplified(2.0, PixelFormat::rgba8);
  for (const std::string& split : {std::string("single"), split_first(0.37)}) {
    SCOPED_TRACE(split);
    EXPECT_TRUE(test::within(run_graph("crop=100:150:0:3,tonemap=op=reinhard", input, "all", split),
                             after_crop, tol));
    EXPECT_TRUE(test::within(run_graph("tonemap=op=reinhard,crop=100:150:0:3", input, "all", split),
                             before_crop, tol));
  }
  // The two differ: the statistics are not the same pixels'.
  EXPECT_GT(test::max_difference(after_crop, before_crop), 10.0);
}

// A stream of frames through a size change, in bands and in whole frames per device: every
// output equals one device's run of its frame.
TEST(SizeChange, StreamsInBandsAndWholeFrames) {
  const std::string graph = "pad=200:120:13:7,gaussian=sigma=1.5,crop=150:100:31:9,saturation=1.4";
  std::vector<Frame> inputs;
  for (int i = 0; i < 6; ++i)
    inputs.push_back(test::random_frame(171, 103, PixelFormat::rgba8, 50 + i));
  for (const std::string& split : {std::string("adaptive"), std::string("frames")}) {
    SCOPED_TRACE(split);
    DeviceSet devices = DeviceSet::open("all");
    Pipeline pipeline(devices, Graph::parse(graph), {.split = split, .persist_split = false});
    std::vector<Frame> in, out(inputs.size());
    in.reserve(inputs.size());  // frames on the devices stay where they are
    std::vector<std::uint64_t> tickets;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      in.push_back(pipeline.make_frame(171, 103, PixelFormat::rgba8));
      copy_pixels(inputs[i], in.back());
      tickets.push_back(pipeline.submit(in.back(), out[i]));
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      pipeline.wait(tickets[i]);
      ASSERT_EQ(out[i].width(), 150);
      ASSERT_EQ(out[i].height(), 100);
      const Frame want = run_graph(graph, inputs[i], "all", "single");
      EXPECT_TRUE(test::within(out[i], want, test::tolerance_within("all", PixelFormat::rgba8)))
          << "frame " << i;
    }
  }
}

// Planes go through a size change too: converted on the way in, and stored at the output's size
// (odd sizes keep a padding row of their last row pair).
TEST(SizeChange, PlanesInAndOut) {
  const Frame input = test::random_frame(97, 61, PixelFormat::yuv420p, 3);
  for (const char* graph :
       {"crop=64:37:5:6", "pad=120:80:-1:-1,saturation=1.2", "transpose=cclock,box=radius=1"}) {
    SCOPED_TRACE(graph);
    const Frame single = run_graph(graph, input, "all", "single");
    ASSERT_EQ(single.format(), PixelFormat::yuv420p);
    EXPECT_EQ((Size{single.width(), single.height()}), Graph::parse(graph).output_size({97, 61}));
    const Frame co = run_graph(graph, input, "all", split_first(0.41));
    EXPECT_TRUE(test::within(co, single, test::tolerance_within("all", PixelFormat::yuv420p)));
    const Frame unfused = run_graph(graph, input, "all", "single", false);
    EXPECT_EQ(test::max_difference(unfused, single), 0.0);
  }
}

TEST(SizeChange, ProcessRefusesAGraphThatChangesTheSize) {
  DeviceSet devices = DeviceSet::open("all");
  Pipeline pipeline(devices, Graph::parse("crop=8:8"), {.persist_split = false});
  std::vector<std::uint8_t> in(16 * 16 * 4), out(16 * 16 * 4);
  const std::string e = error_of(
      [&] { process(pipeline, in.data(), 64, out.data(), 64, 16, 16, PixelFormat::rgba8); });
  EXPECT_NE(e.find("makes 8x8 images of 16x16"), std::string::npos) << e;
}

}  // namespace
}  // namespace tandem
