// fade against its host reference on every device at levels along the fade (both formats, a
// colour and alpha), and frames in a stream each at its own level: pipelined, in whole frames
// per device, co-executed, after a stencil (never in its epilogue), and numbered by submit()
// where no time is given.
// Tolerance: exact on 8-bit (one fma on both sides), 1e-6 on float values.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_support.hpp"

namespace tandem {
namespace {

using test::run_graph;

// The host reference of `graph` (a fade alone) at `time`.
Frame reference_at(const std::string& graph, const Frame& input, const FrameTime& time) {
  Graph g = Graph::parse(graph);
  auto filter = g.nodes()[0].spec->make(g.nodes()[0].params);
  filter->set_frame_time(time);
  Frame out(input.width(), input.height(), input.format());
  const Frame* inputs[] = {&input};
  filter->reference(inputs, out);
  return out;
}

// Runs `graph` on `frames`, frame k at time `times[k]` (or untimed), all submitted before any
// is waited for.
std::vector<Frame> stream(const std::string& graph, const std::vector<Frame>& frames,
                          const std::vector<FrameTime>& times, const std::string& devices,
                          const std::string& split) {
  DeviceSet set = DeviceSet::open(devices);
  Pipeline pipeline(set, Graph::parse(graph), {.split = split, .persist_split = false});
  std::vector<Frame> in, out(frames.size());
  std::vector<std::uint64_t> tickets;
  for (std::size_t k = 0; k < frames.size(); ++k) {
    in.push_back(pipeline.make_frame(frames[k].width(), frames[k].height(), frames[k].format()));
    copy_pixels(frames[k], in.back());
  }
  for (std::size_t k = 0; k < frames.size(); ++k) {
    tickets.push_back(times.empty() ? pipeline.submit(in[k], out[k])
                                    : pipeline.submit(in[k], out[k], times[k]));
  }
  for (std::uint64_t t : tickets) pipeline.wait(t);
  return out;
}

class FadeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FadeTest, MatchesHostReferenceAlongTheFade) {
  const std::vector<std::string> graphs = {
      "fade=nb_frames=8", "fade=type=out:color=white:nb_frames=8", "fade=nb_frames=8:alpha=1"};
  for (const auto& size : test::kAwkwardSizes) {
    for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
      const Frame input = test::random_frame(size.width, size.height, format, 3 + size.width);
      for (const std::string& graph : graphs) {
        // Frames 0, 3 and 8 of an 8-frame fade: the colour, part way, the picture.
        std::vector<Frame> frames(3, input);
        const std::vector<FrameTime> times = {{0, 0}, {3, 0.12}, {8, 0.32}};
        const std::vector<Frame> got = stream(graph, frames, times, GetParam(), "single");
        for (std::size_t k = 0; k < times.size(); ++k) {
          SCOPED_TRACE(graph + " frame " + std::to_string(times[k].index) + " on " +
                       std::to_string(size.width) + "x" + std::to_string(size.height));
          const Frame want = reference_at(graph, input, times[k]);
          EXPECT_LE(test::max_difference(got[k], want), format == PixelFormat::rgba8 ? 0.0 : 1e-6);
        }
      }
    }
  }
  // The ends are the colour and the picture themselves.
  const Frame input = test::random_frame(33, 9, PixelFormat::rgba8, 1);
  const auto ends =
      stream("fade=nb_frames=8", {input, input}, {{0, 0}, {8, 0.32}}, GetParam(), "single");
  Frame black(33, 9, PixelFormat::rgba8);
  for (int y = 0; y < 9; ++y) {
    for (int x = 0; x < 33; ++x) black.row(y)[4 * x + 3] = input.row(y)[4 * x + 3];
  }
  EXPECT_EQ(test::max_difference(ends[0], black), 0.0);
  EXPECT_EQ(test::max_difference(ends[1], input), 0.0);
}

INSTANTIATE_TEST_SUITE_P(EveryDevice, FadeTest, ::testing::ValuesIn(test::device_ids()),
                         [](const auto& info) { return test::device_test_name(info.param); });

// Twelve frames in flight at once, each at its own level whichever way the frames are scheduled;
// after a stencil the fade runs in a kernel of its own, so its level is the frame's too.
TEST(Fade, EveryFrameOfAStreamAtItsOwnLevel) {
  std::vector<Frame> frames;
  std::vector<FrameTime> times;
  for (int k = 0; k < 12; ++k) {
    frames.push_back(test::random_frame(97, 61, PixelFormat::rgba8, 70 + k));
    times.push_back({k, k / 25.0});
  }
  const auto tol = test::tolerance_within("all", PixelFormat::rgba8);
  for (const char* graph :
       {"fade=duration=0.4", "gaussian=sigma=1.5,fade=type=out:nb_frames=10,saturation=1.2"}) {
    for (const std::string& split :
         {std::string("adaptive"), std::string("frames"), test::split_first(0.4)}) {
      SCOPED_TRACE(std::string(graph) + ", split " + split);
      const std::vector<Frame> got = stream(graph, frames, times, "all", split);
      for (std::size_t k = 0; k < frames.size(); ++k) {
        const std::vector<Frame> one = stream(graph, {frames[k]}, {times[k]}, "all", "single");
        EXPECT_TRUE(test::within(got[k], one[0], tol)) << "frame " << k;
      }
    }
  }
  // The fade after the stencil is not its epilogue: gaussian, then saturation's chain.
  DeviceSet devices = DeviceSet::open("all");
  Pipeline pipeline(devices, Graph::parse("gaussian=sigma=1.5,fade,saturation=1.2"),
                    {.persist_split = false});
  Frame out;
  pipeline.process(frames[0], out);
  EXPECT_EQ(pipeline.passes().size(), 2u);
}

// Without a time, submit() numbers frames from 0: frame k of a 4-frame fade is at level k / 4.
TEST(Fade, FramesSubmittedWithoutATimeAreNumbered) {
  const Frame input = test::random_frame(40, 20, PixelFormat::rgba8, 5);
  const std::vector<Frame> got =
      stream("fade=nb_frames=4", std::vector<Frame>(5, input), {}, "all", "single");
  for (int k = 0; k < 5; ++k) {
    const Frame want = reference_at("fade=nb_frames=4", input, {k, k / 25.0});
    EXPECT_EQ(test::max_difference(got[k], want), 0.0) << "frame " << k;
  }
  EXPECT_GT(test::max_difference(got[1], got[2]), 10.0);
}

}  // namespace
}  // namespace tandem
