// Whole frames per device (frame_scheduler.hpp): earliest predicted finish, measured devices,
// budgeted measuring again of those left out.
#include "frame_scheduler.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "tandem/error.hpp"

namespace tandem::detail {
namespace {

constexpr std::size_t kWindow = 5;  // frames whose medians predict a device
// A device left out is measured again after 64 frames and 1 s, or 100 of its frames' time if
// longer, while what that has cost stays within 1% of the wall time.
constexpr int kAgainFrames = 64;
constexpr double kAgainMs = 1000;
constexpr double kBudget = 0.01;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void keep_latest(std::vector<double>& v, double x) {
  v.push_back(x);
  if (v.size() > kWindow) v.erase(v.begin());
}

}  // namespace

FrameScheduler::FrameScheduler(std::size_t devices, int depth)
    : devices_(devices), depth_(std::max(depth, 1)) {}

double FrameScheduler::finish(const Device& d, int held) const {
  return std::max(median(d.latencies), (held + 1) * median(d.intervals));
}

bool FrameScheduler::due_again(const Device& d, double now_ms) const {
  if (!d.measured() || d.skipped < kAgainFrames) return false;
  const double cost = median(d.latencies);
  return now_ms - d.last_start_ms >= std::max(kAgainMs, 100 * cost) &&
         explored_ms_ + cost <= kBudget * (now_ms - started_ms_);
}

std::optional<std::size_t> FrameScheduler::pick(std::span<const int> held, double now_ms) {
  if (started_ms_ < 0) started_ms_ = now_ms;
  std::optional<std::size_t> best;
  double best_finish = std::numeric_limits<double>::infinity();
  bool left = false;
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    const Device& dev = devices_[d];
    if (dev.removed) continue;
    left = true;
    double t = 0;
    if (!dev.measured() || due_again(dev, now_ms)) {
      if (held[d] > 0) continue;  // measured one frame at a time
    } else {
      t = finish(dev, held[d]);
    }
    if (t < best_finish) {
      best = d;
      best_finish = t;
    }
  }
  if (!left) throw Error("every device failed");
  if (!best || held[*best] >= depth_) return std::nullopt;
  Device& chosen = devices_[*best];
  if (due_again(chosen, now_ms)) {
    // Measured afresh: its load may have changed since.
    char line[96];
    std::snprintf(line, sizeof line, "measuring device %zu again (%.3g ms a frame before)", *best,
                  median(chosen.intervals));
    decisions_.push_back(line);
    explored_ms_ += median(chosen.latencies);
    chosen.intervals.clear();
    chosen.latencies.clear();
  }
  for (Device& dev : devices_) ++dev.skipped;
  chosen.skipped = 0;
  chosen.last_start_ms = now_ms;
  return best;
}

void FrameScheduler::observe(std::size_t d, const FrameTiming& timing) {
  Device& dev = devices_[d];
  // The first frame builds programs and buffers: it says nothing of the next ones.
  if (dev.observed++ == 0) return;
  keep_latest(dev.intervals, std::max(timing.interval, 1e-6));
  keep_latest(dev.latencies, std::max(timing.latency, 0.0));
}

void FrameScheduler::remove(std::size_t d) {
  devices_[d].removed = true;
}

std::vector<double> FrameScheduler::rates() const {
  std::vector<double> out;
  for (const Device& d : devices_) {
    out.push_back(d.removed || !d.measured() ? 0.0 : 1 / median(d.intervals));
  }
  return out;
}

}  // namespace tandem::detail
