// A device that fails leaves the split: its rows are redone on the others, the event is
// reported once, and later frames run without it.
#include <gtest/gtest.h>

#include <cstring>

#include "tandem/pointwise.hpp"
#include "test_support.hpp"

namespace tandem {
namespace {

// A stencil-style filter (it has its own enqueue) whose enqueue fails on one device: what a
// driver refusing a kernel looks like to the executor.
std::string g_failing_device;

class FailOn final : public Filter {
 public:
  void enqueue(BandContext& ctx, std::span<const DeviceImage> inputs,
               const DeviceImage& output) const override {
    if (ctx.device().info().id == g_failing_device) {
      throw Error(CL_OUT_OF_RESOURCES, "clEnqueueNDRangeKernel", "running t_fail_on");
    }
    const DeviceImage& in = inputs[0];
    const std::size_t row_bytes = static_cast<std::size_t>(ctx.frame_width()) * 4;
    for (int y = ctx.y0(); y < ctx.y1(); ++y) {
      ctx.queue().enqueueCopyBuffer(in.buffer, output.buffer, (y - in.first_row) * in.pitch,
                                    (y - output.first_row) * output.pitch, row_bytes);
    }
  }
  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    for (int y = 0; y < output.height(); ++y) {
      std::memcpy(output.row(y), inputs[0]->row(y), static_cast<std::size_t>(output.width()) * 4);
    }
  }
};

FilterSpec describe_fail_on() {
  return {.name = "t_fail_on",
          .help = "copies its input; fails on the device named by the test",
          .make = [](const Params&) { return std::make_unique<FailOn>(); }};
}
TANDEM_REGISTER_FILTER(describe_fail_on);

TEST(Failover, AFailingDeviceLeavesTheSplitAndTheFrameIsRedone) {
  const auto ids = test::device_ids();
  if (ids.size() < 2) GTEST_SKIP() << "needs two OpenCL devices";
  g_failing_device = ids[1];
  DeviceSet set = DeviceSet::open("all");
  PipelineOptions options;
  options.split = "static:0.5,0.5";
  options.persist_split = false;
  Pipeline pipeline(set, Graph::parse("t_fail_on,saturation=1.5"), options);
  const Frame input = test::random_frame(200, 120, PixelFormat::rgba8, 3);
  const Frame want = test::run_graph("saturation=1.5", input, ids[0], "single");
  Frame output;
  for (int i = 0; i < 3; ++i) {
    pipeline.process(input, output);
    EXPECT_EQ(test::max_difference(output, want), 0.0) << "frame " << i;
  }
  const RunReport& report = pipeline.report();
  ASSERT_EQ(report.fallbacks.size(), 1u);  // reported once, not once per frame
  EXPECT_NE(report.fallbacks[0].find("device " + ids[1]), std::string::npos);
  EXPECT_NE(report.fallbacks[0].find("CL_OUT_OF_RESOURCES"), std::string::npos);
  EXPECT_TRUE(report.devices[1].failed);
  EXPECT_FALSE(report.devices[0].failed);
  EXPECT_EQ(report.split_trace.back()[1], 0.0);
  EXPECT_NE(report.to_json().find("\"fallbacks\": [\""), std::string::npos);
}

// The failure comes while another frame is on the devices (Pipeline::submit).
TEST(Failover, AFailingDeviceLeavesTheSplitWithFramesInFlight) {
  const auto ids = test::device_ids();
  if (ids.size() < 2) GTEST_SKIP() << "needs two OpenCL devices";
  g_failing_device = ids[1];
  DeviceSet set = DeviceSet::open("all");
  PipelineOptions options;
  options.split = "static:0.5,0.5";
  options.persist_split = false;
  Pipeline pipeline(set, Graph::parse("t_fail_on,saturation=1.5"), options);
  std::vector<Frame> inputs, wants, outputs(4);
  for (int i = 0; i < 4; ++i) {
    inputs.push_back(test::random_frame(200, 120, PixelFormat::rgba8, 10 + i));
    wants.push_back(test::run_graph("saturation=1.5", inputs[i], ids[0], "single"));
  }
  std::vector<std::uint64_t> tickets;
  for (int i = 0; i < 4; ++i) tickets.push_back(pipeline.submit(inputs[i], outputs[i]));
  pipeline.wait(tickets.back());
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(test::max_difference(outputs[i], wants[i]), 0.0) << "frame " << i;
  }
  EXPECT_EQ(pipeline.report().frames, 4);
  EXPECT_EQ(pipeline.report().fallbacks.size(), 1u);
}

TEST(Failover, AFailingDeviceLeavesTheChunkQueue) {
  const auto ids = test::device_ids();
  if (ids.size() < 2) GTEST_SKIP() << "needs two OpenCL devices";
  g_failing_device = ids[1];
  DeviceSet set = DeviceSet::open("all");
  PipelineOptions options;
  options.split = "chunks:16";
  options.persist_split = false;
  Pipeline pipeline(set, Graph::parse("t_fail_on,saturation=1.5"), options);
  const Frame input = test::random_frame(200, 120, PixelFormat::rgba8, 3);
  const Frame want = test::run_graph("saturation=1.5", input, ids[0], "single");
  Frame output;
  for (int i = 0; i < 2; ++i) {
    pipeline.process(input, output);
    EXPECT_EQ(test::max_difference(output, want), 0.0) << "frame " << i;
  }
  ASSERT_EQ(pipeline.report().fallbacks.size(), 1u);
  EXPECT_EQ(pipeline.report().split_trace.back()[0], 1.0);  // every row, on the device left
}

TEST(Failover, WhenEveryDeviceFailsTheErrorIsTheDevicesOwn) {
  g_failing_device = test::device_ids()[0];
  DeviceSet set = DeviceSet::open(g_failing_device);
  PipelineOptions options;
  options.persist_split = false;
  Pipeline pipeline(set, Graph::parse("t_fail_on"), options);
  Frame output;
  try {
    pipeline.process(test::random_frame(16, 16, PixelFormat::rgba8, 1), output);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), CL_OUT_OF_RESOURCES);
    EXPECT_NE(std::string(e.what()).find("running t_fail_on"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tandem
