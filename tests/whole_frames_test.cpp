// Whole frames per device (PipelineOptions::split "frames", and "auto" for streams): frames
// leave in order and equal one device's, frame statistics included, whichever device made each
// and however the frames were timed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <set>

#include "test_support.hpp"

namespace tandem {
namespace {

// A stencil, a point-wise chain and frame statistics (tonemap's, smoothed over frames).
constexpr const char* kGraph = "gaussian=sigma=2,saturation=1.3,tonemap";

PipelineOptions options(const std::string& split, int frames_on_devices) {
  PipelineOptions o;
  o.split = split;
  o.persist_split = false;
  o.frames_on_devices = frames_on_devices;
  return o;
}

// Frames whose brightness changes from one to the next, so that the statistics each frame
// runs with matter.
std::vector<Frame> sources(int count) {
  std::vector<Frame> out;
  for (int i = 0; i < count; ++i) {
    out.push_back(test::random_frame(160, 90, PixelFormat::rgba32f, 40 + i, 1.0f + i % 7));
  }
  return out;
}

struct Streamed {
  std::vector<Frame> outputs;
  std::vector<std::vector<double>> splits;
};

// Runs `inputs` through `pipeline` keeping `ahead` frames submitted (1: each waited for before
// the next), in frames of the pipeline's own.
Streamed stream(Pipeline& pipeline, const std::vector<Frame>& inputs, int ahead) {
  const int slots = ahead;
  std::vector<Frame> in, out(static_cast<std::size_t>(slots));
  for (int i = 0; i < slots; ++i) {
    in.push_back(pipeline.make_frame(inputs[0].width(), inputs[0].height(), inputs[0].format()));
  }
  std::vector<std::uint64_t> tickets(inputs.size());
  Streamed s;
  const int n = static_cast<int>(inputs.size());
  auto take = [&](int done) {
    pipeline.wait(tickets[done]);
    const Frame& o = out[done % slots];
    s.outputs.emplace_back(o.width(), o.height(), o.format());
    copy_pixels(o, s.outputs.back());
    s.splits.push_back(pipeline.split_of(tickets[done]));
  };
  for (int i = 0; i < n; ++i) {
    if (i >= slots) take(i - slots);
    copy_pixels(inputs[i], in[i % slots]);
    tickets[i] = pipeline.submit(in[i % slots], out[i % slots]);
  }
  for (int done = std::max(0, n - slots); done < n; ++done) take(done);
  return s;
}

test::Tolerance tolerance() {
  return test::tolerance_within("all", PixelFormat::rgba8)
      .amplified(1.3, PixelFormat::rgba8)
      .with_frame_statistics(PixelFormat::rgba8);
}

TEST(WholeFrames, AStreamEqualsOneDeviceFrameByFrame) {
  DeviceSet all = DeviceSet::open("all");
  Pipeline frames(all, Graph::parse(kGraph), options("frames", 2));
  const int held = frames.capacity();
  ASSERT_EQ(held, 2 * static_cast<int>(all.size()));
  if (held > 8)
    GTEST_SKIP() << "one device cannot hold " << held << " frames (more than 4 devices)";
  // Statistics lag by the frames a pipeline holds: the reference holds as many.
  DeviceSet one = DeviceSet::open(test::device_ids()[0]);
  Pipeline single(one, Graph::parse(kGraph), options("single", held));
  ASSERT_EQ(single.capacity(), held);

  const std::vector<Frame> inputs = sources(24);
  const Streamed got = stream(frames, inputs, held + 1);
  const Streamed want = stream(single, inputs, held + 1);
  ASSERT_EQ(got.outputs.size(), inputs.size());
  std::vector<std::size_t> maker(inputs.size(), 0);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_TRUE(test::within(got.outputs[i], want.outputs[i], tolerance())) << "frame " << i;
    const std::vector<double>& split = got.splits[i];
    ASSERT_EQ(split.size(), all.size()) << "frame " << i;
    EXPECT_NEAR(std::accumulate(split.begin(), split.end(), 0.0), 1.0, 1e-12);
    if (i == 0) continue;  // the first frame's statistics pre-pass runs in bands
    const auto whole = std::find(split.begin(), split.end(), 1.0);
    ASSERT_NE(whole, split.end()) << "frame " << i << " was not made whole by one device";
    maker[i] = static_cast<std::size_t>(whole - split.begin());
  }
  // Every device is measured on frames of its own before it is judged, unless the bands of the
  // statistics pre-pass predicted that the others add too little to the best device to be worth
  // a window of frames (a CPU beside a GPU): then the best takes every frame handed out after
  // that decision ("frame N: ...", N frames completed; up to `held` more were on the devices,
  // a loaded machine may decide a few frames late).
  const auto& decisions = frames.report().decisions;
  const auto best_alone = std::find_if(decisions.begin(), decisions.end(), [](const auto& line) {
    return line.find("the best alone until the budget allows a trial") != std::string::npos;
  });
  std::set<std::size_t> made_by;
  if (best_alone != decisions.end()) {
    const std::size_t decided = std::stoul(best_alone->substr(best_alone->find(' ') + 1));
    for (std::size_t i = std::max<std::size_t>(1, decided + held); i < inputs.size(); ++i) {
      made_by.insert(maker[i]);
    }
    EXPECT_EQ(made_by.size(), 1u) << *best_alone;
  } else {
    // Every device takes frames but one predicted from its band to take longer for a frame
    // than every device that took some: while any of those is free, it finishes a frame first
    // (a PoCL CPU beside two H200s took none of the 24).
    made_by.insert(maker.begin() + 1, maker.end());
    EXPECT_GE(made_by.size(), std::min<std::size_t>(2, all.size()));
    std::vector<double> each(all.size(), 0);  // ms a frame, predicted; 0: not predicted
    for (const auto& line : decisions) {
      std::size_t d = 0;
      double interval = 0, latency = 0;
      const std::size_t at = line.find("device ");
      if (at != std::string::npos &&
          std::sscanf(line.c_str() + at, "device %zu predicted at a frame every %lf ms (%lf", &d,
                      &interval, &latency) == 3 &&
          d < each.size()) {
        each[d] = latency;
      }
    }
    double fastest_maker = std::numeric_limits<double>::infinity();
    for (std::size_t d : made_by) fastest_maker = std::min(fastest_maker, each[d]);
    for (std::size_t d = 0; d < all.size(); ++d) {
      if (made_by.count(d)) continue;
      EXPECT_GT(each[d], fastest_maker) << "device " << d << " made no frame";
    }
  }
  EXPECT_EQ(frames.report().scheduler, "frames");
  ASSERT_FALSE(frames.report().decisions.empty());
  EXPECT_NE(frames.report().decisions[0].find("whole frames per device"), std::string::npos);
  EXPECT_EQ(frames.report().frames, 24);
  EXPECT_NE(frames.report().to_json().find("\"scheduler\": \"frames\""), std::string::npos);
}

// Each device's time for a whole frame is kept across runs: the next run of the graph and size
// starts from it, and a damaged file only costs that.
TEST(WholeFrames, ASecondRunStartsFromTheFrameTimesOfTheFirst) {
  namespace fs = std::filesystem;
  const test::ScopedCacheDir cache("frames");
  const std::vector<Frame> inputs = sources(12);
  auto run = [&] {
    DeviceSet set = DeviceSet::open("all");
    PipelineOptions o = options("frames", 2);
    o.persist_split = true;
    Pipeline pipeline(set, Graph::parse("saturation=1.3"), o);
    stream(pipeline, inputs, pipeline.capacity() + 1);
    return pipeline.report().decisions;
  };
  auto remembered = [](const std::vector<std::string>& decisions) {
    return std::count_if(decisions.begin(), decisions.end(), [](const std::string& line) {
      return line.find("ms each) from the last run") != std::string::npos;
    });
  };
  EXPECT_EQ(remembered(run()), 0);  // nothing kept yet, and no band before: unseeded
  // The device of the first frame was measured: its time is kept, and the next run starts
  // from it.
  EXPECT_GE(remembered(run()), 1);
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(cache.path() / "splits")) {
    ++files;
    std::ofstream(e.path()) << "nan -3\n";
  }
  EXPECT_GE(files, 1u);
  EXPECT_EQ(remembered(run()), 0);
}

// Frame N runs with the statistics of the frames up to N - capacity(): a frame's output is the
// same whether the caller waited for every frame or kept the pipeline full.
TEST(WholeFrames, FrameStatisticsDoNotDependOnTiming) {
  DeviceSet one = DeviceSet::open(test::device_ids()[0]);
  const std::vector<Frame> inputs = sources(16);
  Pipeline a(one, Graph::parse(kGraph), options("single", 3));
  Pipeline b(one, Graph::parse(kGraph), options("single", 3));
  const Streamed waited = stream(a, inputs, 1);
  const Streamed full = stream(b, inputs, 4);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ(test::max_difference(waited.outputs[i], full.outputs[i]), 0.0) << "frame " << i;
  }
  // The statistics do come from the frames before: frame 5 alone, with its own, differs.
  Pipeline c(one, Graph::parse(kGraph), options("single", 3));
  Frame alone;
  c.process(inputs[5], alone);
  EXPECT_GT(test::max_difference(waited.outputs[5], alone), 0.0);
}

// "auto": bands while frames come one at a time (one frame's latency), whole frames once a
// frame is submitted while another is on the devices, where there are two devices or more.
TEST(WholeFrames, AutoTakesWholeFramesOnceFramesQueueUp) {
  DeviceSet all = DeviceSet::open("all");
  const int n = static_cast<int>(all.size());
  Pipeline p(all, Graph::parse("saturation=1.3"), options("auto", 3));
  EXPECT_EQ(p.capacity(), n > 1 ? 3 * n : 3);
  const Frame input = test::random_frame(128, 64, PixelFormat::rgba8, 2);
  const Frame want = test::run_graph("saturation=1.3", input, test::device_ids()[0], "single");
  Frame out;
  for (int i = 0; i < 3; ++i) p.process(input, out);
  EXPECT_EQ(p.report().scheduler, "bands");
  Frame in = p.make_frame(128, 64, PixelFormat::rgba8);
  copy_pixels(input, in);
  std::vector<Frame> outs(4);
  std::vector<std::uint64_t> tickets;
  for (Frame& o : outs) tickets.push_back(p.submit(in, o));
  p.wait(tickets.back());
  EXPECT_EQ(p.report().scheduler, n > 1 ? "frames" : "bands");
  if (n > 1) {
    // The bands before predict each device's whole frames: no device starts with a blind probe.
    const auto& lines = p.report().decisions;
    EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& line) {
      return line.find("predicted at") != std::string::npos;
    }));
  }
  for (const Frame& o : outs) {
    EXPECT_TRUE(test::within(
        o, want,
        test::tolerance_within("all", PixelFormat::rgba8).amplified(1.3, PixelFormat::rgba8)));
  }
}

TEST(WholeFrames, UnknownSplitsAreRefused) {
  DeviceSet all = DeviceSet::open("all");
  EXPECT_THROW(Pipeline(all, Graph::parse("saturation"), options("frame", 3)), Error);
  EXPECT_THROW(Pipeline(all, Graph::parse("saturation"), options("whole", 3)), Error);
}

}  // namespace
}  // namespace tandem
