#pragma once
// Frame statistics for the passes whose filters need them (tonemap's log-average and largest
// luminance): the partials the fused kernels leave per row and work-group, added up in a fixed
// order, and the running estimate that each completed frame hands to the next.
#include <cstddef>
#include <map>
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
};

/// Sums of the statistics partials of a frame, per pass.
struct StatsSums {
  double log_sum = 0;
  double maximum = 0;
};
using FrameSums = std::map<std::size_t, StatsSums>;

/// Adds the partials of `entries`, read back, to `sums`.
void add_partials(const std::vector<StatsRows>& entries, FrameSums& sums);

/// The statistics each stats-needing pass (by index) runs with.
class FrameStatistics {
 public:
  /// None yet: the first frame needs a pre-pass.
  bool empty() const { return by_pass_.empty(); }
  /// A frame of `pixels` pixels completed with `sums`: with `smooth`, blended into the running
  /// statistics in the log domain (a cut or a flash eases in over a few frames); without, a
  /// pre-pass, the frame's own statistics.
  void combine(const FrameSums& sums, double pixels, bool smooth);
  /// Hands each pass's statistics to its filter.
  void apply(std::vector<Pass>& passes) const;

 private:
  std::map<std::size_t, FrameStats> by_pass_;
};

}  // namespace tandem::detail
