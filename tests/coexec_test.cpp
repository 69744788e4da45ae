// Co-execution: a frame split into bands across any number of devices gives the single-device
// output within the tolerance of their kinds (exact for PoCL with PoCL), for any split; every
// row is a valid band origin. (Whether the devices overlap in time is measured by tandem-bench
// coexec, not asserted here.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

#include <unistd.h>

#include "test_support.hpp"

namespace tandem {
namespace {

bool two_devices() { return test::device_count() >= 2; }

// Frames of the devices "all" opens may differ from one device's by the tolerance stated for
// their kinds (tolerance.hpp), amplified by the chain's gain.
test::Tolerance tolerance_for(const std::string& graph, PixelFormat format) {
  // A saturation amount above 1 scales a flip of a stage before it.
  double gain = 1;
  for (std::size_t at = graph.find("saturation="); at != std::string::npos;
       at = graph.find("saturation=", at + 1)) {
    gain = std::max(gain, std::atof(graph.c_str() + at + 11));
  }
  test::Tolerance t = test::tolerance_within("all", format).amplified(gain, format);
  return graph.find("tonemap") == std::string::npos ? t : t.with_frame_statistics(format);
}

std::vector<std::string> graphs() {
  std::vector<std::string> out = {"saturation=1.7", "saturation=0.4,saturation=2.5"};
  if (FilterRegistry::instance().find("gaussian")) out.push_back("gaussian=sigma=2,saturation=1.3");
  if (FilterRegistry::instance().find("box")) out.push_back("box=radius=5,box=radius=2");
  return out;
}

TEST(CoExecution, AnySplitEqualsSingleDevice) {
  if (!two_devices()) GTEST_SKIP() << "needs two OpenCL devices (POCL_DEVICES=\"pthread basic\")";
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (const std::string& graph : graphs()) {
    for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
      const Frame input = test::random_frame(1921, 83, format, 5);
      const Frame single = test::run_graph(graph, input, "all", "single");
      std::vector<double> splits = {0.0, 1.0, 1.0 / 83, 82.0 / 83};  // whole frame, one row
      for (int i = 0; i < 3; ++i) splits.push_back(uniform(rng));
      for (double a : splits) {
        const std::string split = test::split_first(a);
        SCOPED_TRACE(graph + " " + std::string(to_string(format)) + " " + split);
        const Frame co = test::run_graph(graph, input, "all", split);
        EXPECT_TRUE(test::within(co, single, tolerance_for(graph, format)));
      }
    }
  }
}

// Two devices of one platform share one context: each writes its own sub-buffer of one output
// buffer, and the frame equals one device's.
TEST(CoExecution, TwoDevicesOfOnePlatformShareAContext) {
  const std::string pair = test::same_platform_pair();
  if (pair.empty()) {
    GTEST_SKIP() << "no platform here has two devices (POCL_DEVICES=\"pthread basic\" gives two)";
  }
  DeviceSet set = DeviceSet::open(pair);
  ASSERT_EQ(set.size(), 2u);
  EXPECT_EQ(set.context_count(), 1);
  EXPECT_EQ(set[0].context_index(), set[1].context_index());
  for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
    const std::string graph = "gaussian=sigma=2,saturation=1.3";
    const Frame input = test::random_frame(641, 97, format, 21);
    const Frame single = test::run_graph(graph, input, pair, "single");
    const Frame co = test::run_graph(graph, input, pair, test::split_first(0.43, pair));
    EXPECT_TRUE(test::within(co, single, test::tolerance_within(pair, format).amplified(1.3, format)));
  }
}

TEST(CoExecution, ChunksEqualSingleDevice) {
  // Works with one device too: it takes every chunk.
  std::vector<std::string> cases = graphs();
  if (FilterRegistry::instance().find("tonemap")) cases.push_back("saturation=1.2,tonemap");
  for (const std::string& graph : cases) {
    for (int chunk : {1, 7, 64, 500}) {
      SCOPED_TRACE(graph + " chunks:" + std::to_string(chunk));
      const Frame input = test::random_frame(333, 181, PixelFormat::rgba32f, 8, 4.0f);
      const Frame single = test::run_graph(graph, input, "all", "single");
      const Frame co = test::run_graph(graph, input, "all", "chunks:" + std::to_string(chunk));
      // Chunks reduce statistics in another order than one band (tolerance_for says how much).
      EXPECT_TRUE(test::within(co, single, tolerance_for(graph, co.format())));
    }
  }
  EXPECT_THROW(test::run_graph("saturation", test::random_frame(8, 8, PixelFormat::rgba8, 1), "all", "chunks:0"), Error);
  EXPECT_THROW(test::run_graph("saturation", test::random_frame(8, 8, PixelFormat::rgba8, 1), "all", "chunks:x"), Error);
}

TEST(CoExecution, AdaptiveSplitOverManyFramesEqualsSingleDevice) {
  if (!two_devices()) GTEST_SKIP() << "needs two OpenCL devices";
  DeviceSet set = DeviceSet::open("all");
  PipelineOptions options;
  options.persist_split = false;
  Pipeline pipeline(set, Graph::parse("saturation=1.3"), options);
  const Frame input = test::random_frame(640, 360, PixelFormat::rgba8, 9);
  const Frame single = test::run_graph("saturation=1.3", input, "all", "single");
  Frame output;
  for (int i = 0; i < 12; ++i) {
    pipeline.process(input, output);
    ASSERT_TRUE(test::within(output, single, tolerance_for("saturation=1.3", input.format())))
        << "frame " << i;
  }
  const RunReport& report = pipeline.report();
  EXPECT_EQ(report.frames, 12);
  ASSERT_EQ(report.split_trace.size(), 12u);
  for (const auto& f : report.split_trace) {
    ASSERT_EQ(f.size(), set.size());
    EXPECT_NEAR(std::accumulate(f.begin(), f.end(), 0.0), 1.0, 1e-9);
  }
  double busy = 0;
  for (const DeviceReport& d : report.devices) busy += d.busy_ms;
  EXPECT_GT(busy, 0.0);
  EXPECT_NE(report.to_json().find("\"split_trace\""), std::string::npos);
}

// Every band starts a sub-buffer at a row of the frame: the frames a device set makes must put
// every row on an address and offset every device accepts (CL_DEVICE_MEM_BASE_ADDR_ALIGN), or
// createSubBuffer fails with CL_MISALIGNED_SUB_BUFFER_OFFSET.
TEST(CoExecution, EveryRowOfTheDevicesFramesIsAValidSubBufferOrigin) {
  DeviceSet set = DeviceSet::open("all");
  const std::size_t align = set.row_alignment();
  for (const Device& d : set.devices()) {
    ASSERT_GT(d.info().base_address_alignment, 0u) << d.info().id;
    EXPECT_EQ(align % d.info().base_address_alignment, 0u) << d.info().id;
  }
  for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
    for (int width : {1, 3, 333, 1921}) {
      const Frame f = set.make_frame(width, 7, format);
      EXPECT_EQ(f.pitch() % align, 0u) << width;
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(f.data()) % align, 0u) << width;
    }
  }
  // Frames aligned beyond what the devices need (4096) run in place too; bands of every device
  // start at rows of an odd height.
  const Frame input = test::random_frame(333, 97, PixelFormat::rgba8, 2, 1.0f, 4096);
  const Frame single = test::run_graph("saturation=2", input, "all", "single");
  EXPECT_TRUE(test::within(test::run_graph("saturation=2", input, "all", test::split_first(0.31)),
                           single, tolerance_for("saturation=2", PixelFormat::rgba8)));
}

TEST(CoExecution, UnalignedFramesGoThroughACopy) {
  // A pitch that is no multiple of the devices' alignment still gives the right output.
  const Frame input = test::random_frame(45, 31, PixelFormat::rgba8, 4, 1.0f, 64);
  const Frame want = test::run_reference("saturation=1.5", input);
  const Frame got = test::run_graph("saturation=1.5", input, "all", test::split_first(0.4));
  EXPECT_LE(test::max_difference(got, want), 1.0);
}

}  // namespace
}  // namespace tandem

namespace tandem {
namespace {

TEST(SplitMemory, ASecondRunStartsFromTheLearnedRatio) {
  if (!two_devices()) GTEST_SKIP() << "needs two OpenCL devices";
  namespace fs = std::filesystem;
  const test::ScopedCacheDir cache("split");
  const fs::path& dir = cache.path();
  const Frame input = test::random_frame(640, 240, PixelFormat::rgba8, 5);
  std::vector<double> learned;
  {
    DeviceSet set = DeviceSet::open("all");
    Pipeline first(set, Graph::parse("saturation=1.3"));
    Frame out;
    for (int i = 0; i < 12; ++i) first.process(input, out);
    // The policy's split, not the last frame's: a frame may carry a probe share for a device
    // sitting out (on an H100 next to PoCL the CPU's 0.02 where the policy held 0.094).
    learned = first.report().learned_split;
  }
  ASSERT_TRUE(fs::exists(dir / "splits"));
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir / "splits")) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  double stored = -1;
  std::ifstream(files[0]) >> stored;
  ASSERT_FALSE(learned.empty());
  EXPECT_NEAR(stored, learned[0], 1e-5);  // what the first run learned was saved (6 digits)
  // Whatever the file says is where the next run starts (a ratio unlike any learned here).
  {
    std::ofstream out(files[0]);
    const std::size_t n = test::device_count();
    out << "0.2\n";
    for (std::size_t d = 1; d < n; ++d) out << 0.8 / static_cast<double>(n - 1) << "\n";
  }
  std::vector<double> start;
  {
    DeviceSet set = DeviceSet::open("all");
    Pipeline second(set, Graph::parse("saturation=1.3"));
    Frame out;
    second.process(input, out);
    start = second.report().split_trace.front();
  }
  EXPECT_NEAR(start[0], 0.2, 1.0 / input.height());  // the rows it ran
  // A damaged file is ignored: the run starts from scratch instead of failing.
  for (const auto& e : fs::directory_iterator(dir / "splits")) {
    std::ofstream(e.path()) << "nan -3\n";
  }
  {
    DeviceSet set = DeviceSet::open("all");
    Pipeline third(set, Graph::parse("saturation=1.3"));
    Frame out;
    EXPECT_NO_THROW(third.process(input, out));
  }
}

}  // namespace
}  // namespace tandem
