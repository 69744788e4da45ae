#pragma once
// Whole frames per device, for streams: each frame goes to the device that is predicted to
// finish it first, from what that device's recent frames took. No halos, no synchronisation
// between devices; the frames leave the pipeline in order all the same (its frames in flight are
// its reorder buffer). Predictions miss what devices cost each other (a CPU reading frames slows
// a GPU's copies from the same memory), so a guard measures what the host sees: the time
// between frames leaving with every device, against the best device alone, and keeps the faster.
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
  /// Starts device `d`, not measured yet, from `timing` (what its band of a frame before
  /// predicts a whole frame takes), so that its first frame is not a blind probe: a device
  /// predicted slower than waiting for the others takes none. Its first frame of its own is still
  /// warm-up.
  void seed(std::size_t d, const FrameTiming& timing);
  /// Device `d` completed a frame that pick() gave it. `warm_up`: the frame made the buffers it
  /// ran in (as for left()); its time is not kept, as the device's first frame's is not.
  void observe(std::size_t d, const FrameTiming& timing, bool warm_up = false);
  /// A frame left the pipeline at wall time `now_ms` (frames leave in order). Once every device
  /// is measured (or seeded), where every device is predicted to add less than a quarter to the
  /// best's rate, the best alone takes the frames and every device waits for a trial the budget
  /// below allows. Otherwise the guard compares the mean time between frames leaving over 32 frames
  /// with every device taking frames, and then with only the best (the highest rate) taking them;
  /// every device stays only while it is 3% faster. A trial ends after 8 frames where the ways
  /// differ by 12%, after 16 where by 6%. (Where every device takes at most 60% of the best's
  /// fastest recent frame interval, after 8, 16 or 32 frames, the best alone is measured only
  /// once the budget below allows it.) The way that lost is tried again after 256
  /// frames, doubling to 8192 while it keeps losing, and only while the trials that lost and the
  /// one about to run (predicted from the last verdict) cost at most 1% of the wall time. A
  /// device's frame measuring it again restarts the measurement.
  /// `warm_up`: the frame made the buffers it ran in (its device's first in a workspace), and
  /// the guard's window starts after it.
  void left(double now_ms, bool warm_up = false);
  /// Whether every device takes frames (false: the best alone, and those measured again).
  bool every_device() const { return way_ == Way::every; }
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
    int warm_ups = 0;                          // frames that made their buffers, not kept
    bool removed = false;
    double last_start_ms = 0;  // when it last took a frame
    int skipped = 0;           // frames given to others since
    bool measured() const { return !intervals.empty(); }
  };
  // When `d` would finish one more frame, from now, holding `held` frames before it.
  double finish(const Device& d, int held) const;
  // Whether `d`, left out for long, should be measured again (its estimate may be stale).
  bool due_again(const Device& d, double now_ms) const;
  // The measured device of the highest rate; devices_.size() when none is measured.
  std::size_t best() const;
  // The device that runs alone in the best device's way: the best, kept until another is 10%
  // faster (two equal GPUs whose medians cross take turns otherwise, three frames to one, then
  // three to the other, each draining between).
  std::size_t alone();
  enum class Way { every, best };
  void go(Way way, std::string why);
  // Once every device is measured or seeded: the best alone where every device is predicted to
  // add little, every device otherwise.
  void predict();

  std::vector<Device> devices_;
  int depth_;
  double explored_ms_ = 0;  // what measuring left-out devices again has cost
  std::vector<std::string> decisions_;
  double started_ms_ = -1;  // wall time of the first pick
  // The guard.
  Way way_ = Way::every;
  std::size_t alone_ = 0;       // alone()'s choice, where it made one
  bool has_alone_ = false;
  bool predicted_ = false;      // predict() decided the first way
  bool judged_ = false;         // both ways measured once, or predict() chose the best alone
  bool trial_ = false;          // the way now is on trial against `incumbent_ms_`
  double incumbent_ms_ = 0;     // the mean time between frames of the way tried against
  int settle_ = 0;              // frames to let leave before measuring (those of the way before)
  std::vector<double> window_;  // when the frames measured in this way left
  int since_judged_ = 0;        // frames left since the last verdict
  int warm_ups_ = 0;            // windows restarted after a frame that made its buffers
  int trial_gap_ = 256;         // frames between trials
  double last_loss_ms_ = 0;     // what the way that lost cost over the other, a window long
};

}  // namespace tandem::detail
