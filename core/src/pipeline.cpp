#include "tandem/pipeline.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <iostream>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <shared_mutex>
#include <thread>
#include <utility>

#include "band_executor.hpp"
#include "chunk_scheduler.hpp"
#include "device_failure.hpp"
#include "device_feeders.hpp"
#include "frame_ring.hpp"
#include "frame_scheduler.hpp"
#include "frame_stats.hpp"
#include "plan.hpp"
#include "quirks.hpp"
#include "split_store.hpp"
#include "tandem/error.hpp"

namespace tandem {

using detail::BandEvents;
using detail::busy_ms;
using detail::DeviceFailure;
using detail::DeviceTimes;
using detail::failure;
using detail::InFlight;
using detail::kEveryDevice;
using detail::ns_to_ms;
using detail::Pass;
using detail::Range;

namespace {

// Completed frames whose split split_of() can still tell.
constexpr std::size_t kRecentSplits = 64;

bool is_device_failure(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const DeviceFailure&) {
    return true;
  } catch (...) {
    return false;
  }
}

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}

// Which devices' feeders wait for their next job awake (DeviceFeeders): discrete GPUs', whose
// threads only enqueue (measured on H200s); a CPU device's would take a core from its own
// kernels, and a GPU that shares the host's memory shares its chip too.
std::vector<bool> gpu_feeders_spin(const DeviceSet& devices) {
  std::vector<bool> spins;
  for (const Device& d : devices.devices()) {
    spins.push_back(d.info().type == DeviceType::gpu && !d.info().host_unified_memory);
  }
  return spins;
}

}  // namespace

struct Pipeline::Impl {
  DeviceSet& devices;
  Graph graph;
  PipelineOptions options;
  std::unique_ptr<SplitPolicy> policy;  // bands: each frame's rows per device
  std::string bands_spec;               // what made it
  // Whole frames per device instead of bands: never, always, or once frames queue up (a caller
  // submits while frames are on the devices: throughput matters more than one frame's latency).
  enum class WholeFrames { never, always, streams } whole_frames = WholeFrames::never;
  bool frames_mode = false;  // whole frames from now on
  std::unique_ptr<detail::FrameScheduler> frame_scheduler;
  std::vector<cl_ulong> last_end_ns;        // per device, its last whole frame's end
  // Per device, from its last band (0: none yet): its time per row with its copies and kernels
  // one after another, and with them overlapping (the longest of the three), as frames in
  // flight do.
  std::vector<double> band_ms_per_row, band_interval_per_row;
  int frames_learned = 0;  // frames the bands policy observed (a split worth saving)
  detail::Plan lowered;  // the graph's passes; the names below are its parts
  std::vector<std::unique_ptr<Filter>>& filters = lowered.filters;
  std::vector<Pass>& passes = lowered.passes;
  std::vector<PixelFormat>& value_formats = lowered.value_formats;
  int& output_value = lowered.output_value;
  detail::FrameFormats formats;  // what `lowered` was lowered for
  bool compiled = false;
  bool timed = false;               // a pass has a filter that follows the frames' time (fade)
  std::int64_t untimed_frames = 0;  // submitted without a time: the next one's index
  Size sized_for{-1, -1};           // the input size `output_size` was found for
  Size output_size;                 // the graph's output size for inputs of that size
  // Runs the bands, each frame in a workspace of its own on each device (frames_on_devices and
  // one more), so that a frame's upload never writes buffers a frame before is still reading.
  std::unique_ptr<detail::BandExecutor> executor;
  std::vector<bool> failed;
  RunReport report;
  std::vector<double> share_sum;
  // Running frame statistics per stats-needing pass (index into passes), lagging by capacity().
  detail::FrameStatistics stats;
  detail::SplitStore split_store;
  std::string split_key;  // of the learned split loaded and saved; empty: none
  // Whole frames: each device's time for a frame, kept across runs like the split; what the
  // last run left (0: a device it did not measure).
  std::string frames_key;
  std::vector<double> last_frame_ms;
  int chunk_rows = 0;     // > 0: the dynamic chunks policy instead of `policy`
  // Frames on the devices, oldest first. `mutex` guards them and everything above; neither a
  // thread waiting for a frame's events nor one enqueuing a frame's commands holds it, so that
  // submitting, completing and reporting never wait for each other's driver calls.
  std::mutex mutex;
  // Whoever enqueues on a device's queues holds its lock, and so do its unmaps: PoCL's basic
  // device deadlocked when a finished frame was unmapped beside a submit() on the same queues.
  // A frame's enqueue holds `gate` shared, so that devices are fed at once; what must find
  // nothing enqueued beside it (a pre-pass, chunks, the redo of a failed device's frames) holds
  // it exclusive and every device's lock (exclusive()). All are taken before `mutex` (never
  // while holding it), the gate first, then devices in index order.
  std::shared_mutex gate;
  std::unique_ptr<std::mutex[]> device_mutex;
  // Held under a device's lock while enqueuing on it, one per context (context_lock()).
  std::unique_ptr<std::mutex[]> context_mutex;
  std::condition_variable completed;
  std::deque<InFlight> in_flight;
  std::uint64_t last_ticket = 0;
  std::chrono::steady_clock::time_point busy_since;  // when in_flight last became non-empty
  std::chrono::steady_clock::time_point last_done;   // when the last frame completed
  bool split_loaded = false;
  std::deque<std::pair<std::uint64_t, std::vector<double>>> recent_splits;  // by ticket
  const std::chrono::steady_clock::time_point born = std::chrono::steady_clock::now();
  // One host thread per device for its bands and whole frames (last: it stops first).
  detail::DeviceFeeders feeders;

  Impl(DeviceSet& d, Graph g, PipelineOptions o)
      : devices(d),
        graph(std::move(g)),
        options(std::move(o)),
        device_mutex(std::make_unique<std::mutex[]>(d.size())),
        context_mutex(std::make_unique<std::mutex[]>(d.size())),
        feeders(gpu_feeders_spin(d)) {
    if (options.split.starts_with("chunks:")) {
      const std::string n = options.split.substr(7);
      int rows = 0;
      auto [ptr, ec] = std::from_chars(n.data(), n.data() + n.size(), rows);
      if (ec != std::errc() || ptr != n.data() + n.size() || rows < 1 || rows > 65536) {
        throw Error("split policy \"" + options.split +
                    "\": expected chunks:N with N rows per chunk, 1..65536");
      }
      chunk_rows = rows;
    } else {
      const std::string& s = options.split;
      whole_frames = s == "frames"                       ? WholeFrames::always
                     : s == "auto" && devices.size() > 1 ? WholeFrames::streams
                                                         : WholeFrames::never;
      bands_spec = s == "auto" || s == "bands" || s == "frames" ? "adaptive" : s;
      policy = make_split_policy(bands_spec, devices.size());
    }
    if (options.frames_on_devices < 1 || options.frames_on_devices > 8) {
      throw Error("frames on the devices: " + std::to_string(options.frames_on_devices) +
                  " is not in 1..8");
    }
    frame_scheduler =
        std::make_unique<detail::FrameScheduler>(devices.size(), options.frames_on_devices);
    last_end_ns.assign(devices.size(), 0);
    band_ms_per_row.assign(devices.size(), 0.0);
    band_interval_per_row.assign(devices.size(), 0.0);
    stats = detail::FrameStatistics(capacity());
    // As many workspaces per device as frames may be on the devices, and one more: whole frames
    // that a failed device leaves to another may take it past its share, up to every frame
    // (feed_whole_frame()). A workspace makes its buffers when first used.
    executor = std::make_unique<detail::BandExecutor>(devices, lowered, options.schedule,
                                                      capacity() + 1);
    failed.assign(devices.size(), false);
    share_sum.assign(devices.size(), 0.0);
    for (const auto& dev : devices.devices()) {
      report.devices.push_back({dev.info().id, dev.info().name, dev.info().type, 0, 0, false});
    }
  }

  // Frames on the devices at most: frames_on_devices, per device with whole frames.
  int capacity() const {
    const int per_device = options.frames_on_devices;
    return whole_frames == WholeFrames::never ? per_device
                                              : per_device * static_cast<int>(devices.size());
  }
  double now_ms() const { return elapsed_ms(born); }
  // Frames each device holds now (a frame in bands counts for every device), `except` one.
  std::vector<int> held(const InFlight* except = nullptr) const;
  // Whole frames: the device of the next frame, completing the oldest frames while the best
  // device is full.
  std::size_t pick_device(std::unique_lock<std::mutex>& lock);
  // The device for frame `f` after its device failed on it: the one holding the fewest frames.
  std::size_t pick_device_again(const InFlight& f) const;
  // Frame `f` to device `d` whole, in the lowest of its workspaces that no frame holds.
  void give_whole_frame(InFlight& f, std::size_t d);
  void compile(const detail::FrameFormats& frames);
  // Bands start on multiples of this: the frames' row groups (row pairs of 4:2:0 planes).
  int band_quantum() const {
    return std::max(rows_per_group(formats.input), rows_per_group(formats.output));
  }
  // What holds every device's queues for one thread: the gate exclusive, every device's lock.
  struct Exclusive {
    std::unique_lock<std::shared_mutex> gate;
    std::vector<std::unique_lock<std::mutex>> devices;
  };
  Exclusive exclusive();
  // Wraps `input` and `output` in the context of every device that shares the host's memory
  // (`only`: of that device alone, where it does), before threads that enqueue look the
  // wrappers up.
  void bind_frames(const Frame& input, const Frame& output, std::size_t only = kEveryDevice);
  // Tells the filters that follow the frames' time the next frame's, and takes the point-wise
  // stages' arguments the frame runs with (its statistics handed to the filters before), under
  // `mutex`.
  detail::StageArgs frame_args(const FrameTime& time);
  // Enqueues every band of `f`; throws DeviceFailure, or Error for a program that does not
  // build, once what it enqueued has ended. With `held` (exclusive()), one band after another;
  // else each device's band on its own thread under its lock, the first here.
  void enqueue_frame(InFlight& f, bool held);
  // One device's band of `f`, its lock held: throws as enqueue_frame().
  void enqueue_band(InFlight& f, std::size_t d, bool tell_host_wrote);
  // Device `d`'s thread: enqueues whole frame `f` (on another device if `d` failed meanwhile)
  // and marks it enqueued, or failed with `f.error`.
  void feed_whole_frame(InFlight& f);
  // Devices of one context enqueue one at a time: two H200s of one context streamed a 1080p
  // frame every 0.155-0.165 ms with both enqueuing at once, and every 0.131-0.138 ms one after
  // the other (their driver's calls on one context contend). Not a device that runs its
  // kernels in the enqueue (PoCL's basic): that is its work, not the driver's.
  std::unique_lock<std::mutex> context_lock(std::size_t d);
  // Unmaps what `f` mapped; without `held` (exclusive()), under each device's lock.
  void unmap(InFlight& f, bool held);
  // Waits for what `f` enqueued, then unmaps it: before a failure leaves it, or a redo reuses
  // its buffers.
  void drain(InFlight& f, bool held);
  void wait_frame(InFlight& f);
  void finish_frame(InFlight& f);
  void run_now(InFlight& f);
  void complete_oldest(std::unique_lock<std::mutex>& lock);
  void complete_all(std::unique_lock<std::mutex>& lock);
  void record(std::uint64_t ticket, const std::vector<double>& fractions,
              const std::vector<DeviceTimes>& times);
  void learn(const std::vector<DeviceTimes>& times, bool overlapped, double wall_ms);
  void learn_whole_frame(const InFlight& f);
  // Adds the schedulers' `lines` to the report, after the frames recorded so far.
  void note(const std::vector<std::string>& lines);
  void run_chunks(std::uint64_t ticket, const Frame& input, Frame& output, int chunk_rows,
                  const detail::StageArgs& args, std::vector<DeviceTimes>& times,
                  std::vector<double>& fractions, bool collect_stats, bool smooth);
  void fail_device(const DeviceFailure& f);
  void load_split(int width, int height);
  void save_split() const;
};

std::vector<int> Pipeline::Impl::held(const InFlight* except) const {
  return detail::held(in_flight, devices.size(), except);
}

std::size_t Pipeline::Impl::pick_device(std::unique_lock<std::mutex>& lock) {
  for (;;) {
    if (auto d = frame_scheduler->pick(held(), now_ms())) {
      note(frame_scheduler->take_decisions());
      return *d;
    }
    complete_oldest(lock);
  }
}

std::size_t Pipeline::Impl::pick_device_again(const InFlight& f) const {
  // Each device has a workspace for every frame that may be on the devices, and one more.
  const std::vector<int> h = held(&f);
  std::size_t best = kEveryDevice;
  for (std::size_t d = 0; d < devices.size(); ++d) {
    if (!failed[d] && (best == kEveryDevice || h[d] < h[best])) best = d;
  }
  return best;  // fail_device() threw when none was left
}

void Pipeline::Impl::give_whole_frame(InFlight& f, std::size_t d) {
  f.device = d;
  // The lowest workspace none of the device's frames holds: the fewest buffers in turn, so that
  // one frame at a time reuses the same ones as in bands (1080p saturation on the H100 took 5%
  // longer a frame cycling through four).
  std::vector<bool> held_slot(static_cast<std::size_t>(capacity()) + 1, false);
  for (const InFlight& g : in_flight) {
    if (&g != &f && (g.device == d || g.device == kEveryDevice)) held_slot[g.slot] = true;
  }
  f.slot = static_cast<int>(std::find(held_slot.begin(), held_slot.end(), false) -
                            held_slot.begin());
  f.fractions.assign(devices.size(), 0.0);
  f.fractions[d] = 1;
}

void Pipeline::Impl::compile(const detail::FrameFormats& frames) {
  lowered = detail::lower(graph, frames, options.fuse, options.planes);
  // Every point-wise stage's arguments fit a kernel's (stage_args() throws otherwise): refused
  // here, before a frame takes its place on the devices, not as one is enqueued.
  detail::stage_args(lowered);
  formats = frames;
  timed = false;
  for (const Pass& p : lowered.passes) {
    for (const Filter* f : p.filters) timed = timed || f->needs_frame_time();
  }
  compiled = true;
  executor->replanned();
}

Pipeline::Impl::Exclusive Pipeline::Impl::exclusive() {
  Exclusive held{std::unique_lock(gate), {}};
  for (std::size_t d = 0; d < devices.size(); ++d) held.devices.emplace_back(device_mutex[d]);
  return held;
}

detail::StageArgs Pipeline::Impl::frame_args(const FrameTime& time) {
  if (timed) {
    for (Pass& p : passes) {
      for (Filter* f : p.filters) {
        if (f->needs_frame_time()) f->set_frame_time(time);
      }
    }
  }
  return detail::stage_args(lowered);
}

void Pipeline::Impl::bind_frames(const Frame& input, const Frame& output, std::size_t only) {
  for (std::size_t d = 0; d < devices.size(); ++d) {
    if ((only != kEveryDevice && d != only) || !devices[d].info().host_unified_memory) continue;
    executor->frame_buffer(input, devices[d], CL_MEM_READ_ONLY);
    executor->frame_buffer(output, devices[d], CL_MEM_READ_WRITE);
  }
}

void Pipeline::Impl::enqueue_frame(InFlight& f, bool held) {
  const std::size_t n = devices.size();
  f.bounds = band_boundaries(f.output->height(), f.fractions, band_quantum());
  f.events.assign(n, {});
  f.enqueue_began.assign(n, {});
  f.after.assign(n, {});
  f.stats_rows.assign(n, {});

  // GPUs first: they have the longest way from enqueue to running. Devices that compute while
  // being enqueued go last, or the others would wait for them (quirks.hpp).
  std::vector<std::size_t> order;
  for (std::size_t d = 0; d < n; ++d) {
    if (f.bounds[d + 1] > f.bounds[d]) order.push_back(d);
  }
  auto rank = [&](std::size_t d) {
    const DeviceInfo& info = devices[d].info();
    return info.type == DeviceType::gpu ? 0 : detail::runs_kernels_at_enqueue(info) ? 2 : 1;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rank(a) < rank(b); });
  // The host wrote the input frame: each context that shares its memory is told once.
  std::vector<bool> tell(n, false);
  std::set<int> told;
  for (std::size_t d : order) {
    tell[d] = devices[d].info().host_unified_memory && told.insert(devices[d].context_index()).second;
  }

  std::vector<std::exception_ptr> errors(n);
  auto band = [&](std::size_t d) {
    try {
      std::unique_lock<std::mutex> lock;
      if (!held) lock = std::unique_lock(device_mutex[d]);
      const std::unique_lock<std::mutex> in_context = context_lock(d);
      enqueue_band(f, d, tell[d]);
    } catch (...) {
      errors[d] = std::current_exception();
    }
  };
  if (held || order.size() < 2) {
    for (std::size_t d : order) {
      band(d);
      if (errors[d]) break;
    }
  } else {
    // Every band at once: the others on their devices' threads, the first (a GPU's) here.
    // Devices that compute while being enqueued start once the others have enqueued: posted
    // together, PoCL's basic device often began first, and its context's pthread device then
    // started 3-4 ms late, about its whole band (two one-core devices, 1280x720: a quarter of
    // the frames; the split policy took that for a fixed cost and left the basic device alone).
    bind_frames(*f.input, *f.output);
    std::mutex done_mutex;
    std::condition_variable done;
    std::size_t others = 0;
    // Devices [from, to) of `order` on their threads; `here`, if not null, on this one.
    auto run = [&](auto from, auto to, const std::size_t* here) {
      {
        std::lock_guard lock(done_mutex);
        others = static_cast<std::size_t>(to - from);
      }
      for (auto it = from; it != to; ++it) {
        feeders.post(*it, [&, d = *it] {
          band(d);
          std::lock_guard lock(done_mutex);  // held while notifying: this frame outlives it
          if (--others == 0) done.notify_one();
        });
      }
      if (here) band(*here);
      std::unique_lock lock(done_mutex);
      done.wait(lock, [&] { return others == 0; });
    };
    // (Where the first computes at enqueue too, every device does: all start at once.)
    const auto computing = detail::runs_kernels_at_enqueue(devices[order.front()].info())
                               ? order.end()
                               : std::find_if(order.begin() + 1, order.end(), [&](std::size_t d) {
                                   return detail::runs_kernels_at_enqueue(devices[d].info());
                                 });
    run(order.begin() + 1, computing, &order.front());
    if (computing != order.end()) run(computing, order.end(), nullptr);
  }
  // A program that does not build fails on every device alike: no failover.
  std::exception_ptr first;
  for (std::size_t d : order) {
    if (!errors[d]) continue;
    if (!first || is_device_failure(first)) first = errors[d];
  }
  if (first) {
    drain(f, held);
    std::rethrow_exception(first);
  }
}

std::unique_lock<std::mutex> Pipeline::Impl::context_lock(std::size_t d) {
  if (detail::runs_kernels_at_enqueue(devices[d].info())) return {};
  return std::unique_lock(context_mutex[devices[d].context_index()]);
}

void Pipeline::Impl::enqueue_band(InFlight& f, std::size_t d, bool tell_host_wrote) {
  Device& device = devices[d];
  const Range band{f.bounds[d], f.bounds[d + 1]};
  f.enqueue_began[d] = std::chrono::steady_clock::now();
  try {
    if (tell_host_wrote) executor->host_wrote(device, *f.input);
    executor->enqueue(d, f.slot, *f.input, *f.output, band, f.events[d], f.after[d],
                      f.stats_rows[d], f.collect_stats, f.stage_args);
    device.upload_queue().flush();
    device.queue().flush();
    device.download_queue().flush();
  } catch (const Error& e) {
    if (e.status() == CL_BUILD_PROGRAM_FAILURE) throw;
    throw DeviceFailure{d, e};
  } catch (const cl::Error& e) {
    throw failure(d, e, "enqueuing its band");
  }
}

void Pipeline::Impl::feed_whole_frame(InFlight& f) {
  std::shared_lock shared(gate);
  std::unique_lock lock(mutex);
  // Its statistics and time go to the filters, which the devices share, and its arguments are
  // taken from them: each device's thread then enqueues its frames beside the others'.
  if (f.collect_stats) stats.apply_for(passes, f.ticket);
  f.stage_args = frame_args(f.time);
  for (;;) {
    // Its device may have failed since the frame was given to it.
    if (failed[f.device]) {
      give_whole_frame(f, pick_device_again(f));
      bind_frames(*f.input, *f.output, f.device);
    }
    lock.unlock();
    std::optional<DeviceFailure> failed_on;
    try {
      enqueue_frame(f, false);
    } catch (const DeviceFailure& e) {
      failed_on = e;
    } catch (...) {
      f.error = std::current_exception();
    }
    lock.lock();
    if (!failed_on) break;
    try {
      fail_device(*failed_on);  // throws when no device is left
    } catch (...) {
      f.error = std::current_exception();
      break;
    }
  }
  f.enqueued = true;
  completed.notify_all();
}

void Pipeline::Impl::drain(InFlight& f, bool held) {
  f.wait_all();
  unmap(f, held);
}

void Pipeline::Impl::unmap(InFlight& f, bool held) {
  for (std::size_t d = 0; d < f.after.size(); ++d) {
    if (f.after[d].empty()) continue;
    std::unique_lock<std::mutex> lock;
    if (!held) lock = std::unique_lock(device_mutex[d]);
    f.run_after(d);
  }
}

void Pipeline::Impl::wait_frame(InFlight& f) {
  for (std::size_t d = 0; d < f.events.size(); ++d) {
    try {
      f.events[d].wait();
    } catch (const cl::Error& e) {
      const DeviceFailure failed = failure(d, e, "running its band");
      f.wait_all();  // its unmaps wait for the failover, which holds every device's lock
      throw failed;
    }
  }
}

void Pipeline::Impl::finish_frame(InFlight& f) {
  unmap(f, true);  // its callers hold every device's lock, or unmapped it already
  if (f.collect_stats) stats.combine(f.stats_sums, f.smooth, f.ticket);
  if (f.prepass) return;
  record(f.ticket, f.fractions, f.times);
  if (f.device == kEveryDevice) {
    learn(f.times, f.overlapped, f.wall_ms);
  } else {
    learn_whole_frame(f);
  }
}

void Pipeline::Impl::run_now(InFlight& f) {
  f.device = kEveryDevice;  // in bands, whatever it was given before
  f.error = nullptr;
  for (;;) {
    f.fractions = policy->fractions();
    try {
      enqueue_frame(f, true);
      wait_frame(f);
      break;
    } catch (const DeviceFailure& failed) {
      drain(f, true);  // its callers hold every device's lock
      fail_device(failed);
    }
  }
  f.measure();
  finish_frame(f);
}

void Pipeline::Impl::complete_oldest(std::unique_lock<std::mutex>& lock) {
  InFlight& f = in_flight.front();
  if (f.waited || !f.enqueued) {
    completed.wait(lock);  // another thread completes it, or is still enqueuing it
    return;
  }
  if (f.error) {
    // Its device's thread could not enqueue it anywhere (and waited for what it had started).
    const std::exception_ptr error = f.error;
    in_flight.pop_front();
    if (in_flight.empty()) report.wall_ms += elapsed_ms(busy_since);
    completed.notify_all();
    std::rethrow_exception(error);
  }
  f.waited = true;
  std::optional<DeviceFailure> failed;
  std::exception_ptr unmeasured;  // thrown again below, with the mutex held
  std::chrono::steady_clock::time_point done;
  lock.unlock();
  try {
    wait_frame(f);
    done = std::chrono::steady_clock::now();
    try {
      f.measure();
    } catch (...) {
      unmeasured = std::current_exception();
    }
  } catch (const DeviceFailure& e) {
    failed = e;
  }
  // Its unmaps, under their devices' locks; a redo of the frames on the devices, with nothing
  // enqueued beside it.
  std::optional<Exclusive> held;
  if (failed || unmeasured) {
    held = exclusive();
  } else {
    unmap(f, false);  // its events completed above
  }
  lock.lock();
  try {
    if (unmeasured) std::rethrow_exception(unmeasured);
    if (failed) {
      // Whatever is still on the devices ends first; then the device leaves the split and the
      // frames on the devices are redone by the others, in order. A frame submit() has not
      // enqueued yet stays: it will be, with the split that is left.
      auto on_devices = [](const InFlight& g) { return g.enqueued; };
      for (InFlight& g : in_flight) {
        if (on_devices(g)) drain(g, true);
      }
      fail_device(*failed);  // a frame given to it and not enqueued yet goes to another
      for (InFlight& g : in_flight) {
        if (on_devices(g)) run_now(g);
      }
      while (!in_flight.empty() && on_devices(in_flight.front())) in_flight.pop_front();
    } else {
      // What the frame added to the host's wait: since the later of its submission and the
      // completion before it.
      f.wall_ms = std::chrono::duration<double, std::milli>(done - std::max(f.submitted, last_done))
                      .count();
      last_done = done;
      finish_frame(f);
      if (f.device != kEveryDevice && !f.prepass) {
        frame_scheduler->left(std::chrono::duration<double, std::milli>(done - born).count(),
                              f.events[f.device].new_plan);
        note(frame_scheduler->take_decisions());
      }
      in_flight.pop_front();
    }
  } catch (...) {
    if (!held) {
      lock.unlock();
      held = exclusive();
      lock.lock();
    }
    for (InFlight& g : in_flight) {
      if (g.enqueued) drain(g, true);
    }
    while (!in_flight.empty() && in_flight.front().enqueued) in_flight.pop_front();
    if (in_flight.empty()) report.wall_ms += elapsed_ms(busy_since);
    completed.notify_all();
    throw;
  }
  if (in_flight.empty()) report.wall_ms += elapsed_ms(busy_since);
  completed.notify_all();
}

void Pipeline::Impl::complete_all(std::unique_lock<std::mutex>& lock) {
  while (!in_flight.empty()) complete_oldest(lock);
}

void Pipeline::Impl::record(std::uint64_t ticket, const std::vector<double>& fractions,
                            const std::vector<DeviceTimes>& times) {
  for (std::size_t d = 0; d < times.size(); ++d) {
    DeviceReport& r = report.devices[d];
    share_sum[d] += fractions[d];
    r.busy_ms += times[d].total();
    r.upload_ms += times[d].upload;
    r.kernel_ms += times[d].compute;
    r.download_ms += times[d].download;
  }
  ++report.frames;
  // The rows each device ran, which bands starting on row groups round from the fractions.
  std::vector<double> ran = fractions;
  double rows = 0;
  for (const DeviceTimes& t : times) rows += t.rows;
  for (std::size_t d = 0; d < times.size() && rows > 0; ++d) ran[d] = times[d].rows / rows;
  report.split_trace.push_back(ran);
  recent_splits.emplace_back(ticket, std::move(ran));
  if (recent_splits.size() > kRecentSplits) recent_splits.pop_front();
  for (std::size_t d = 0; d < times.size(); ++d) {
    report.devices[d].share = share_sum[d] / report.frames;
  }
}

void Pipeline::Impl::learn(const std::vector<DeviceTimes>& times, bool overlapped, double wall_ms) {
  if (!policy) return;
  std::vector<BandTiming> timings = band_timings(times, overlapped);
  for (std::size_t d = 0; d < times.size(); ++d) {
    timings[d].ok = !failed[d];
    if (timings[d].fixed_ms >= 0) {
      report.devices[d].fixed_ms += timings[d].fixed_ms;
      ++report.devices[d].fixed_bands;
    }
    if (times[d].rows > 0) {
      band_ms_per_row[d] = times[d].total() / times[d].rows;
      band_interval_per_row[d] = times[d].cost(true) / times[d].rows;
    }
  }
  policy->observe(timings, wall_ms);
  report.learned_split = policy->state();
  note(policy->take_decisions());
  ++frames_learned;
}

void Pipeline::Impl::learn_whole_frame(const InFlight& f) {
  const std::size_t d = f.device;
  // On the device's own clock: what the frame added to the device's time, the frames before it
  // on the same device included when they had not ended as it was queued.
  if (f.last_end_ns == 0) return;  // no commands to time
  const cl_ulong from = std::max(f.first_queued_ns, last_end_ns[d]);
  last_end_ns[d] = f.last_end_ns;
  const double interval = f.last_end_ns > from ? ns_to_ms(f.last_end_ns - from) : 0.0;
  frame_scheduler->observe(d, {interval, f.times[d].total()}, f.events[d].new_plan);
}

void Pipeline::Impl::note(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) {
    report.decisions.push_back("frame " + std::to_string(report.frames) + ": " + line);
  }
}

void Pipeline::Impl::fail_device(const DeviceFailure& f) {
  // Take the device out of the split; the caller redoes its rows on the others. Never silently.
  // (Frames enqueued on their devices' threads may find it failed already.)
  if (failed[f.device]) return;
  const auto& info = devices[f.device].info();
  const std::string line = "device " + info.id + " (" + info.name +
                           ") failed and left the split: " + f.error.what();
  report.fallbacks.push_back(line);
  report.devices[f.device].failed = true;
  failed[f.device] = true;
  try {
    devices[f.device].queue().finish();
  } catch (const cl::Error&) {
    // The queue may be unusable after the failure; it takes no more work either way.
  }
  if (std::count(failed.begin(), failed.end(), false) == 0) {
    // Nothing is left to fall back on: the run fails with the device's own error.
    throw Error(devices.size() > 1 ? "every device failed; the last: " : "", f.error);
  }
  std::cerr << "tandem: " << line << "\n";
  if (policy) policy->remove(f.device);
  frame_scheduler->remove(f.device);
}

void Pipeline::Impl::run_chunks(std::uint64_t ticket, const Frame& input, Frame& output,
                                int chunk_rows, const detail::StageArgs& args,
                                std::vector<DeviceTimes>& times, std::vector<double>& fractions,
                                bool collect_stats, bool smooth) {
  detail::FrameSums sums;
  const detail::ChunkRun run{devices, *executor, args, failed,
                             [this](const DeviceFailure& f) { fail_device(f); }};
  const int q = band_quantum();
  detail::run_chunks(run, input, output, (chunk_rows + q - 1) / q * q, collect_stats, times, sums);
  fractions.assign(times.size(), 0.0);
  for (std::size_t d = 0; d < times.size(); ++d) {
    fractions[d] = static_cast<double>(times[d].rows) / output.height();
  }
  if (collect_stats) stats.combine(sums, smooth, ticket);
}

void Pipeline::Impl::load_split(int width, int height) {
  if (!options.persist_split) return;
  const std::string key = detail::SplitStore::key(devices.key(), graph.to_string(), width, height,
                                                  std::string(to_string(formats.input)));
  if (whole_frames != WholeFrames::never) {
    frames_key = key + "-frames";
    last_frame_ms = split_store.load(frames_key, devices.size());
  }
  if (bands_spec != "adaptive") return;
  split_key = key;
  const std::vector<double> fractions = split_store.load(split_key, devices.size());
  if (fractions.empty()) return;
  try {
    policy = make_adaptive_policy(devices.size(), fractions);
  } catch (const Error&) {
    // A damaged file only costs the learning again.
  }
}

void Pipeline::Impl::save_split() const {
  if (!split_key.empty() && frames_learned >= 3) split_store.save(split_key, policy->state());
  if (!frames_key.empty() && frames_mode) {
    std::vector<double> ms;
    for (double rate : frame_scheduler->rates()) ms.push_back(rate > 0 ? 1 / rate : 0.0);
    if (std::any_of(ms.begin(), ms.end(), [](double x) { return x > 0; })) {
      split_store.save(frames_key, ms);
    }
  }
}

Pipeline::Pipeline(DeviceSet& devices, Graph graph, PipelineOptions options)
    : impl_(std::make_unique<Impl>(devices, std::move(graph), std::move(options))) {
  if (devices.size() == 0) throw Error("a pipeline needs at least one device");
}

Pipeline::~Pipeline() {
  Impl& m = *impl_;
  {
    // Whole frames still on their devices' threads are enqueued first.
    std::unique_lock lock(m.mutex);
    m.completed.wait(lock, [&] {
      return std::all_of(m.in_flight.begin(), m.in_flight.end(),
                         [](const InFlight& f) { return f.enqueued; });
    });
  }
  for (InFlight& f : m.in_flight) m.drain(f, true);  // no other thread is left
  try {
    impl_->save_split();
  } catch (...) {
    // Forgetting a learned ratio is harmless; a destructor must not throw.
  }
}

PixelFormat Pipeline::output_format(PixelFormat input) const {
  return detail::default_output_format(impl_->graph, input);
}

Size Pipeline::output_size(Size input) const {
  return impl_->graph.output_size(input);
}

Frame Pipeline::make_frame(int width, int height, PixelFormat format) const {
  return impl_->devices.make_frame(width, height, format);
}

void Pipeline::process(const Frame& input, Frame& output) { wait(submit(input, output)); }

std::uint64_t Pipeline::submit(const Frame& input, Frame& output) {
  std::int64_t index = 0;
  {
    std::lock_guard lock(impl_->mutex);
    index = impl_->untimed_frames++;
  }
  return submit(input, output, {index, static_cast<double>(index) / 25});
}

std::uint64_t Pipeline::submit(const Frame& input, Frame& output, const FrameTime& time) {
  Impl& m = *impl_;
  std::unique_lock lock(m.mutex);
  if (input.empty()) throw Error("the input frame is empty");
  // The output keeps its format where the graph can give it (planes or the working format),
  // and is made anew in the default one otherwise.
  const PixelFormat working = working_format(input.format());
  const PixelFormat graph_out = m.compiled && working_format(m.formats.input) == working
                                    ? working_format(m.formats.output)
                                    : m.graph.validate(working);
  const Size in_size{input.width(), input.height()};
  if (!(m.sized_for == in_size)) {
    m.output_size = m.graph.output_size(in_size);  // throws for sizes the graph cannot take
    m.sized_for = in_size;
  }
  const Size out_size = m.output_size;
  const bool output_fits = !output.empty() && output.width() == out_size.width &&
                           output.height() == out_size.height &&
                           working_format(output.format()) == graph_out;
  if (!output_fits) {
    output = make_frame(out_size.width, out_size.height,
                        detail::default_output_format(m.graph, input.format()));
  }
  if (is_planar(input.format()) && is_planar(output.format())) {
    output.set_yuv_encoding(input.yuv_encoding());
  }
  const detail::FrameFormats frames{input.format(), output.format(), input.yuv_encoding(),
                                    output.yuv_encoding()};
  if (!m.compiled || !(m.formats == frames)) {
    m.complete_all(lock);  // frames on the devices use the passes compiled now
    m.compile(frames);
  }
  const PixelFormat out_format = output.format();
  const std::uint64_t ticket = ++m.last_ticket;
  // Bands start on row groups: those of each frame must start on the devices' alignment.
  const std::size_t align = m.devices.row_alignment();
  if (input.pitch() * rows_per_group(input.format()) % align ||
      output.pitch() * rows_per_group(output.format()) % align) {
    // Rows of these frames cannot start sub-buffers on every device: go through aligned copies.
    m.complete_all(lock);
    lock.unlock();
    Frame in = make_frame(input.width(), input.height(), input.format());  // pinned if it helps
    copy_pixels(input, in);
    Frame out = make_frame(out_size.width, out_size.height, out_format);
    out.set_yuv_encoding(output.yuv_encoding());
    wait(submit(in, out, time));
    copy_pixels(out, output);
    return ticket;
  }
  if (!m.split_loaded) {
    m.load_split(input.width(), input.height());
    m.split_loaded = true;
  }

  // Filters that need frame statistics get them before their first frame from a pre-pass (one
  // per level of such filters), and afterwards from the frames before, smoothed.
  std::size_t stats_passes = 0;
  for (const Pass& p : m.passes) stats_passes += p.stats_stage >= 0;
  const bool prepass = stats_passes > 0 && m.stats.empty();
  if (prepass || m.chunk_rows > 0) {
    // Run now, with nothing else on the devices. No frame can join them meanwhile (one thread
    // submits), so the devices' locks, taken in their order, find none either.
    m.complete_all(lock);
    lock.unlock();
    const Impl::Exclusive held = m.exclusive();
    lock.lock();
    const auto start = std::chrono::steady_clock::now();
    const std::size_t runs = prepass ? stats_passes + 1 : 1;
    for (std::size_t run = 0; run < runs; ++run) {
      if (prepass) {
        m.stats.apply(m.passes);
      } else {
        m.stats.apply_for(m.passes, ticket);
      }
      detail::StageArgs args = m.frame_args(time);
      if (m.chunk_rows > 0) {
        std::vector<DeviceTimes> times;
        std::vector<double> fractions;
        m.run_chunks(ticket, input, output, m.chunk_rows, args, times, fractions,
                     stats_passes > 0, !prepass);
        if (run + 1 == runs) m.record(ticket, fractions, times);
        continue;
      }
      InFlight f;
      f.ticket = ticket;
      f.input = &input;
      f.output = &output;
      f.collect_stats = stats_passes > 0;
      f.smooth = !prepass;
      f.prepass = run + 1 < runs;
      f.stage_args = std::move(args);
      m.run_now(f);
    }
    m.report.wall_ms += elapsed_ms(start);
    return ticket;
  }

  using WholeFrames = Impl::WholeFrames;
  if (!m.frames_mode && (m.whole_frames == WholeFrames::always ||
                         (m.whole_frames == WholeFrames::streams && !m.in_flight.empty()))) {
    m.complete_all(lock);  // frames in bands hold a workspace on every device
    m.frames_mode = true;
    m.report.scheduler = "frames";
    std::vector<std::string> lines{
        m.whole_frames == WholeFrames::always
            ? "whole frames per device (split frames)"
            : "whole frames per device from here on: a frame came while another was on the "
              "devices"};
    // What each device's frames took in the last run of this graph and size, or else what its
    // bands took (high, the band's fixed costs spread over fewer rows), predicts its whole
    // frames: a device far slower than the others takes no probe frame. From a band, a frame
    // follows every `interval` (its copies and kernels overlapping those of the frames beside
    // it: a discrete GPU's pace is about half its band's time) and takes `latency` alone.
    for (std::size_t d = 0; d < m.devices.size(); ++d) {
      const double last = d < m.last_frame_ms.size() ? m.last_frame_ms[d] : 0.0;
      const bool remembered = std::isfinite(last) && last > 0;
      const double latency = remembered ? last : m.band_ms_per_row[d] * out_size.height;
      const double interval = remembered ? last : m.band_interval_per_row[d] * out_size.height;
      if (interval <= 0) continue;
      m.frame_scheduler->seed(d, {interval, latency});
      char line[128];
      std::snprintf(line, sizeof line,
                    "device %zu predicted at a frame every %.3g ms (%.3g ms each) from %s", d,
                    interval, latency, remembered ? "the last run" : "its band");
      lines.push_back(line);
    }
    m.note(lines);
  }
  const int depth = m.options.frames_on_devices;
  std::size_t device = kEveryDevice;
  if (m.frames_mode) {
    device = m.pick_device(lock);
  } else {
    while (m.in_flight.size() >= static_cast<std::size_t>(depth)) m.complete_oldest(lock);
  }
  const auto start = std::chrono::steady_clock::now();
  // The frame takes its place in line now and is enqueued without the mutex: a thread waiting
  // for the frames before completes them meanwhile (and waits for this one until it is on the
  // devices). References into the deque stay valid: frames leave it only at its front, and
  // this one is behind every frame that can leave before it is enqueued.
  const bool overlapped = !m.in_flight.empty();
  if (!overlapped) m.busy_since = start;
  InFlight& f = m.in_flight.emplace_back();
  if (device != kEveryDevice) {
    m.give_whole_frame(f, device);
  } else {
    // The frames on the devices hold the slots just before the newest's: the next one is free.
    f.slot = overlapped ? (m.in_flight[m.in_flight.size() - 2].slot + 1) % depth : 0;
  }
  f.ticket = ticket;
  f.input = &input;
  f.output = &output;
  f.time = time;
  f.collect_stats = stats_passes > 0;
  f.overlapped = overlapped;
  f.submitted = start;

  if (device != kEveryDevice) {
    // Its device's thread enqueues it, after the frames given to that device before; this
    // thread goes on to the next frame. A failure is thrown by whoever completes the frame.
    lock.unlock();
    m.bind_frames(input, output, device);
    if (m.devices.size() == 1) {
      m.feed_whole_frame(f);  // no thread to hand it to
    } else {
      m.feeders.post(device, [&m, &f] { m.feed_whole_frame(f); });
    }
    return ticket;
  }

  // Every frame before ticket - capacity() has completed: the statistics it runs with do not
  // depend on timing.
  m.stats.apply_for(m.passes, ticket);
  f.stage_args = m.frame_args(time);
  lock.unlock();
  {
    std::shared_lock shared(m.gate);
    try {
      for (;;) {
        lock.lock();
        f.fractions = m.policy->fractions();
        lock.unlock();
        try {
          m.enqueue_frame(f, false);
          break;
        } catch (const DeviceFailure& failed) {
          lock.lock();
          m.fail_device(failed);  // throws when no device is left
          lock.unlock();
        }
      }
    } catch (...) {
      if (!lock.owns_lock()) lock.lock();
      m.in_flight.pop_back();  // this frame: still the newest
      if (m.in_flight.empty()) m.report.wall_ms += elapsed_ms(m.busy_since);
      m.completed.notify_all();
      throw;
    }
    lock.lock();
    f.enqueued = true;
  }
  m.completed.notify_all();
  return ticket;
}

void Pipeline::wait(std::uint64_t ticket) {
  Impl& m = *impl_;
  std::unique_lock lock(m.mutex);
  while (!m.in_flight.empty() && m.in_flight.front().ticket <= ticket) m.complete_oldest(lock);
}

int Pipeline::capacity() const {
  return impl_->capacity();
}

std::int64_t Pipeline::warm_up_frames() const {
  for (const GraphNode& node : impl_->graph.nodes()) {
    if (node.spec->make(node.params)->needs_frame_stats()) {
      return detail::FrameStatistics::frames_to_forget(1e-4) + capacity();
    }
  }
  return 0;
}

const RunReport& Pipeline::report() const { return impl_->report; }

std::vector<double> Pipeline::split_of(std::uint64_t ticket) const {
  std::lock_guard lock(impl_->mutex);
  for (const auto& [t, fractions] : impl_->recent_splits) {
    if (t == ticket) return fractions;
  }
  return {};
}
std::vector<std::string> Pipeline::passes() const {
  std::lock_guard lock(impl_->mutex);
  std::vector<std::string> out;
  for (const Pass& p : impl_->passes) {
    std::string line = p.nodes.empty() ? "convert:" : p.pointwise ? "point-wise:" : "stencil:";
    const auto& nodes = impl_->graph.nodes();
    for (int n : p.nodes) line += " " + nodes[n].spec->name;
    const PixelFormat in = p.input_formats.empty() ? p.format : p.input_formats.front();
    if (p.on_planes) {
      line += " (on " + std::string(to_string(p.format)) + " planes)";
    } else if (p.nodes.empty() || is_planar(in) || is_planar(p.format)) {
      line += std::string(p.nodes.empty() ? " " : " (") + std::string(to_string(in)) + " -> " +
              std::string(to_string(p.format)) + (p.nodes.empty() ? "" : ")");
    }
    out.push_back(std::move(line));
  }
  return out;
}

bool Pipeline::on_planes() const {
  std::lock_guard lock(impl_->mutex);
  return std::any_of(impl_->passes.begin(), impl_->passes.end(),
                     [](const Pass& p) { return p.on_planes; });
}

const Graph& Pipeline::graph() const { return impl_->graph; }
DeviceSet& Pipeline::devices() { return impl_->devices; }

}  // namespace tandem
