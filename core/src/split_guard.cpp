// The wall-time guard of the adaptive split (split_guard.hpp): two ways of running a frame, the
// inner policy's split or the fastest device alone, judged by what the host waits for.
#include "split_guard.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace tandem::detail {
namespace {

constexpr std::size_t kWindow = 4;  // frames whose median judges a way of running
constexpr std::size_t kSettle = 1;  // frames left out after a change (idle threads woken, caches)
constexpr double kMargin = 0.03;    // the split is kept only when it beats one device by 3%
constexpr double kAbandon = 2.0;    // a trial whose median is 2x the incumbent's ends there
// The way not taken is tried again after 32 frames and 1 s of wall time, doubling while the
// verdict stands: on the H100 + PoCL a trial of the split slows the GPU alone down for tens of
// frames after it.
constexpr int kRecheckFirst = 32;
constexpr double kRecheckFirstMs = 1000;
constexpr int kRecheckMax = 1024;
constexpr double kRecheckMaxMs = 64000;
constexpr double kBudget = 0.01;  // and only while the trials that lost cost at most 1% of the time
constexpr double kMoved = 0.05;     // a split that moves 5% of the rows starts its window again

// The wall times of one way of running since it last began, its first kSettle frames left out;
// the latest kWindow of them.
class Window {
 public:
  void restart() {
    seen_ = 0;
    ms_.clear();
  }
  // `left_out`: a frame that must not judge the way (its bands' plans made for it), which settles
  // it as well as any: the first frame after a change is mostly such a frame.
  void add(double ms, bool left_out) {
    if (seen_++ < kSettle || left_out) return;
    ms_.push_back(ms);
    if (ms_.size() > kWindow) ms_.erase(ms_.begin());
  }
  bool full() const { return ms_.size() == kWindow; }
  bool empty() const { return ms_.empty(); }
  double median() const {
    std::vector<double> v = ms_;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }

 private:
  std::size_t seen_ = 0;
  std::vector<double> ms_;
};

class WallTimeGuard final : public SplitPolicy {
 public:
  WallTimeGuard(std::unique_ptr<SplitPolicy> inner, std::size_t devices)
      : inner_(std::move(inner)), devices_(devices) {}

  std::vector<double> fractions() override {
    return way_ == Way::split ? inner_->fractions() : alone_fractions();
  }

  void observe(std::span<const BandTiming> timings, double wall_ms) override {
    int height = 0;
    std::size_t with_rows = 0, last = 0;
    bool ok = std::isfinite(wall_ms) && wall_ms > 0;
    for (std::size_t i = 0; i < timings.size(); ++i) {
      height += std::max(timings[i].rows, 0);
      if (timings[i].rows > 0) ++with_rows, last = i;
      ok = ok && timings[i].ok;
    }
    const bool ran_alone = with_rows == 1 && last == alone_;
    // A split whose bands leave every row to one device is that device alone: nothing to
    // choose between.
    const bool inner_alone = height > 0 && one_device(inner_->fractions(), height);
    // The inner policy learns from its own frames; a frame run alone while the guard runs alone
    // says nothing about its split (its devices that sat out would look starved).
    if (!(ran_alone && way_ == Way::alone) || inner_alone) inner_->observe(timings, wall_ms);
    if (!ok || height == 0) return;  // no wall time, or a device failed on it
    if (inner_alone || one_device(inner_->fractions(), height)) {
      stand_down();
      return;
    }
    const Way ran = ran_alone ? Way::alone : Way::split;
    if (ran == Way::split) {
      // While the inner policy still moves rows around, its frames say little of where it goes.
      // (Only while the split is the way being measured: frames of the way before a trial,
      // still on the devices when it began, arrive during it, and must not empty the window of
      // the incumbent the trial is judged against.)
      double moved = 0;
      for (std::size_t i = 0; i < timings.size(); ++i) {
        const int before = i < split_rows_.size() ? split_rows_[i] : 0;
        moved += std::abs(std::max(timings[i].rows, 0) - before);
      }
      if (phase_ != Phase::settled && way_ == Way::split && moved > 2 * kMoved * height) {
        split_ms_.restart();
      }
      split_rows_.resize(timings.size());
      for (std::size_t i = 0; i < timings.size(); ++i)
        split_rows_[i] = std::max(timings[i].rows, 0);
    }
    if (phase_ == Phase::trial && ran == way_ && !window(opposite(ran)).empty()) {
      trial_cost_ms_ += wall_ms - window(opposite(ran)).median();  // over the incumbent
    }
    total_ms_ += wall_ms;
    // A frame whose bands' plans were made for it is slower than its way's pace (an H200 took
    // 0.94 ms for a 1080p frame whose band had grown, 0.40 for the next ones).
    window(ran).add(wall_ms, replanned_.left_out(timings));
    ++since_change_;
    step();
  }

  void remove(std::size_t i) override {
    inner_->remove(i);
    stand_down();
  }

  std::string name() const override { return inner_->name(); }

  std::vector<double> state() const override {
    if (phase_ != Phase::settled || way_ == Way::split) return inner_->state();
    return alone_fractions();
  }

  std::vector<std::string> take_decisions() override { return std::exchange(decisions_, {}); }

 private:
  enum class Way { split, alone };
  // measure: the split from the start, until its window is full; trial: `way_` is being
  // tried against the other, the incumbent; settled: `way_` won, the other is tried again once
  // `countdown_` runs out or the incumbent gets slower than the other's last median.
  enum class Phase { measure, trial, settled };

  static Way opposite(Way w) { return w == Way::split ? Way::alone : Way::split; }

  std::vector<double> alone_fractions() const {
    std::vector<double> f(devices_, 0.0);
    f[alone_] = 1;
    return f;
  }

  // The device the split gives the most rows, the fastest per row, becomes the one run alone.
  void pick_alone() {
    const std::vector<double> shares = inner_->state();
    if (!shares.empty()) {
      alone_ =
          static_cast<std::size_t>(std::max_element(shares.begin(), shares.end()) - shares.begin());
    }
  }

  // Whether `f` gives all `height` rows to one device.
  static bool one_device(const std::vector<double>& f, int height) {
    const std::vector<int> bounds = band_boundaries(height, f);
    int used = 0;
    for (std::size_t i = 0; i + 1 < bounds.size(); ++i) used += bounds[i + 1] > bounds[i];
    return used <= 1;
  }

  Window& window(Way w) { return w == Way::split ? split_ms_ : alone_ms_; }

  bool split_wins() const { return split_ms_.median() < alone_ms_.median() * (1 - kMargin); }

  void step() {
    Window& current = window(way_);
    Window& other = window(opposite(way_));
    switch (phase_) {
      case Phase::measure:
        if (split_ms_.full()) begin_trial(Way::alone);
        break;
      case Phase::trial:
        if (other.empty()) {
          // Nothing to judge against: the way tried is measured as the incumbent now.
          if (current.full()) settle(way_);
        } else if (!current.empty() && current.median() > kAbandon * other.median()) {
          // Far slower: no need to see more of it. (By the median of its frames so far, not its
          // last: one slow frame of the host's had ended trials that were winning.)
          settle(opposite(way_));
        } else if (current.full()) {
          settle(split_wins() ? Way::split : Way::alone);
        }
        break;
      case Phase::settled: {
        // The incumbent got slower than the other way was when last measured: try that now.
        const bool worse = current.full() && other.full() && since_change_ > kWindow + kSettle &&
                           (way_ == Way::split ? !split_wins() : split_wins());
        // A trial when due, and when one more like the last keeps the trials within budget.
        const bool due = --countdown_ <= 0 && total_ms_ - settled_at_ms_ >= interval_ms_ &&
                         explored_ms_ + last_trial_cost_ms_ <= kBudget * total_ms_;
        if (worse || due) begin_trial(opposite(way_));
        break;
      }
    }
  }

  std::string describe(Way w) const {
    return w == Way::split ? "the split" : "device " + std::to_string(alone_) + " alone";
  }

  static std::string ms(const Window& w) {
    if (w.empty()) return "unmeasured";
    char text[32];
    std::snprintf(text, sizeof text, "%.3g ms", w.median());
    return text;
  }

  void note(const std::string& what) { decisions_.push_back(what); }

  void begin_trial(Way w) {
    if (w == Way::alone) pick_alone();
    note("trying " + describe(w) + " against " + describe(opposite(w)) + " (" +
         ms(window(opposite(w))) + ")");
    window(w).restart();
    way_ = w;
    phase_ = Phase::trial;
    since_change_ = 0;
    trial_cost_ms_ = 0;
  }

  void settle(Way w) {
    note("keeping " + describe(w) + ": the split " + ms(split_ms_) + ", " + describe(Way::alone) +
         " " + ms(alone_ms_) + " (medians of wall time)");
    const bool stands = w == settled_;
    interval_ = stands ? std::min(2 * interval_, kRecheckMax) : kRecheckFirst;
    interval_ms_ = stands ? std::min(2 * interval_ms_, kRecheckMaxMs) : kRecheckFirstMs;
    settled_at_ms_ = total_ms_;
    // A trial that lost was exploration; one that won was the way to go.
    last_trial_cost_ms_ = w == way_ ? 0.0 : std::max(0.0, trial_cost_ms_);
    explored_ms_ += last_trial_cost_ms_;
    settled_ = w;
    way_ = w;
    phase_ = Phase::settled;
    countdown_ = interval_;
    since_change_ = 0;
  }

  void stand_down() {
    if (phase_ != Phase::measure) note("measuring the split afresh");
    way_ = settled_ = Way::split;
    phase_ = Phase::measure;
    split_ms_.restart();
    alone_ms_.restart();
    interval_ = kRecheckFirst;
    interval_ms_ = kRecheckFirstMs;
    since_change_ = 0;
    pick_alone();
  }

  std::unique_ptr<SplitPolicy> inner_;
  std::size_t devices_;
  std::size_t alone_ = 0;  // the device run alone
  Way way_ = Way::split;   // what fractions() hands out
  Way settled_ = Way::split;
  Phase phase_ = Phase::measure;
  Window split_ms_, alone_ms_;
  std::vector<int> split_rows_;  // the rows of the latest frame of the split, per device
  int interval_ = kRecheckFirst;
  double interval_ms_ = kRecheckFirstMs;
  double settled_at_ms_ = 0;  // total_ms_ when the last trial ended
  int countdown_ = 0;
  ReplannedFrames replanned_;
  std::size_t since_change_ = 0;  // frames observed since the last trial began or ended
  double total_ms_ = 0;           // wall time of every frame observed
  double explored_ms_ = 0;        // what the trials that lost cost over their incumbents
  double trial_cost_ms_ = 0;      // what the trial now has cost so far
  double last_trial_cost_ms_ = 0;
  std::vector<std::string> decisions_;  // since take_decisions()
};

}  // namespace

std::unique_ptr<SplitPolicy> guard_by_wall_time(std::unique_ptr<SplitPolicy> inner,
                                                std::size_t devices) {
  return std::make_unique<WallTimeGuard>(std::move(inner), devices);
}

}  // namespace tandem::detail
