#pragma once
// The wall-time guard of the adaptive split: a split across devices is kept only while the host
// sees it finish frames sooner than the fastest device alone.
#include <algorithm>
#include <memory>
#include <span>

#include "tandem/split_policy.hpp"

namespace tandem::detail {

/// Frames whose band plans were made for them (BandTiming::new_plan) are slower than the frames
/// after: the model and the guard leave them out, up to this many in a row (a ring of workspaces
/// makes a plan in each; frames whose size changes every time make one each).
inline constexpr int kReplannedSkipped = 4;

/// Counts the frames with new band plans in a row; left_out() says whether this one is left out.
class ReplannedFrames {
 public:
  bool left_out(std::span<const BandTiming> timings) {
    const bool replanned =
        std::any_of(timings.begin(), timings.end(), [](const BandTiming& t) { return t.new_plan; });
    in_a_row_ = replanned ? in_a_row_ + 1 : 0;
    return replanned && in_a_row_ <= kReplannedSkipped;
  }

 private:
  int in_a_row_ = 0;
};

/// Wraps `inner` (the adaptive policy over `devices` devices). The inner policy balances the
/// devices' busy times; costs its timings do not show (start offsets, host enqueues, transfers
/// behind another device's) can make its split slower than one device alone. The guard measures
/// the wall time of the frames each way (medians over a few frames), keeps the split only when it
/// beats the device that takes the most rows alone by a margin, and tries the other way again
/// now and then, less often while its verdict stands.
std::unique_ptr<SplitPolicy> guard_by_wall_time(std::unique_ptr<SplitPolicy> inner,
                                                std::size_t devices);

}  // namespace tandem::detail
