#pragma once
// The wall-time guard of the adaptive split: a split across devices is kept only while the host
// sees it finish frames sooner than the fastest device alone.
#include <memory>

#include "tandem/split_policy.hpp"

namespace tandem::detail {

/// Frames whose band plans were made for them (BandTiming::new_plan) are slower than the frames
/// after: the model and the guard leave them out, up to this many in a row (a ring of workspaces
/// makes a plan in each; frames whose size changes every time make one each).
inline constexpr int kReplannedSkipped = 4;

/// Wraps `inner` (the adaptive policy over `devices` devices). The inner policy balances the
/// devices' busy times; costs its timings do not show (start offsets, host enqueues, transfers
/// behind another device's) can make its split slower than one device alone. The guard measures
/// the wall time of the frames each way (medians over a few frames), keeps the split only when it
/// beats the device that takes the most rows alone by a margin, and tries the other way again
/// now and then, less often while its verdict stands.
std::unique_ptr<SplitPolicy> guard_by_wall_time(std::unique_ptr<SplitPolicy> inner,
                                                std::size_t devices);

}  // namespace tandem::detail
