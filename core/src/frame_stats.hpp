#pragma once
// Frame statistics for the passes whose filters need them (tonemap's log-average and largest
// luminance): the partials the fused kernels leave per row and work-group, added up in a fixed
// order, and the running estimate that each completed frame hands to the next.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include <CL/opencl.hpp>

#include "band_plan.hpp"
#include "plan.hpp"
#include "tandem/filter.hpp"

namespace tandem::detail {

/// Statistics partials (per row, per work-group) one band left in a device buffer for pass
/// `pass`, and the host copy a non-blocking read fills (complete once the band's download
/// events are).
struct StatsRows {
  std::size_t pass;
  cl::Buffer buffer;
  Range rows;
  const cl_float2* host;  // the partials read back, in the band's workspace
  std::size_t count;
  double pixels;  // of the rows they cover
};

/// Sums of the statistics partials of a frame, per pass.
struct StatsSums {
  double log_sum = 0;
  double maximum = 0;
  double pixels = 0;
};
using FrameSums = std::map<std::size_t, StatsSums>;

/// Adds the partials of `entries`, read back, to `sums`.
void add_partials(const std::vector<StatsRows>& entries, FrameSums& sums);

/// The statistics each stats-needing pass (by index) runs with, and what they were after each
/// of the latest frames: frame N runs with those of the frames up to N - lag, whichever frames
/// have completed when it starts, so that its output does not depend on timing or on which
/// device ran which frame.
class FrameStatistics {
 public:
  /// `lag`: frames between a frame and the latest whose statistics it runs with (at least 1).
  explicit FrameStatistics(std::uint64_t lag = 1) : lag_(std::max<std::uint64_t>(lag, 1)) {}
  /// Frames after which the running statistics keep less than `fraction` of what they were
  /// (in the log domain): how far back a video cut into segments starts each one, so that its
  /// first frame runs with the statistics a run from the start would give it.
  static std::int64_t frames_to_forget(double fraction);
  /// None yet: the first frame needs a pre-pass.
  bool empty() const { return by_pass_.empty(); }
  /// Frame `ticket` completed with `sums` (frames complete in ticket order):
  /// with `smooth`, blended into the running statistics in the log domain (a cut or a flash
  /// eases in over a few frames); without, a pre-pass, the frame's own statistics.
  void combine(const FrameSums& sums, bool smooth, std::uint64_t ticket);
  /// Hands each pass the statistics as they are now (a still's pre-pass).
  void apply(std::vector<Pass>& passes) const;
  /// Hands each pass the statistics frame `ticket` runs with: those after frame ticket - lag,
  /// or the oldest kept while there was none (the first frame's pre-pass).
  void apply_for(std::vector<Pass>& passes, std::uint64_t ticket) const;

 private:
  using ByPass = std::map<std::size_t, FrameStats>;
  static void hand(const ByPass& stats, std::vector<Pass>& passes);

  std::uint64_t lag_;
  ByPass by_pass_;
  std::deque<std::pair<std::uint64_t, ByPass>> after_;  // by ticket, the latest lag + 1
};

}  // namespace tandem::detail
