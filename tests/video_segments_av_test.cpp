// A video cut into segments at its key frames, each filtered on its own and the parts joined:
// every frame equals the run over the whole video, at the same timestamp, with the other streams
// copied once, packet for packet; tonemap's running statistics carry across the borders through
// the warm-up (and do not without it); cutting and joining refuse what they cannot do, saying why.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include "tandem/video_join.hpp"
#include "tandem/video_pipeline.hpp"
#include "tandem/video_segments.hpp"
#include "test_support.hpp"

namespace tandem {
namespace {

namespace fs = std::filesystem;

// `f` throws an Error whose message holds `text`.
void expect_error(const std::function<void()>& f, const std::string& text) {
  const std::string message = test::error_of(f);
  EXPECT_NE(message.find(text), std::string::npos) << "the error: '" << message << "'";
}

// 100 frames 2 ticks apart, a key frame every 10.
KeyFrameIndex every_tenth() {
  KeyFrameIndex index;
  index.time_base = {1, 50};
  for (int i = 0; i < 100; ++i) index.frame_pts.push_back(2 * i);
  for (int i = 0; i < 100; i += 10) index.key_frames.push_back(i);
  return index;
}

TEST(CutSegments, BordersAreTheKeyFramesNearestToEqualCuts) {
  const KeyFrameIndex index = every_tenth();
  const std::vector<VideoSegment> s = cut_segments(index, 3);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].first_frame, 0);
  EXPECT_EQ(s[1].first_frame, 30);  // 33.3 -> 30
  EXPECT_EQ(s[2].first_frame, 70);  // 66.7 -> 70
  EXPECT_EQ(s[0].frames + s[1].frames + s[2].frames, 100);
  EXPECT_EQ(s[0].from_pts, -VideoSegment::kOpen);
  EXPECT_EQ(s[0].to_pts, 60);
  EXPECT_EQ(s[1].from_pts, 60);
  EXPECT_EQ(s[2].to_pts, VideoSegment::kOpen);
  // As many segments as key frames: one each.
  const std::vector<VideoSegment> all = cut_segments(index, 10);
  for (int k = 0; k < 10; ++k) EXPECT_EQ(all[k].first_frame, 10 * k);
}

TEST(CutSegments, TooFewKeyFramesIsAnErrorThatSaysHowMany) {
  KeyFrameIndex index = every_tenth();
  index.key_frames = {0, 50};
  expect_error([&] { cut_segments(index, 3); }, "2 segments at most");
  expect_error([&] { cut_segments(index, 0); }, "not a positive count");
}

TEST(CutSegments, TheWarmUpStartsAtAKeyFrameFarEnoughBack) {
  const KeyFrameIndex index = every_tenth();
  VideoSegment s = cut_segments(index, 3)[1];  // frames 30..69
  add_warm_up(s, index, 15);
  EXPECT_EQ(s.decode_first_frame, 10);
  EXPECT_EQ(s.decode_from_pts, 20);
  EXPECT_EQ(s.first_frame, 30);
  add_warm_up(s, index, 40);  // back to the start
  EXPECT_EQ(s.decode_first_frame, 0);
  EXPECT_EQ(s.decode_from_pts, -VideoSegment::kOpen);
  VideoSegment first = cut_segments(index, 3)[0];
  add_warm_up(first, index, 15);
  EXPECT_EQ(first.decode_first_frame, 0);
}

TEST(ParseSegment, TakesKOfNAndRefusesTheRest) {
  EXPECT_EQ(parse_segment("3/8"), std::make_pair(3, 8));
  EXPECT_EQ(parse_segment("0/1"), std::make_pair(0, 1));
  expect_error([] { parse_segment("8/8"); }, "K counts from 0 to N-1 (7 here)");
  expect_error([] { parse_segment("-1/3"); }, "K counts from 0");
  expect_error([] { parse_segment("1/0"); }, "N must be at least 1");
  for (const char* bad : {"3", "a/b", "1/3x", "/3", "1/"}) {
    expect_error([&] { parse_segment(bad); }, "give K/N");
  }
}

class Segments : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tandem-seg-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    devices_ = DeviceSet::open("all");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // 90 frames at 25 fps whose brightness swings (so frame statistics change from frame to
  // frame), a key frame every 10, with PCM audio.
  fs::path make_video() {
    const fs::path path = dir_ / "in.mkv";
    const std::string cmd = std::string(TANDEM_FFMPEG_PROGRAM) +
                            " -loglevel error -y -f lavfi -i "
                            "testsrc2=size=97x61:rate=25,eq=brightness='0.4*sin(t*4)':eval=frame "
                            "-f lavfi -i sine=frequency=440 -frames:v 90 -c:v ffv1 -g 10 "
                            "-c:a pcm_s16le -shortest " +
                            path.string();
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return path;
  }

  Pipeline pipeline(const std::string& graph) {
    PipelineOptions po;
    po.persist_split = false;
    return Pipeline(devices_, Graph::parse(graph), po);
  }

  // The whole video through `graph`, its streams copied.
  void whole(const fs::path& in, const fs::path& out, const std::string& graph) {
    VideoReader reader(in, {.keep_packets = true});
    VideoWriter writer(out, reader, {.codec = "ffv1"});
    Pipeline p = pipeline(graph);
    process_video(reader, p, writer);
    writer.finish();
  }

  // Segment `s` of `in` through `graph` into `out`, the video alone; `warm_up`: as tandem does.
  void part(const fs::path& in, const fs::path& out, const std::string& graph,
            const KeyFrameIndex& index, VideoSegment s, bool warm_up = true) {
    Pipeline p = pipeline(graph);
    if (warm_up) add_warm_up(s, index, p.warm_up_frames());
    VideoReaderOptions ro;
    ro.from_pts = s.decode_from_pts;
    ro.to_pts = s.to_pts;
    VideoReader reader(in, ro);
    VideoWriter writer(out, reader, {.codec = "ffv1", .copy_streams = false});
    VideoRunOptions run;
    run.segment = &s;
    EXPECT_EQ(process_video(reader, p, writer, run).frames, s.frames);
    writer.finish();
  }

  // Cuts `in` into `count` segments at its key frames, filters each with `graph` and joins
  // them (given in reverse order) into `out`.
  void in_parts(const fs::path& in, const fs::path& out, const std::string& graph, int count,
                bool warm_up = true) {
    const KeyFrameIndex index = index_key_frames(in);
    ASSERT_EQ(index.frame_pts.size(), 90u);
    ASSERT_EQ(index.key_frames,
              (std::vector<std::int64_t>{0, 10, 20, 30, 40, 50, 60, 70, 80}));
    std::vector<fs::path> parts;
    for (const VideoSegment& s : cut_segments(index, count)) {
      parts.push_back(dir_ / ("part-" + std::to_string(s.index) + ".mkv"));
      part(in, parts.back(), graph, index, s, warm_up);
    }
    std::reverse(parts.begin(), parts.end());
    const JoinStats stats = join_segments(parts, out, {.streams_from = in});
    EXPECT_EQ(stats.frames, 90);
    ASSERT_EQ(stats.streams.size(), 1u);
    EXPECT_EQ(stats.streams[0].rfind("audio 1 (pcm_s16le", 0), 0u) << stats.streams[0];
  }

  // The largest difference of a value between the frames of `a` and `b`, which must have the
  // same frames at the same timestamps.
  static int largest_difference(const fs::path& a, const fs::path& b) {
    VideoReader ra(a), rb(b);
    Frame fa, fb;
    std::int64_t pa = 0, pb = 0;
    int largest = 0, k = 0;
    while (ra.read(fa, pa)) {
      EXPECT_TRUE(rb.read(fb, pb)) << "frame " << k << " is missing";
      EXPECT_EQ(pa, pb) << "timestamp of frame " << k;
      for (int y = 0; y < fa.height(); ++y) {
        for (int x = 0; x < 4 * fa.width(); ++x) {
          largest = std::max(largest, std::abs(int(fa.row(y)[x]) - int(fb.row(y)[x])));
        }
      }
      ++k;
    }
    EXPECT_FALSE(rb.read(fb, pb)) << "an extra frame";
    return largest;
  }

  // Codes two runs may differ by: the devices' tolerance (tolerance.hpp: none for one kind of
  // device, a step between kinds) and one code more.
  static double allowed() {
    return test::tolerance_within("all", PixelFormat::rgba8).absolute * 255 + 1;
  }

  // The packets of `path`'s streams besides the video: stream, timestamp and bytes.
  static std::vector<std::tuple<int, std::int64_t, std::string>> packets(const fs::path& path) {
    VideoReader reader(path, {.keep_packets = true});
    Frame f;
    std::int64_t pts = 0;
    std::vector<std::tuple<int, std::int64_t, std::string>> out;
    auto take = [&] {
      for (const StreamPacket& p : reader.take_packets()) {
        out.emplace_back(p.stream(), p.pts(),
                         std::string(reinterpret_cast<const char*>(p.data()), p.size()));
      }
    };
    while (reader.read(f, pts)) take();
    take();
    return out;
  }

  fs::path dir_;
  DeviceSet devices_;
};

TEST_F(Segments, PartsJoinedEqualTheWholeRunFrameTimestampAndPacket) {
  const fs::path in = make_video();
  const std::string graph = "gaussian=sigma=1.5,saturation=1.3";
  whole(in, dir_ / "whole.mkv", graph);
  in_parts(in, dir_ / "joined.mkv", graph, 4);
  EXPECT_LE(largest_difference(dir_ / "whole.mkv", dir_ / "joined.mkv"), allowed());
  const auto want = packets(dir_ / "whole.mkv");
  EXPECT_GT(want.size(), 10u);
  EXPECT_EQ(packets(dir_ / "joined.mkv"), want);
}

// tonemap runs frame N with statistics smoothed over the frames before it: a segment warmed up
// over the frames before its first gives its border frames what the whole run gives them; a
// segment started cold does not (so the comparison can tell).
TEST_F(Segments, TonemapsStatisticsCarryAcrossTheBordersThroughTheWarmUp) {
  const fs::path in = make_video();
  const std::string graph = "tonemap=op=reinhard";
  EXPECT_EQ(pipeline(graph).warm_up_frames(), 33 + pipeline(graph).capacity());
  EXPECT_EQ(pipeline("saturation=1.2,fade=in:0:10").warm_up_frames(), 0);
  whole(in, dir_ / "whole.mkv", graph);
  in_parts(in, dir_ / "warm.mkv", graph, 3);
  in_parts(in, dir_ / "cold.mkv", graph, 3, false);
  EXPECT_LE(largest_difference(dir_ / "whole.mkv", dir_ / "warm.mkv"), allowed());
  EXPECT_GT(largest_difference(dir_ / "whole.mkv", dir_ / "cold.mkv"), 16);  // 124 here
}

// fade counts frames and seconds from the video's first frame, in every segment.
TEST_F(Segments, FadeCountsFromTheVideosFirstFrameInEverySegment) {
  const fs::path in = make_video();
  const std::string graph = "fade=in:0:30,fade=out:50:30";
  whole(in, dir_ / "whole.mkv", graph);
  in_parts(in, dir_ / "joined.mkv", graph, 5);
  EXPECT_LE(largest_difference(dir_ / "whole.mkv", dir_ / "joined.mkv"), allowed());
}

TEST_F(Segments, JoiningRefusesMissingOverlappingAndMismatchedParts) {
  const fs::path in = make_video();
  KeyFrameIndex index = index_key_frames(in);
  std::erase_if(index.key_frames, [](std::int64_t k) { return k % 30 != 0; });
  const std::vector<VideoSegment> s = cut_segments(index, 3);
  std::vector<fs::path> p;
  for (int k = 0; k < 3; ++k) {
    p.push_back(dir_ / ("p" + std::to_string(k) + ".mkv"));
    part(in, p.back(), "saturation=1.2", index, s[k]);
  }
  const fs::path out = dir_ / "out.mkv";
  expect_error([&] { join_segments({p[0], p[2]}, out, {.streams_from = in}); },
                     "frames 30 to 59 are in no part (is one left out?)");
  expect_error([&] { join_segments({p[0], p[1]}, out, {.streams_from = in}); },
                     "is the last part left out?");
  expect_error([&] { join_segments({p[0], p[1], p[1], p[2]}, out, {.streams_from = in}); },
                     "parts overlap (is one given twice?)");
  expect_error([&] { join_segments({}, out); }, "no parts given");
  expect_error([&] { join_segments({p[0], dir_ / "nope.mkv"}, out); }, "no such file");
  // Another size: not the same video.
  {
    VideoReader reader(in);
    VideoWriter writer(dir_ / "small.mkv", reader,
                       {.codec = "ffv1", .width = 48, .height = 30, .copy_streams = false});
    Frame f(48, 30, PixelFormat::rgba8);
    writer.write(f, 0);
    writer.finish();
  }
  expect_error([&] { join_segments({p[0], dir_ / "small.mkv"}, out); }, "its video is ffv1 48x30");
  EXPECT_FALSE(fs::exists(out));
  // Without streams_from only overlaps are refused: the video alone.
  const JoinStats alone = join_segments({p[2], p[0], p[1]}, out);
  EXPECT_EQ(alone.frames, 90);
  EXPECT_TRUE(alone.streams.empty());
}

}  // namespace
}  // namespace tandem
