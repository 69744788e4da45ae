#pragma once
// The frames on the devices, from submit() to their completion: what each one carries (its
// bands or its device, its commands' events, its unmaps, its statistics partials) and what its
// events measured once it completed. The pipeline keeps them in a deque in submission order:
// frames leave it at its front, in order, whichever device finished first.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <utility>
#include <vector>

#include <CL/opencl.hpp>

#include "band_executor.hpp"
#include "frame_stats.hpp"
#include "tandem/frame.hpp"
#include "tandem/split_policy.hpp"

namespace tandem::detail {

// InFlight::device of a frame cut into bands across the devices.
constexpr std::size_t kEveryDevice = SIZE_MAX;

// What one device did for one frame, in milliseconds of its profiling events.
struct DeviceTimes {
  int rows = 0;
  double upload = 0;
  double compute = 0;
  double download = 0;
  // A band's way one frame at a time, where measured: from the frame's submission to the
  // host's beginning its enqueue (host clock), then from its first command queued to its last
  // ended (the device's clock); and its halo rows (BandEvents::halo_rows).
  double lead = 0, span = 0, halo = 0;
  bool new_plan = false;  // BandEvents::new_plan
  double total() const { return upload + compute + download; }
  // What the device costs a frame: with frames overlapping, its three queues run at once and the
  // longest sets its pace; one frame at a time, they add up.
  double cost(bool overlapped) const {
    return overlapped ? std::max({upload, compute, download}) : total();
  }
};

// What the split policy learns from a frame's `times` (BandTiming::ok left true). One frame at a
// time, each band's time runs from the frame's first enqueue to the band's end, and its fixed
// part is what its rows do not scale.
std::vector<BandTiming> band_timings(const std::vector<DeviceTimes>& times, bool overlapped);

double ns_to_ms(cl_ulong ns);
// The summed busy time (END - START) of `events`.
double busy_ms(const std::vector<cl::Event>& events);

// A frame on the devices, from submit() to its completion.
struct InFlight {
  std::uint64_t ticket = 0;
  const Frame* input = nullptr;
  Frame* output = nullptr;
  int slot = 0;  // which of each device's workspaces it uses
  std::size_t device = kEveryDevice;  // a whole frame's device (whole-frames scheduling)
  FrameTime time;                     // where it lies in its video
  // Its point-wise stages' arguments: taken with its statistics and time, under the mutex.
  StageArgs stage_args;
  bool collect_stats = false;
  bool smooth = true;
  bool prepass = false;  // a still image's statistics pre-pass: not a frame of the report
  std::vector<double> fractions;
  std::vector<int> bounds;
  std::vector<BandEvents> events;  // per device
  std::vector<std::chrono::steady_clock::time_point> enqueue_began;  // per device, for bands
  std::vector<std::vector<std::function<void()>>> after;  // per device: unmaps, once done
  std::vector<std::vector<StatsRows>> stats_rows;
  bool enqueued = false;  // its commands are on the devices, or `error` says why they are not
  std::exception_ptr error;  // a whole frame's enqueue failed: whoever completes it throws this
  bool waited = false;    // a thread waits for its events
  bool overlapped = false;  // submitted while another frame was on the devices
  std::chrono::steady_clock::time_point submitted;
  double wall_ms = 0;  // what the host saw it add (SplitPolicy::observe); 0: not measured
  // Once its events completed (measure()): what each device took, and the sums of its
  // statistics partials per pass.
  std::vector<DeviceTimes> times;
  FrameSums stats_sums;
  // A whole frame's commands on its device's clock: the first queued, the last ended.
  cl_ulong first_queued_ns = 0, last_end_ns = 0;

  // Its unmaps on device `d`: by a thread holding that device's lock (Pipeline::Impl::unmap()).
  void run_after(std::size_t d) {
    for (auto& f : after[d]) f();
    after[d].clear();
  }
  // What it started must end before a failure leaves it, or a redo reuses its buffers.
  void wait_all() const;
  // Reads its completed events and its statistics partials into `times` and `stats_sums`. It
  // enqueues nothing, so it runs without the pipeline's mutex or any device's lock: a thread
  // submitting the next frame is not held up by it.
  void measure();
};

// Frames each of `devices` holds in `ring` (a frame in bands counts for every device), `except`
// left out.
std::vector<int> held(const std::deque<InFlight>& ring, std::size_t devices,
                      const InFlight* except = nullptr);

}  // namespace tandem::detail
