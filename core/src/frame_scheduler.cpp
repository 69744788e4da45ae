// Whole frames per device (frame_scheduler.hpp): earliest predicted finish, measured devices,
// budgeted measuring again of those left out.
#include "frame_scheduler.hpp"

#include <algorithm>
#include <cmath>
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
// The guard: frames per measurement, the margin every device must win by, trials of the way
// that lost after 256 frames, doubling to 8192 while it keeps losing. A verdict (and the
// obvious case below) comes after n = kGuardFrames / 4 or / 2 frames already where the two
// ways differ by kMargin * kGuardFrames / n (12% after 8 frames, 6% after 16): a mean over n
// frames is the time between two frames' leaving divided by n, so its error shrinks as 1 / n.
constexpr std::size_t kGuardFrames = 32;
constexpr double kMargin = 0.03;
// The device alone changes only for one this much faster.
constexpr double kSwitch = 0.1;
// Every device this much faster than the best device's fastest recent frame wins without
// measuring the best alone first.
constexpr double kObvious = 0.6;
constexpr int kFirstGap = 256;
constexpr int kLastGap = 8192;
// Devices predicted to add less than a quarter to the best device's rate stay out until the
// budget allows a trial: what they cost the best device (a CPU's frames slowed an H100's copies
// from host memory by a fifth) can exceed that gain, and measuring it costs whole windows of
// slower frames. Before a trial was measured, its cost is taken as a window of the best's frames
// (the trial at half the best's rate).
constexpr double kWorthTrying = 1.25;
// A frame that made its buffers (the first in each of a device's workspaces) starts the guard's
// window afresh, this many times at most: a stream whose every frame makes them is still judged.
constexpr int kWarmUps = 32;

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
  // Its frames ahead pass its slowest stage one an interval apart, then this one takes its
  // latency: a GPU whose frames take 0.44 ms from upload to download at a frame every 0.16 ms
  // holding one frame finishes later than an idle one. (The larger of the latency and held + 1
  // intervals, which saw no difference there, gave one GPU of two three frames in a row, then
  // the other three, each draining between: two H200s 0.16 ms a frame against 0.09.)
  return median(d.latencies) + held * median(d.intervals);
}

bool FrameScheduler::due_again(const Device& d, double now_ms) const {
  if (!d.measured() || d.skipped < kAgainFrames) return false;
  const double cost = median(d.latencies);
  return now_ms - d.last_start_ms >= std::max(kAgainMs, 100 * cost) &&
         explored_ms_ + cost <= kBudget * (now_ms - started_ms_);
}

std::size_t FrameScheduler::best() const {
  std::size_t b = devices_.size();
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    const Device& dev = devices_[d];
    if (dev.removed || !dev.measured()) continue;
    if (b == devices_.size() || median(dev.intervals) < median(devices_[b].intervals)) b = d;
  }
  return b;
}

std::size_t FrameScheduler::alone() {
  const std::size_t b = best();
  if (b == devices_.size()) return b;
  const Device& kept = devices_[alone_];
  if (!has_alone_ || kept.removed || !kept.measured() ||
      median(devices_[b].intervals) < (1 - kSwitch) * median(kept.intervals)) {
    alone_ = b;
    has_alone_ = true;
  }
  return alone_;
}

void FrameScheduler::go(Way way, std::string why) {
  way_ = way;
  settle_ = depth_ * static_cast<int>(devices_.size());
  window_.clear();
  decisions_.push_back(std::move(why));
}

void FrameScheduler::predict() {
  for (const Device& d : devices_) {
    if (!d.removed && !d.measured()) return;
  }
  predicted_ = true;
  const std::size_t b = alone();
  if (b == devices_.size()) return;
  // pick() gives a device a frame only while it would finish before the best device's frames in
  // flight: one that cannot adds nothing.
  const double alone = median(devices_[b].intervals);
  const double full = finish(devices_[b], depth_);
  double rate = 0;
  for (const Device& d : devices_) {
    if (d.removed) continue;
    if (&d == &devices_[b] || median(d.latencies) < full)
      rate += 1 / median(d.intervals);
  }
  const double every = 1 / rate;
  if (every * kWorthTrying > alone) {
    judged_ = true;
    since_judged_ = 0;
    last_loss_ms_ = alone * kGuardFrames;
    char line[160];
    std::snprintf(line, sizeof line,
                  "whole frames: every device predicted %.3g ms a frame, the best (device %zu) "
                  "%.3g: the best alone until the budget allows a trial",
                  every, b, alone);
    go(Way::best, line);
  }
}

std::optional<std::size_t> FrameScheduler::pick(std::span<const int> held, double now_ms) {
  if (started_ms_ < 0) started_ms_ = now_ms;
  if (!predicted_) predict();
  std::optional<std::size_t> best;
  double best_finish = std::numeric_limits<double>::infinity();
  bool left = false;
  // The best device alone: the others take only the frames that measure them again.
  const std::size_t alone = way_ == Way::best ? this->alone() : devices_.size();
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    const Device& dev = devices_[d];
    if (dev.removed) continue;
    left = true;
    if (alone < devices_.size() && d != alone && !due_again(dev, now_ms)) continue;
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
    // Its frame is neither way's: the guard measures again after it.
    window_.clear();
    settle_ = depth_ * static_cast<int>(devices_.size());
  }
  for (Device& dev : devices_) ++dev.skipped;
  chosen.skipped = 0;
  chosen.last_start_ms = now_ms;
  return best;
}

void FrameScheduler::seed(std::size_t d, const FrameTiming& timing) {
  Device& dev = devices_[d];
  if (dev.measured() || timing.interval <= 0) return;
  dev.intervals = {timing.interval};
  dev.latencies = {std::max(timing.latency, 0.0)};
}

void FrameScheduler::observe(std::size_t d, const FrameTiming& timing, bool warm_up) {
  Device& dev = devices_[d];
  // The first frame builds programs and buffers, and so does each frame that made its own: they
  // say nothing of the next ones (after kWarmUps of them, a device's frames count all the same).
  const bool first = dev.observed++ == 0;
  if (first || (warm_up && dev.warm_ups++ < kWarmUps)) return;
  keep_latest(dev.intervals, std::max(timing.interval, 1e-6));
  keep_latest(dev.latencies, std::max(timing.latency, 0.0));
}

void FrameScheduler::left(double now_ms, bool warm_up) {
  ++since_judged_;
  if (settle_ > 0) {
    --settle_;  // a frame of the way before
    return;
  }
  if (warm_up && warm_ups_ < kWarmUps) {
    // Its time says nothing of either way, and the frames behind it left late.
    ++warm_ups_;
    window_.clear();
    return;
  }
  // The frames of devices not measured yet (their first ones) say nothing of either way.
  int live = 0;
  for (const Device& d : devices_) {
    if (d.removed) continue;
    if (!d.measured()) return;
    ++live;
  }
  if (live < 2) return;
  window_.push_back(now_ms);
  if (window_.size() > kGuardFrames + 1) window_.erase(window_.begin());
  const std::size_t n = window_.size() - 1;
  const bool full = n == kGuardFrames;
  if (!full && n != kGuardFrames / 4 && n != kGuardFrames / 2) return;
  const double mean = (window_.back() - window_.front()) / static_cast<double>(n);
  char line[160];
  if (!judged_ && !trial_) {
    // Every device measured: now the best alone, against it. Its own frames' intervals cannot
    // stand for it (a GPU's copies slowed by a CPU's frames, or the GPU idle while its frames
    // wait behind the CPU's, make it look slower than it is alone), but where every device
    // takes at most 60% of the fastest of them, measuring it would only cost frames: that is
    // left to the budget.
    const std::size_t b = alone();
    const double fastest =
        *std::min_element(devices_[b].intervals.begin(), devices_[b].intervals.end());
    if (mean <= kObvious * fastest) {
      judged_ = true;
      since_judged_ = trial_gap_;
      last_loss_ms_ = (fastest - mean) * kGuardFrames;
      std::snprintf(line, sizeof line,
                    "whole frames: every device %.3g ms a frame, the best (device %zu) %.3g at "
                    "its fastest: every device",
                    mean, b, fastest);
      decisions_.push_back(line);
      return;
    }
    if (!full) return;  // the incumbent is measured over the whole window
    incumbent_ms_ = mean;
    trial_ = true;
    std::snprintf(line, sizeof line,
                  "whole frames: every device %.3g ms a frame; trying the best alone (device %zu)",
                  mean, b);
    go(Way::best, line);
    return;
  }
  if (trial_) {
    const double every_ms = way_ == Way::every ? mean : incumbent_ms_;
    const double best_ms = way_ == Way::best ? mean : incumbent_ms_;
    const double clear = kMargin * static_cast<double>(kGuardFrames) / static_cast<double>(n);
    if (!full && std::abs(every_ms - best_ms) < clear * std::min(every_ms, best_ms)) return;
    const Way winner = every_ms < best_ms * (1 - kMargin) ? Way::every : Way::best;
    if (judged_) {
      if (winner != way_) {
        // The trial lost: what it cost over the way before counts against the budget.
        explored_ms_ += std::max(0.0, (mean - incumbent_ms_) * static_cast<double>(n));
        trial_gap_ = std::min(trial_gap_ * 2, kLastGap);
      } else {
        trial_gap_ = kFirstGap;
      }
    }
    // What trying the way that lost again is predicted to cost (over a whole window: the
    // difference may have narrowed by then).
    last_loss_ms_ = std::abs(every_ms - best_ms) * kGuardFrames;
    judged_ = true;
    trial_ = false;
    since_judged_ = 0;
    std::snprintf(line, sizeof line,
                  "whole frames: every device %.3g ms a frame, the best alone (device %zu) %.3g: "
                  "%s",
                  every_ms, alone(), best_ms,
                  winner == Way::every ? "every device" : "the best alone");
    if (winner != way_) {
      go(winner, line);
    } else {
      decisions_.push_back(line);
    }
    return;
  }
  if (full && since_judged_ >= trial_gap_ &&
      explored_ms_ + last_loss_ms_ <= kBudget * (now_ms - started_ms_)) {
    incumbent_ms_ = mean;
    trial_ = true;
    go(way_ == Way::every ? Way::best : Way::every,
       way_ == Way::every ? "whole frames: trying the best device alone again"
                          : "whole frames: trying every device again");
  }
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
