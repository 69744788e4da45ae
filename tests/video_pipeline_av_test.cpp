// A whole video through the double-buffered pipeline: every frame equals the image path applied
// to the decoded input frame, in order, none lost or repeated, also with a slow stage; memory
// stays bounded.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <set>
#include <thread>

#include "tandem/video_pipeline.hpp"
#include "test_support.hpp"

namespace tandem {
namespace {

namespace fs = std::filesystem;

class VideoPipeline : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tandem-vp-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path make_video(const std::string& name, int frames, const std::string& size) {
    const fs::path path = dir_ / name;
    const std::string cmd = std::string(TANDEM_FFMPEG_PROGRAM) +
                            " -loglevel error -y -f lavfi -i testsrc2=size=" + size +
                            ":rate=25 -f lavfi -i sine=frequency=440 -frames:v " +
                            std::to_string(frames) + " -c:v ffv1 -c:a pcm_s16le -shortest " +
                            path.string();
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return path;
  }
  // `in` through `pipeline` into `out`, lossless (what is written is what was computed), its
  // other streams copied; the frames written.
  static std::int64_t process_file(const fs::path& in, const fs::path& out, Pipeline& pipeline,
                                   const VideoRunOptions& run = {}) {
    VideoReaderOptions ro;
    ro.keep_packets = true;
    VideoReader reader(in, ro);
    VideoWriterOptions wo;
    wo.codec = "ffv1";
    VideoWriter writer(out, reader, wo);
    const std::int64_t frames = process_video(reader, pipeline, writer, run).frames;
    writer.finish();
    return frames;
  }
  fs::path dir_;
};

TEST_F(VideoPipeline, EveryFrameEqualsTheImagePathInOrder) {
  const fs::path in = make_video("in.mkv", 40, "161x97");
  const fs::path out = dir_ / "out.mkv";
  const std::string graph = "gaussian=sigma=1.5,saturation=1.4";
  DeviceSet devices = DeviceSet::open("all");
  PipelineOptions po;
  po.persist_split = false;
  {
    Pipeline pipeline(devices, Graph::parse(graph), po);
    EXPECT_EQ(process_file(in, out, pipeline), 40);
  }
  // Decode input and output again; output frame k must be the image path on input frame k.
  VideoReader source(in), result(out);
  EXPECT_EQ(result.info().frame_rate, source.info().frame_rate);
  Frame a, b;
  std::int64_t pa = 0, pb = 0;
  int k = 0;
  while (source.read(a, pa)) {
    ASSERT_TRUE(result.read(b, pb)) << "frame " << k << " is missing";
    EXPECT_EQ(pa * source.info().time_base.num * result.info().time_base.den,
              pb * result.info().time_base.num * source.info().time_base.den)
        << "timestamp of frame " << k;
    // Rows of other kinds of device may differ by their tolerance (tolerance.hpp).
    const Frame want = test::run_graph(graph, a, "all", "single");
    ASSERT_TRUE(test::within(b, want,
                             test::tolerance_within("all", PixelFormat::rgba8)
                                 .amplified(1.4, PixelFormat::rgba8)))
        << "frame " << k;
    ++k;
  }
  EXPECT_FALSE(result.read(b, pb)) << "an extra frame";
  EXPECT_EQ(k, 40);
}

// Frame statistics (tonemap) are read back behind each frame while the next is submitted from
// another thread: every frame arrives. (Unmapping a finished frame's bands from the waiting
// thread, beside a submit() on the same queues, deadlocked PoCL's basic device here.)
TEST_F(VideoPipeline, AGraphWithFrameStatisticsWritesEveryFrame) {
  const fs::path in = make_video("stats.mkv", 40, "161x97");
  const fs::path out = dir_ / "stats_out.mkv";
  DeviceSet devices = DeviceSet::open("all");
  PipelineOptions po;
  po.persist_split = false;
  Pipeline pipeline(devices, Graph::parse("gaussian=sigma=2,saturation=1.4,tonemap"), po);
  EXPECT_EQ(process_file(in, out, pipeline), 40);
  EXPECT_EQ(pipeline.report().frames, 40);
  VideoReader result(out);
  Frame b;
  std::int64_t pb = 0;
  int k = 0;
  while (result.read(b, pb)) ++k;
  EXPECT_EQ(k, 40);
}

TEST_F(VideoPipeline, ThousandFramesWithASlowStageNoneLostOrReordered) {
  const fs::path in = make_video("long.mkv", 1000, "64x48");
  const fs::path out = dir_ / "long_out.mkv";
  DeviceSet devices = DeviceSet::open("all");
  PipelineOptions po;
  po.persist_split = false;
  Pipeline pipeline(devices, Graph::parse("saturation=1"), po);  // identity: output == input
  std::mt19937 rng(3);
  std::vector<std::int64_t> seen;
  // Memory stays bounded because frames live in a ring made once: 1000 frames pass through a
  // fixed handful of frames and their pixels (counted, not measured: the process's resident
  // size depends on the driver and the machine).
  std::set<const Frame*> outputs;
  std::set<const std::uint8_t*> pixels;
  VideoRunOptions run;
  run.on_frame = [&](const VideoFrameInfo& frame) {
    const std::int64_t index = frame.index;
    seen.push_back(index);
    // Each frame comes with the split it ran with.
    EXPECT_NEAR(std::accumulate(frame.split.begin(), frame.split.end(), 0.0), 1.0, 1e-9);
    // A deliberately slow, irregular encode stage (0..2 ms) to shake the frames in flight.
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2000));
    outputs.insert(frame.output);
    pixels.insert(frame.output->data());
  };
  EXPECT_EQ(process_file(in, out, pipeline, run), 1000);
  ASSERT_EQ(seen.size(), 1000u);
  for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], static_cast<std::int64_t>(i));
  // The default ring: the frames the pipeline holds, one being decoded and one being encoded.
  const auto ring = static_cast<std::size_t>(pipeline.capacity() + 2);
  EXPECT_LE(outputs.size(), ring);
  EXPECT_LE(pixels.size(), ring);

  VideoReader source(in), result(out);
  Frame a, b;
  std::int64_t pa = 0, pb = 0;
  int k = 0;
  while (source.read(a, pa)) {
    ASSERT_TRUE(result.read(b, pb)) << "frame " << k << " is missing";
    ASSERT_EQ(test::max_difference(a, b), 0.0) << "frame " << k << " differs (lost or reordered)";
    ++k;
  }
  EXPECT_EQ(k, 1000);
  EXPECT_FALSE(result.read(b, pb));
}

}  // namespace
}  // namespace tandem
