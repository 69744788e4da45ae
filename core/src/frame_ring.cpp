// The frames on the devices (frame_ring.hpp): what their events measured.
#include "frame_ring.hpp"

#include <algorithm>
#include <limits>
#include <tuple>

namespace tandem::detail {
namespace {

// When the first of a device's commands for a frame was queued and when its last ended, on the
// device's clock; zeros when it has none. Its first command is the upload (or its first kernel
// where memory is shared); its last ends the download queue, or the kernel queue where the
// mapping is on it. (Two queries: at a fifth of a millisecond a frame, each costs the host
// time.)
std::pair<cl_ulong, cl_ulong> first_and_last(const BandEvents& e) {
  const auto* first = !e.upload.empty() ? &e.upload : !e.compute.empty() ? &e.compute : nullptr;
  const auto* last = !e.download.empty() ? &e.download : !e.compute.empty() ? &e.compute : first;
  if (!first || !last) return {0, 0};
  return {first->front().getProfilingInfo<CL_PROFILING_COMMAND_QUEUED>(),
          last->back().getProfilingInfo<CL_PROFILING_COMMAND_END>()};
}

}  // namespace

std::vector<BandTiming> band_timings(const std::vector<DeviceTimes>& times, bool overlapped) {
  std::vector<BandTiming> timings(times.size());
  // The host's work before the frame's first band began its enqueue is the frame's, whichever
  // devices it is split among: no band's fixed cost. (Two H200s, 1080p: 0.15 ms of it in a
  // frame soon after the start, 0.003 later, made the second GPU look mostly fixed costs.)
  double common_lead = std::numeric_limits<double>::infinity();
  for (const DeviceTimes& t : times) {
    if (!overlapped && t.span > 0) common_lead = std::min(common_lead, t.lead);
  }
  for (std::size_t d = 0; d < times.size(); ++d) {
    const DeviceTimes& t = times[d];
    timings[d].rows = t.rows;
    timings[d].new_plan = t.new_plan;
    if (overlapped || t.span <= 0) {
      timings[d].ms = t.cost(overlapped);
      continue;
    }
    // What the host waits for the band from then on, and the part of it that its rows do not
    // scale: the busy time spread over its rows and halo rows gives the time per row.
    timings[d].ms = t.lead - common_lead + t.span;
    timings[d].fixed_ms = std::max(0.0, timings[d].ms - t.total() * t.rows / (t.rows + t.halo));
  }
  return timings;
}

double ns_to_ms(cl_ulong ns) {
  return static_cast<double>(ns) * 1e-6;
}

double busy_ms(const std::vector<cl::Event>& events) {
  double ns = 0;
  for (const auto& e : events) {
    ns += static_cast<double>(e.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                              e.getProfilingInfo<CL_PROFILING_COMMAND_START>());
  }
  return ns * 1e-6;
}

void InFlight::wait_all() const {
  for (const auto& e : events) {
    try {
      e.wait();
    } catch (const cl::Error&) {
      // Its own failure, if any, is reported when it runs again.
    }
  }
}

void InFlight::measure() {
  const std::size_t n = events.size();
  times.assign(n, {});
  for (std::size_t d = 0; d < n; ++d) {
    times[d] = {bounds[d + 1] - bounds[d], busy_ms(events[d].upload), busy_ms(events[d].compute),
                busy_ms(events[d].download)};
    times[d].new_plan = events[d].new_plan;
  }
  if (device == kEveryDevice && !overlapped) {
    for (std::size_t d = 0; d < n; ++d) {
      if (times[d].rows <= 0) continue;
      const auto [first_queued, last_end] = first_and_last(events[d]);
      if (last_end <= first_queued) continue;
      times[d].lead =
          std::chrono::duration<double, std::milli>(enqueue_began[d] - submitted).count();
      times[d].span = ns_to_ms(last_end - first_queued);
      times[d].halo = events[d].halo_rows;
    }
  }
  if (device != kEveryDevice) std::tie(first_queued_ns, last_end_ns) = first_and_last(events[device]);
  stats_sums.clear();
  if (collect_stats) {
    for (std::size_t d = 0; d < n; ++d) add_partials(stats_rows[d], stats_sums);
  }
}

std::vector<int> held(const std::deque<InFlight>& ring, std::size_t devices,
                      const InFlight* except) {
  std::vector<int> out(devices, 0);
  for (const InFlight& g : ring) {
    if (&g == except) continue;
    if (g.device == kEveryDevice) {
      for (int& h : out) ++h;
    } else {
      ++out[g.device];
    }
  }
  return out;
}

}  // namespace tandem::detail
