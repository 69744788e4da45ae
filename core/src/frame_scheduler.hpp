#pragma once
// Whole frames per device, for streams: each frame goes to the device that is predicted to
// finish it first, from what that device's recent frames took. No halos, no synchronisation
// between devices; the frames leave the pipeline in order all the same (its frames in flight are
// its reorder buffer).
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tandem::detail {

/// What one device's completed frame took, in milliseconds.
struct FrameTiming {
  /// Of the device's own clock, since the later of the frame's first command being queued and
  /// the device's frame before ending: what the frame added to the device's time.
  double interval = 0;
  /// The frame's busy time (upload, kernels and download one after the other): what it takes
  /// when nothing is ahead of it.
  double latency = 0;
};

class FrameScheduler {
 public:
  /// `depth`: frames each device holds at most.
  FrameScheduler(std::size_t devices, int depth);

  /// The device for the next frame, given the frames each device holds now (`held`, one per
  /// device) and the wall time in milliseconds: the one predicted to finish it first, among those
  /// that hold fewer than `depth` frames. None when the best device is full: the caller completes
  /// its oldest frame and asks again (a slower device then never takes a frame that the best one
  /// would have finished sooner after the wait). A device not measured yet takes one frame at a
  /// time until it has been; one left out for long is measured again now and then, within a
  /// budget of 1% of the wall time.
  std::optional<std::size_t> pick(std::span<const int> held, double now_ms);
  /// Device `d` completed a frame that pick() gave it.
  void observe(std::size_t d, const FrameTiming& timing);
  /// Device `d` failed: it takes no more frames.
  void remove(std::size_t d);
  /// The frames per millisecond each device is predicted to sustain (0: not measured or
  /// removed).
  std::vector<double> rates() const;
  /// Devices it measured again since the last call, one line each.
  std::vector<std::string> take_decisions() { return std::exchange(decisions_, {}); }

 private:
  struct Device {
    std::vector<double> intervals, latencies;  // the latest few
    int observed = 0;                          // frames completed, the first (warm-up) included
    bool removed = false;
    double last_start_ms = 0;  // when it last took a frame
    int skipped = 0;           // frames given to others since
    bool measured() const { return !intervals.empty(); }
  };
  // When `d` would finish one more frame, from now, holding `held` frames before it.
  double finish(const Device& d, int held) const;
  // Whether `d`, left out for long, should be measured again (its estimate may be stale).
  bool due_again(const Device& d, double now_ms) const;

  std::vector<Device> devices_;
  int depth_;
  double explored_ms_ = 0;  // what measuring left-out devices again has cost
  std::vector<std::string> decisions_;
  double started_ms_ = -1;  // wall time of the first pick
};

}  // namespace tandem::detail
