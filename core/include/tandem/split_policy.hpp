#pragma once
// How a frame's rows are shared among devices, and how the shares learn from device timings.
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tandem {

/// What one device did on one frame.
struct BandTiming {
  int rows = 0;    ///< output rows it computed (0 when it sat out)
  double ms = 0;   ///< what the frame cost it, from profiling events: kernels plus its own
                   ///< transfers, or the longest of the three when frames overlap
  bool ok = true;  ///< false when the device failed on this frame
  /// The part of `ms` that its rows do not scale, where measured (negative: not measured): the
  /// host's time from the frame's first enqueue to the band's, the wait from enqueue to start, gaps
  /// between its commands and its halo rows. With it, `ms` is from the moment the frame's first
  /// band began its enqueue to this band's end, as the host waits for it (what the host did for the
  /// frame before that is the frame's, whatever its split).
  double fixed_ms = -1;
  /// Its band's plan was made for this frame (its rows changed: buffers and arguments made
  /// anew), which takes longer than the bands after.
  bool new_plan = false;
};

/// Decides each frame's fractions of rows per device.
class SplitPolicy {
 public:
  virtual ~SplitPolicy() = default;
  /// Fractions for the next frame, one per device, summing to 1 (0: the device sits out). The
  /// same until the next observe() or remove(), however often it is asked. Throws Error once
  /// every device has been removed.
  virtual std::vector<double> fractions() = 0;
  /// The timings of the frame just run, in device order (one per device), and the wall time the
  /// host saw it take: from its submission, or from the completion of the frame before when it
  /// was submitted earlier (pipelined frames), to its completion; 0 when not measured.
  virtual void observe(std::span<const BandTiming> timings, double wall_ms) {
    (void)timings;
    (void)wall_ms;
  }
  /// Device `i` failed for good: it gets no rows from now on, the others share its rows.
  virtual void remove(std::size_t i) = 0;
  /// "adaptive", "static:0.3,0.7", "single".
  virtual std::string name() const = 0;
  /// What the policy has learned, to persist and pass back to make_adaptive_policy on a later run
  /// with the same devices, graph and frame size: one fraction per device. Empty when the policy
  /// learns nothing.
  virtual std::vector<double> state() const { return {}; }
  /// The choices it made since the last call, one line each: which way of running it tried,
  /// kept or left, and why (the pipeline reports them with the frame they came after).
  virtual std::vector<std::string> take_decisions() { return {}; }
};

/// Makes the policy named by `spec` for `devices` devices; throws Error on a malformed spec.
///  - "adaptive" (or "", or "bands"): learns each device's speed and overhead from the timings,
///    see below;
///  - "static:F1,...,Fn": fixed fractions, one per device, normalised when they do not sum to 1;
///  - "single": every row to device 0 (to the first device left, once it is removed).
std::unique_ptr<SplitPolicy> make_split_policy(std::string_view spec, std::size_t devices);

/// The adaptive policy. It models each device's time for a band as overhead + rows * cost,
/// learnt from observe() (each device's first timed band is dropped as warm-up; outliers beyond
/// 1.5x are dropped until three agree), and gives the devices the fractions that make them finish
/// together; a device whose share would not pay for its overhead sits out and is probed now and
/// then with a small share. Busy times miss what the host waits for besides (start offsets,
/// enqueues, transfers): with several devices, the wall times observe() gets guard the split. It
/// is kept only while its frames' median wall time beats the device with the most rows alone by
/// 3%; otherwise that device runs alone. The way not taken is tried again after 32 frames and
/// 1 s of wall time, doubling up to 1024 frames and 64 s while the verdict stands, while the
/// trials that lost have cost at most 1% of the wall time, and at once when the way chosen gets
/// slower than the other was. Without wall times (0) the guard stays out. It starts from `initial`
/// (one fraction per device, normalised; 0: the device starts out of the split), or from an equal
/// split when `initial` is empty; state() returns what it learned in the same form. Throws Error on
/// a malformed `initial`.
std::unique_ptr<SplitPolicy> make_adaptive_policy(std::size_t devices,
                                                  std::vector<double> initial = {});

/// Band boundaries (size n+1, from 0 to height) for `fractions` (normalised when they do not sum
/// to 1), each band's height a multiple of `quantum` rows except the last non-empty band, which
/// also takes the height % quantum rows left over. A fraction of 0 gives an empty band; every
/// band is within one quantum of its exact share. Throws Error on a negative height, a quantum
/// below 1, or fractions that are empty, negative, not finite or all zero.
std::vector<int> band_boundaries(int height, std::span<const double> fractions, int quantum = 1);

}  // namespace tandem
