// What the split policy learns from a frame's measured times (core/src/frame_ring.hpp's
// band_timings): one frame at a time, a band's time runs from the frame's first enqueue, so the
// host's time before that is nobody's fixed cost; frames that overlap give the busiest queue.
#include <gtest/gtest.h>

#include <vector>

#include "frame_ring.hpp"

namespace tandem::detail {
namespace {

DeviceTimes band(int rows, double busy, double lead, double span, double halo = 0) {
  DeviceTimes t;
  t.rows = rows;
  t.compute = busy;
  t.lead = lead;
  t.span = span;
  t.halo = halo;
  return t;
}

// Two H200s early in a run: the host began the first band's enqueue 0.15 ms after the frame's
// submission and the second's 0.25 ms after. Only the 0.1 ms between them is the second band's.
TEST(BandTimings, TheHostsTimeBeforeTheFirstEnqueueIsNoBandsFixedCost) {
  const std::vector<BandTiming> t =
      band_timings({band(540, 0.2, 0.15, 0.22), band(540, 0.2, 0.25, 0.24)}, false);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_DOUBLE_EQ(t[0].ms, 0.22);
  EXPECT_NEAR(t[0].fixed_ms, 0.02, 1e-12);
  EXPECT_DOUBLE_EQ(t[1].ms, 0.1 + 0.24);
  EXPECT_NEAR(t[1].fixed_ms, 0.14, 1e-12);
  EXPECT_EQ(t[0].rows, 540);
  EXPECT_TRUE(t[0].ok && t[1].ok);
}

// The busy time of a band with halo rows is spread over both: the halo's share is fixed.
TEST(BandTimings, HaloRowsAreFixedCosts) {
  const std::vector<BandTiming> t = band_timings({band(100, 1.1, 0, 1.1, 10)}, false);
  EXPECT_NEAR(t[0].fixed_ms, 0.1, 1e-12);
}

// A device that sat out (no span) sets no common lead, and is measured as nothing.
TEST(BandTimings, ADeviceThatSatOutIsLeftAlone) {
  const std::vector<BandTiming> t =
      band_timings({band(0, 0, 0, 0), band(1080, 0.3, 0.05, 0.35)}, false);
  EXPECT_EQ(t[0].rows, 0);
  EXPECT_LT(t[0].fixed_ms, 0);
  EXPECT_DOUBLE_EQ(t[1].ms, 0.35);
  EXPECT_NEAR(t[1].fixed_ms, 0.05, 1e-12);
}

// Overlapping frames: the longest of the three queues, and no fixed part measured.
TEST(BandTimings, OverlappedFramesGiveTheBusiestQueue) {
  DeviceTimes t = band(1080, 0.3, 0.05, 0.5);
  t.upload = 0.4;
  t.download = 0.2;
  const std::vector<BandTiming> timings = band_timings({t}, true);
  EXPECT_DOUBLE_EQ(timings[0].ms, 0.4);
  EXPECT_LT(timings[0].fixed_ms, 0);
}

}  // namespace
}  // namespace tandem::detail
