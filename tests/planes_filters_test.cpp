// Filters on video's Y'CbCr planes as they are (PipelineOptions::planes): gaussian per plane and
// saturation as a chroma scale, against their host references on awkward sizes, 8 and 10 bits,
// on every OpenCL device present; which graphs take that way; fused against unfused; co-executed
// bands against one device.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_support.hpp"

namespace tandem {
namespace {

using Matrix = YuvEncoding::Matrix;

const std::vector<PixelFormat> kPlaneFormats = {PixelFormat::yuv420p, PixelFormat::yuv420p10,
                                                PixelFormat::yuv420p12};
const YuvEncoding kBt709{Matrix::bt709, false};

// The host references of the graph's filters one after the other.
Frame reference_of(const std::string& graph, const Frame& input) {
  const Graph g = Graph::parse(graph);
  Frame value = input;
  for (int n : g.topological_order()) {
    const GraphNode& node = g.nodes()[n];
    Frame out(value.width(), value.height(), value.format());
    out.set_yuv_encoding(value.yuv_encoding());
    const Frame* in[] = {&value};
    node.spec->make(node.params)->reference(in, out);
    value = std::move(out);
  }
  return value;
}

std::vector<std::string> passes_of(const std::string& graph, PixelFormat format,
                                   const YuvEncoding& encoding, PipelineOptions options = {}) {
  DeviceSet set = DeviceSet::open(test::device_ids().front());
  options.persist_split = false;
  Pipeline pipeline(set, Graph::parse(graph), options);
  Frame input = test::random_frame(64, 8, format, 1);
  input.set_yuv_encoding(encoding);
  Frame output;
  pipeline.process(input, output);
  return pipeline.passes();
}

class PlanesFiltersTest : public ::testing::TestWithParam<std::string> {};

// The plane kernels' integer sums are the reference's: equal to the code.
TEST_P(PlanesFiltersTest, GaussianBlursEachPlaneAsItsReference) {
  for (PixelFormat format : kPlaneFormats) {
    for (const auto& size : test::kAwkwardSizes) {
      Frame input = test::random_frame(size.width, size.height, format, 21);
      input.set_yuv_encoding(kBt709);
      for (const std::string graph :
           {"gaussian=sigma=0.7", "gaussian=sigma=2", "gaussian=sigma=4.5"}) {
        const Frame want = reference_of(graph, input);
        for (Schedule schedule : test::kForcedSchedules) {
          SCOPED_TRACE(graph + " " + std::to_string(size.width) + "x" +
                       std::to_string(size.height) + " " + std::string(to_string(format)) + " " +
                       std::string(to_string(schedule)));
          PipelineOptions options;
          options.schedule = schedule;
          const Frame got = test::run_graph(graph, input, GetParam(), options);
          ASSERT_EQ(got.format(), format);
          EXPECT_EQ(test::max_difference(got, want), 0.0);
        }
      }
    }
  }
}

// Tolerance: 1 code where the device contracts the scale and the add into one rounding, or
// does not, and the result lands on a half; such codes stay rare.
TEST_P(PlanesFiltersTest, SaturationScalesCbAndCrAndLeavesYAlone) {
  for (PixelFormat format : kPlaneFormats) {
    for (const auto& size : test::kAwkwardSizes) {
      Frame input = test::random_frame(size.width, size.height, format, 22);
      input.set_yuv_encoding(kBt709);
      for (const std::string graph : {"saturation=1.3", "saturation=0", "saturation=4"}) {
        SCOPED_TRACE(graph + " " + std::to_string(size.width) + "x" + std::to_string(size.height) +
                     " " + std::string(to_string(format)));
        const Frame got = test::run_graph(graph, input, GetParam());
        const Frame want = reference_of(graph, input);
        EXPECT_LE(test::max_difference(got, want), 1.0);
        EXPECT_LE(test::count_differences(got, want, 0.0),
                  static_cast<std::size_t>(size.width) * size.height / 1000 + 1);
        for (int y = 0; y < size.height; ++y) {
          for (int x = 0; x < size.width; ++x) {
            ASSERT_EQ(got.sample(0, x, y), input.sample(0, x, y));
          }
        }
      }
    }
  }
  // A grey pixel stays grey; full saturation doubles the distance of Cb from its zero.
  Frame grey = test::random_frame(32, 2, PixelFormat::yuv420p, 1);
  grey.set_yuv_encoding(kBt709);
  grey.set_sample(1, 0, 0, 128);
  grey.set_sample(2, 0, 0, 100);
  const Frame got = test::run_graph("saturation=2", grey, GetParam());
  EXPECT_EQ(got.sample(1, 0, 0), 128);
  EXPECT_EQ(got.sample(2, 0, 0), 72);
}

// Fused equals unfused, and the tiles schedule the rows schedule, to the code.
TEST_P(PlanesFiltersTest, ChainsEqualTheirStepsAndFusedEqualsUnfused) {
  const std::string graph = "gaussian=sigma=2,saturation=1.3,saturation=0.7,gaussian=sigma=1";
  for (PixelFormat format : kPlaneFormats) {
    Frame input = test::random_frame(333, 77, format, 23);
    input.set_yuv_encoding(kBt709);
    SCOPED_TRACE(to_string(format));
    const Frame fused = test::run_graph(graph, input, GetParam());
    PipelineOptions unfused;
    unfused.fuse = false;
    EXPECT_EQ(test::max_difference(fused, test::run_graph(graph, input, GetParam(), unfused)), 0.0);
    PipelineOptions tiles;
    tiles.schedule = Schedule::tiles;
    EXPECT_EQ(test::max_difference(fused, test::run_graph(graph, input, GetParam(), tiles)), 0.0);
    // Each saturation may land a code on the other side of a half (see above), and a blur
    // after it spreads that over its neighbours by less than a code.
    const Frame want = reference_of(graph, input);
    EXPECT_LE(test::max_difference(fused, want), 1.0);
    EXPECT_LE(test::count_differences(fused, want, 0.0), 333u * 77 * 3 / 2 / 100);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryDevice, PlanesFiltersTest, ::testing::ValuesIn(test::device_ids()),
                         [](const auto& info) {
                           std::string name = "device_" + info.param;
                           for (char& c : name) {
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           }
                           return name;
                         });

TEST(PlanesFiltersRoute, GraphsOfPlaneFiltersWorkOnThePlanes) {
  EXPECT_EQ(passes_of("gaussian=sigma=2,saturation=1.3", PixelFormat::yuv420p, kBt709),
            std::vector<std::string>{"stencil: gaussian saturation (on yuv420p planes)"});
  EXPECT_EQ(passes_of("saturation=1.3,saturation=2", PixelFormat::yuv420p10, kBt709),
            std::vector<std::string>{"point-wise: saturation saturation (on yuv420p10 planes)"});
  EXPECT_EQ(
      passes_of("saturation=1.3,gaussian=sigma=1", PixelFormat::yuv420p, {Matrix::bt709, true}),
      (std::vector<std::string>{"point-wise: saturation (on yuv420p planes)",
                                "stencil: gaussian (on yuv420p planes)"}));
}

TEST(PlanesFiltersRoute, OtherGraphsConvertToTheWorkingFormat) {
  const std::vector<std::string> converted = {
      "convert: yuv420p -> rgba8", "stencil: gaussian saturation", "convert: rgba8 -> yuv420p"};
  // BT.601's luma weights are not saturation's.
  EXPECT_EQ(
      passes_of("gaussian=sigma=2,saturation=1.3", PixelFormat::yuv420p, {Matrix::bt601, false}),
      converted);
  PipelineOptions no_planes;
  no_planes.planes = false;
  EXPECT_EQ(passes_of("gaussian=sigma=2,saturation=1.3", PixelFormat::yuv420p, kBt709, no_planes),
            converted);
  // box does not work on planes, nor tonemap; a graph that is not a chain does not either.
  for (const std::string graph :
       {"box=radius=2", "saturation=1.3,tonemap", "split[a][b];[a]saturation=1.3[s];[b][s]blend"}) {
    SCOPED_TRACE(graph);
    for (const std::string& pass : passes_of(graph, PixelFormat::yuv420p, kBt709)) {
      EXPECT_EQ(pass.find("planes"), std::string::npos) << pass;
    }
  }
}

// Bands of planes start on row pairs: co-executed on two devices, a frame of odd height split
// at a fraction that falls on an odd row equals one device's, to the code (integer sums; plane
// maps in the same float operations on devices of one kind) or within 1 code, rarely, between a
// CPU and a GPU.
TEST(PlanesFiltersCoexec, BandsOfPlanesEqualOneDevice) {
  if (test::device_count() < 2) GTEST_SKIP() << "needs two OpenCL devices";
  for (PixelFormat format : kPlaneFormats) {
    Frame input = test::random_frame(1921, 1081, format, 24);
    input.set_yuv_encoding(kBt709);
    const std::string graph = "gaussian=sigma=3,saturation=1.3";
    SCOPED_TRACE(to_string(format));
    PipelineOptions split;
    split.split = test::split_first(0.371);
    const Frame co = test::run_graph(graph, input, "all", split);
    PipelineOptions single;
    single.split = "single";
    const Frame one = test::run_graph(graph, input, "all", single);
    EXPECT_LE(test::max_difference(co, one), 1.0);
    EXPECT_LE(test::count_differences(co, one, 0.0), 1921u * 1081 * 3 / 2 / 1000);
  }
}

}  // namespace
}  // namespace tandem
