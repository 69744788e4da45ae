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
  // other streams copied, in the encoder's pixel format `pix_fmt` (empty: the source's planes,
  // which the devices take as they are; "bgra": RGBA frames); the frames written.
  static std::int64_t process_file(const fs::path& in, const fs::path& out, Pipeline& pipeline,
                                   const VideoRunOptions& run = {},
                                   const std::string& pix_fmt = {}) {
    VideoReaderOptions ro;
    ro.keep_packets = true;
    VideoReader reader(in, ro);
    VideoWriterOptions wo;
    wo.codec = "ffv1";
    wo.pix_fmt = pix_fmt;
    const Size size = pipeline.output_size({reader.info().width, reader.info().height});
    wo.width = size.width;
    wo.height = size.height;
    VideoWriter writer(out, reader, wo);
    EXPECT_EQ(device_format(reader, writer),
              pix_fmt.empty() ? PixelFormat::yuv420p : PixelFormat::rgba8);
    const std::int64_t frames = process_video(reader, pipeline, writer, run).frames;
    writer.finish();
    return frames;
  }
  // Output frame k of `out` is `graph` through the image path on input frame k of `in`, at its
  // timestamp (rows of other kinds of device may differ by their tolerance, tolerance.hpp),
  // `frames` of them in `format`, of the output's size.
  static void expect_the_image_path(const fs::path& in, const fs::path& out,
                                    const std::string& graph, PixelFormat format, int frames) {
    VideoReader source(in), result(out);
    Frame a(source.info().width, source.info().height, format);
    Frame b(result.info().width, result.info().height, format);
    std::int64_t pa = 0, pb = 0;
    int k = 0;
    while (source.read(a, pa)) {
      ASSERT_TRUE(result.read(b, pb)) << "frame " << k << " is missing";
      EXPECT_EQ(pa * source.info().time_base.num * result.info().time_base.den,
                pb * result.info().time_base.num * source.info().time_base.den)
          << "timestamp of frame " << k;
      const Frame want = test::run_graph(graph, a, "all", "single");
      ASSERT_EQ(want.format(), format);
      ASSERT_TRUE(test::within(
          b, want,
          test::tolerance_within("all", PixelFormat::rgba8).amplified(1.4, PixelFormat::rgba8)))
          << "frame " << k;
      ++k;
    }
    EXPECT_FALSE(result.read(b, pb)) << "an extra frame";
    EXPECT_EQ(k, frames);
  }
  fs::path dir_;
};

// The video's planes go to the devices as they are (yuv420p), or as RGBA frames for an encoder
// that takes no 4:2:0: either way, output frame k is input frame k through Pipeline::process.
TEST_F(VideoPipeline, EveryFrameEqualsTheImagePathInOrder) {
  const fs::path in = make_video("in.mkv", 40, "161x97");
  ASSERT_EQ(VideoReader(in).info().pixel_format, "yuv420p");
  const std::string graph = "gaussian=sigma=1.5,saturation=1.4";
  for (const std::string pix_fmt : {"", "bgra"}) {
    SCOPED_TRACE(pix_fmt.empty() ? "planes" : "RGBA");
    const PixelFormat format = pix_fmt.empty() ? PixelFormat::yuv420p : PixelFormat::rgba8;
    const fs::path out = dir_ / "out.mkv";
    DeviceSet devices = DeviceSet::open("all");
    PipelineOptions po;
    po.persist_split = false;
    {
      Pipeline pipeline(devices, Graph::parse(graph), po);
      EXPECT_EQ(process_file(in, out, pipeline, {}, pix_fmt), 40);
    }
    // Decode input and output again; output frame k must be the image path on input frame k.
    EXPECT_EQ(VideoReader(out).info().frame_rate, VideoReader(in).info().frame_rate);
    expect_the_image_path(in, out, graph, format, 40);
  }
}

// A graph that changes the size writes video of its output's size, every frame the image path
// on its input frame, planes and RGBA alike (bands are of output rows; each node maps them back).
TEST_F(VideoPipeline, AGraphThatChangesTheSizeWritesVideoOfItsSize) {
  const fs::path in = make_video("in.mkv", 12, "161x97");
  const std::string graph = "crop=120:80:9:7,gaussian=sigma=1.5,pad=140:96:11:5,saturation=1.3";
  for (const std::string pix_fmt : {"", "bgra"}) {
    SCOPED_TRACE(pix_fmt.empty() ? "planes" : "RGBA");
    const PixelFormat format = pix_fmt.empty() ? PixelFormat::yuv420p : PixelFormat::rgba8;
    const fs::path out = dir_ / "out.mkv";
    DeviceSet devices = DeviceSet::open("all");
    PipelineOptions po;
    po.persist_split = false;
    {
      Pipeline pipeline(devices, Graph::parse(graph), po);
      EXPECT_EQ(pipeline.output_size({161, 97}), (Size{140, 96}));
      EXPECT_EQ(pipeline.output_size({1920, 1080}), (Size{140, 96}));
      EXPECT_EQ(process_file(in, out, pipeline, {}, pix_fmt), 12);
    }
    const VideoInfo result = VideoReader(out).info();
    ASSERT_EQ(result.width, 140);
    ASSERT_EQ(result.height, 96);
    expect_the_image_path(in, out, graph, format, 12);
  }
}

// fade follows the frames' timestamps: frame k of a 25 fps video is at k / 25 s, so a fade over
// 0.2 s reaches the picture at frame 5; each frame equals one run of it at its time.
TEST_F(VideoPipeline, FadeFollowsTheFramesTimestamps) {
  const fs::path in = make_video("in.mkv", 8, "96x64");
  const std::string graph = "fade=duration=0.2";
  const fs::path out = dir_ / "out.mkv";
  DeviceSet devices = DeviceSet::open("all");
  {
    Pipeline pipeline(devices, Graph::parse(graph), {.persist_split = false});
    EXPECT_EQ(process_file(in, out, pipeline), 8);
  }
  VideoReader source(in), result(out);
  Frame a(96, 64, PixelFormat::yuv420p), b(96, 64, PixelFormat::yuv420p);
  std::int64_t pa = 0, pb = 0;
  for (int k = 0; source.read(a, pa); ++k) {
    ASSERT_TRUE(result.read(b, pb)) << "frame " << k;
    Pipeline one(devices, Graph::parse(graph), {.split = "single", .persist_split = false});
    Frame want;
    one.wait(one.submit(a, want, {k, k / 25.0}));
    EXPECT_TRUE(test::within(b, want, test::tolerance_within("all", PixelFormat::yuv420p)))
        << "frame " << k;
    if (k == 0) {
      EXPECT_GT(test::max_difference(b, a), 50.0) << "frame 0 is black";
    }
    if (k >= 5) {
      // The picture, through the same conversions to R'G'B' and back.
      Pipeline same(devices, Graph::parse("saturation=1"),
                    {.split = "single", .planes = false, .persist_split = false});
      Frame picture;
      same.process(a, picture);
      EXPECT_EQ(test::max_difference(b, picture), 0.0) << "frame " << k << " is the picture";
    }
  }
}

// A 128x16 ramp of 10-bit codes 64 + 4x in Y', grey chroma, 3 frames of FFmpeg's `format`
// into FFV1, through saturation=1 (which changes nothing) with the writer's default pixel format:
// that format and the frames' format on the devices must be `written` and `on_devices`.
void pass_ramp_through(const fs::path& dir, const std::string& format, const std::string& written,
                       PixelFormat on_devices, const fs::path& out) {
  const fs::path in = dir / ("ramp-" + format + ".mkv");
  const std::string cmd = std::string(TANDEM_FFMPEG_PROGRAM) +
                          " -loglevel error -y -f lavfi -i nullsrc=s=128x16:r=25,format=" + format +
                          ",geq=lum='64+X*4':cb=512:cr=512 -frames:v 3 -c:v ffv1 " + in.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  DeviceSet devices = DeviceSet::open("all");
  PipelineOptions po;
  po.persist_split = false;
  Pipeline pipeline(devices, Graph::parse("saturation=1"), po);
  VideoReader reader(in, {.keep_packets = true});
  VideoWriter writer(out, reader, {.codec = "ffv1"});
  EXPECT_EQ(writer.pixel_format(), written);
  ASSERT_EQ(device_format(reader, writer), on_devices);
  EXPECT_EQ(process_video(reader, pipeline, writer).frames, 3);
  writer.finish();
}

// 10-bit video stays 10-bit: the ramp keeps every code through a graph that changes nothing, in
// planes to the devices and back (8 bits would leave 32 of them).
TEST_F(VideoPipeline, TenBitVideoKeepsEveryCode) {
  const fs::path out = dir_ / "ramp10_out.mkv";
  ASSERT_NO_FATAL_FAILURE(
      pass_ramp_through(dir_, "yuv420p10le", "yuv420p10le", PixelFormat::yuv420p10, out));
  VideoReader result(out);
  EXPECT_EQ(result.info().pixel_format, "yuv420p10le");
  EXPECT_EQ(result.info().bit_depth, 10);
  Frame b(128, 16, PixelFormat::yuv420p10);
  std::int64_t pts = 0;
  int frames = 0;
  while (result.read(b, pts)) {
    ++frames;
    for (int y = 0; y < 16; ++y) {
      const auto* row = reinterpret_cast<const std::uint16_t*>(b.plane_row(0, y));
      for (int x = 0; x < 128; ++x) ASSERT_EQ(row[x], 64 + 4 * x) << x << ", " << y;
    }
  }
  EXPECT_EQ(frames, 3);
}

// Y'CbCr video of every layout and depth tandem has planes of, and semi-planar NV12
// (rearranged to 4:2:0 planes as it is read; P010 likewise, but FFmpeg stores it raw in no
// container), goes to the devices as its planes, is written in its own pixel format where the
// encoder takes it (FFV1 lacks NV12: its planar 4:2:0), and comes back as the devices computed
// it: every frame equals the graph run on the decoded input's planes, and deeper video, which
// the devices keep in floats, keeps every code.
TEST_F(VideoPipeline, EveryLayoutAndDepthGoesAsPlanesAndKeepsItsCodes) {
  struct Case {
    const char* format;
    const char* written;
    PixelFormat on_devices;
  };
  for (const Case& c : {Case{"yuv422p10le", "yuv422p10le", PixelFormat::yuv422p10},
                        Case{"yuv444p12le", "yuv444p12le", PixelFormat::yuv444p12},
                        Case{"yuv420p12le", "yuv420p12le", PixelFormat::yuv420p12},
                        Case{"yuv422p", "yuv422p", PixelFormat::yuv422p},
                        Case{"yuv444p", "yuv444p", PixelFormat::yuv444p},
                        Case{"nv12", "yuv420p", PixelFormat::yuv420p}}) {
    SCOPED_TRACE(c.format);
    const fs::path in = dir_ / (std::string("layout-") + c.format + ".nut");
    const fs::path out = dir_ / (std::string("layout-") + c.format + "-out.mkv");
    const std::string cmd = std::string(TANDEM_FFMPEG_PROGRAM) +
                            " -loglevel error -y -f lavfi -i testsrc2=size=98x34:rate=25 "
                            "-frames:v 3 -pix_fmt " + c.format + " -c:v rawvideo " + in.string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    DeviceSet devices = DeviceSet::open("all");
    PipelineOptions po;
    po.persist_split = false;
    Pipeline pipeline(devices, Graph::parse("saturation=1"), po);
    {
      VideoReader reader(in, {.keep_packets = true});
      VideoWriter writer(out, reader, {.codec = "ffv1"});
      EXPECT_EQ(writer.pixel_format(), c.written);
      ASSERT_EQ(device_format(reader, writer), c.on_devices);
      EXPECT_EQ(process_video(reader, pipeline, writer).frames, 3);
      writer.finish();
    }
    VideoReader source(in), result(out);
    Frame a(98, 34, c.on_devices), b(98, 34, c.on_devices);
    std::int64_t pa = 0, pb = 0;
    int frames = 0;
    while (source.read(a, pa)) {
      ASSERT_TRUE(result.read(b, pb)) << "frame " << frames << " is missing";
      const Frame want = test::run_graph("saturation=1", a, "all", "single");
      ASSERT_EQ(test::max_difference(want, b), 0.0) << "frame " << frames;
      if (sample_bits(c.on_devices) > 8) {
        ASSERT_EQ(test::max_difference(a, b), 0.0);
      }
      ++frames;
    }
    EXPECT_EQ(frames, 3);
  }
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
  Pipeline pipeline(devices, Graph::parse("saturation=1"), po);  // output == input's own run
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

  // The planes went to the devices and back: compared as planes (through RGBA they would
  // round one more time).
  VideoReader source(in), result(out);
  Frame a(source.info().width, source.info().height, PixelFormat::yuv420p);
  Frame b(a.width(), a.height(), PixelFormat::yuv420p);
  std::int64_t pa = 0, pb = 0;
  int k = 0;
  while (source.read(a, pa)) {
    ASSERT_TRUE(result.read(b, pb)) << "frame " << k << " is missing";
    const Frame want = test::run_graph("saturation=1", a, "all", "single");
    ASSERT_EQ(test::max_difference(want, b), 0.0)
        << "frame " << k << " differs (lost or reordered)";
    ++k;
  }
  EXPECT_EQ(k, 1000);
  EXPECT_FALSE(result.read(b, pb));
}

}  // namespace
}  // namespace tandem
