// Split policies: how a frame's rows are shared among devices, and how the shares learn from
// the devices' timings so that every device finishes its band at the same time.
#include "tandem/split_policy.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>

#include "split_guard.hpp"
#include "tandem/error.hpp"

namespace tandem {
namespace {

std::string format_number(double x) {
  std::ostringstream out;
  out.precision(6);
  out << x;
  return out.str();
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

// `f` scaled to sum 1, after checking that it holds finite, non-negative fractions, not all zero.
std::vector<double> normalised(std::span<const double> f, const std::string& what) {
  if (f.empty()) throw Error(what + ": no fractions given");
  double largest = 0;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (!std::isfinite(f[i]) || f[i] < 0) {
      throw Error(what + ": fraction " + std::to_string(i + 1) + " is " + format_number(f[i]) +
                  ", but fractions must be finite and non-negative");
    }
    largest = std::max(largest, f[i]);
  }
  if (largest == 0) throw Error(what + ": every fraction is 0, so no device would get any rows");
  // Scaling by the largest first keeps the sum finite for any finite input.
  double sum = 0;
  for (double x : f) sum += x / largest;
  std::vector<double> out(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) out[i] = f[i] / largest / sum;
  return out;
}

// Which devices are still in use, shared by the policies.
class Liveness {
 public:
  Liveness(std::size_t devices, std::string policy)
      : alive_(devices, true), policy_(std::move(policy)) {}
  bool alive(std::size_t i) const { return alive_[i]; }
  bool any() const { return std::find(alive_.begin(), alive_.end(), true) != alive_.end(); }
  std::size_t size() const { return alive_.size(); }
  void remove(std::size_t i) {
    if (i >= alive_.size()) {
      throw Error("split policy \"" + policy_ + "\": cannot remove device " + std::to_string(i) +
                  ", there are only " + std::to_string(alive_.size()) + " devices");
    }
    alive_[i] = false;
  }
  void require_any() const {
    if (!any()) {
      throw Error("split policy \"" + policy_ +
                  "\": every device has been removed, none is left to compute the frame");
    }
  }

 private:
  std::vector<bool> alive_;
  std::string policy_;
};

// `f` restricted to the live devices and scaled to sum 1; an equal split among them when they
// all had 0.
std::vector<double> live_share(std::vector<double> f, const Liveness& live) {
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (!live.alive(i)) f[i] = 0;
    sum += f[i];
    count += live.alive(i);
  }
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (sum > 0) {
      f[i] /= sum;
    } else if (live.alive(i)) {
      f[i] = 1.0 / static_cast<double>(count);
    }
  }
  return f;
}

// ---------------------------------------------------------------- static and single

class StaticPolicy final : public SplitPolicy {
 public:
  explicit StaticPolicy(std::vector<double> fractions)
      : given_(std::move(fractions)), live_(given_.size(), name()) {}
  std::vector<double> fractions() override {
    live_.require_any();
    return live_share(given_, live_);
  }
  void remove(std::size_t i) override { live_.remove(i); }
  std::string name() const override {
    std::string out = "static:";
    for (std::size_t i = 0; i < given_.size(); ++i) {
      if (i) out += ',';
      out += format_number(given_[i]);
    }
    return out;
  }

 private:
  std::vector<double> given_;  // normalised
  Liveness live_;
};

class SinglePolicy final : public SplitPolicy {
 public:
  explicit SinglePolicy(std::size_t devices) : live_(devices, "single") {}
  std::vector<double> fractions() override {
    live_.require_any();
    std::vector<double> f(live_.size(), 0.0);
    std::size_t first = 0;
    while (!live_.alive(first)) ++first;
    f[first] = 1;
    return f;
  }
  void remove(std::size_t i) override { live_.remove(i); }
  std::string name() const override { return "single"; }

 private:
  Liveness live_;
};

std::vector<double> parse_static(std::string_view spec, std::size_t devices) {
  const std::string what = "split policy \"" + std::string(spec) + "\"";
  const std::string expected = "expected \"static:F1,...,F" + std::to_string(devices) + "\" with " +
                               std::to_string(devices) + " non-negative fractions, one per device";
  std::vector<double> fractions;
  std::string_view rest = spec.substr(spec.find(':') + 1);
  for (;;) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    double value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size()) {
      throw Error(what + ": \"" + std::string(item) + "\" is not a number; " + expected);
    }
    fractions.push_back(value);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  if (fractions.size() != devices) {
    throw Error(what + ": " + std::to_string(fractions.size()) + " fraction" +
                (fractions.size() == 1 ? "" : "s") + " for " + std::to_string(devices) + " device" +
                (devices == 1 ? "" : "s") + "; " + expected);
  }
  return normalised(fractions, what);
}

// ---------------------------------------------------------------- adaptive

// Tuning, for video: frames of a few ms to a few hundred ms, timings from profiling events with
// a few percent of noise.
constexpr double kOutlier = 1.5;       // a time off the prediction by more than 1.5x is an outlier
constexpr double kSuspect = 1.2;       // one off by 1.2x is held back while a new level may build
constexpr std::size_t kNewLevel = 3;   // that many consistent outliers in a row: a new level
constexpr double kSmoothing = 0.25;    // weight of a new sample: ~4 frames of memory, 1/3 the noise
constexpr std::size_t kWindow = 16;    // samples kept for the overhead regression
constexpr double kSpread = 1.1;        // their rows must differ by 10% for the overhead to show
constexpr double kOverheadSigmas = 2;  // too large an overhead overshoots: take the fit less 2 SE
constexpr double kDeadBand = 0.015;    // predicted gains below 1.5% leave the fractions as they are
// Moving rows makes the bands' plans anew, which costs the frame (an H200, 1080p: 0.94 ms against
// 0.40): rows move only where the predicted gain pays that back within 64 frames. (With 10% noise
// on band times and 0.5 ms a move, rows had moved in one frame of five, for a mean frame
// 1.06-1.23x one device alone: AdaptiveSimulation.MovingRowsPaysForItsNewPlans.)
constexpr double kPayback = 64;
constexpr double kLeaveGain = 0.01;    // a device saving less than 1% of the frame time leaves...
constexpr double kJoinGain = 0.025;    // ...and comes back once it would save 2.5%
// Fixed costs vary from frame to frame (launches, the host's threads): a device's gain counts
// with its fixed cost in doubt, 1.75 times to stay and twice to join. (The gain thresholds alone
// keep the two apart by 3% of the fixed cost, well inside its noise: near the boundary a device
// went in and out every 8-25 frames, GuardedSimulation.NearTheBoundaryADeviceStaysInOrOut. Three
// times to join kept a device out that a remembered split had left out, although the split
// saved 30%: GuardedSimulation.ADeviceARememberedSplitLeftOutJoins.)
constexpr double kKeepDoubt = 1.75;
constexpr double kJoinDoubt = 2;
constexpr int kProbeFirst = 8;         // frames before a device that left is probed,
constexpr int kProbeMax = 64;          // doubling while the probes say it should stay out
constexpr int kProbeRetries = 2 * kNewLevel;  // probes in a row that may give no usable sample
constexpr double kProbeShare = 0.02;  // a probe's share, doubled while rounding leaves it no rows
constexpr double kProbeShareMax = 0.125;
// A probe is cut to what the device is predicted to finish within the frame's time without it
// (one row where its fixed costs alone exceed that), and runs only while probes cost at most 1%
// of the frames' time.
constexpr double kProbeBudget = 0.01;
constexpr double kColdProbeFrames = 10;

struct Sample {
  double rows = 0;
  double ms = 0;
  double fixed = -1;  // of ms, what the rows do not scale, where measured (BandTiming::fixed_ms)
};

// One device's time for a band: ms = overhead + rows * cost. The line goes through the smoothed
// centroid of the accepted samples. The overhead is the smoothed fixed part the samples measured
// where they all did; otherwise a regression over recent samples, which needs their rows to
// differ (steady splits hide it).
class DeviceModel {
 public:
  enum class Verdict { accepted, held, new_level };

  bool known() const { return known_; }
  double overhead() const { return overhead_; }
  double cost() const { return (mean_ms_ - overhead_) / mean_rows_; }  // ms per row, > 0

  Verdict add(Sample s) {
    if (!known_) {
      known_ = true;
      reseed({s});
      return Verdict::accepted;
    }
    const double d = deviation(s);
    const bool outlier = d > kOutlier || d < 1 / kOutlier;
    // A young model is still noisy: only outliers are held back from it.
    const bool suspect = accepted_ > kNewLevel && (d > kSuspect || d < 1 / kSuspect);
    if (!outlier && !suspect) {
      streak_.clear();
      accept(s);
      return Verdict::accepted;
    }
    if (!streak_.empty() && (streak_.back().second > 1) != (d > 1)) streak_.clear();
    streak_.emplace_back(s, d);
    // Outliers in a row make a new level; smaller deviations, likelier by chance, need one more.
    const bool outliers = std::all_of(streak_.begin(), streak_.end(), [](const auto& e) {
      return e.second > kOutlier || e.second < 1 / kOutlier;
    });
    if (streak_.size() < (outliers ? kNewLevel : kNewLevel + 1)) return Verdict::held;
    double lo = streak_.front().second, hi = lo, fastest = streak_.front().first.ms;
    for (const auto& [sample, ratio] : streak_) {
      lo = std::min(lo, ratio);
      hi = std::max(hi, ratio);
      fastest = std::min(fastest, sample.ms);
    }
    if (hi / lo > kOutlier) {  // scattered, not one level
      streak_.erase(streak_.begin());
      return Verdict::held;
    }
    // The device really changed speed (throttling, contention): start again from here, with the
    // overhead kept to at most half the new time until the samples tell better.
    std::vector<Sample> level;
    for (const auto& [sample, ratio] : streak_) level.push_back(sample);
    streak_.clear();
    overhead_ = std::min(overhead_, 0.5 * fastest);
    reseed(level);
    return Verdict::new_level;
  }

 private:
  // How far `s` lies outside what the model allows, as a ratio (1 inside, > 1 slower). Away from
  // the centroid the overhead matters, and it is only known to lie between none (time scales with
  // the rows) and all of the centroid's time (time stays): anything in between is allowed.
  double deviation(Sample s) const {
    const double scaled = mean_ms_ * s.rows / mean_rows_;
    const double lo = std::min(scaled, mean_ms_);
    const double hi = std::max(scaled, mean_ms_);
    return s.ms > hi ? s.ms / hi : s.ms < lo ? s.ms / lo : 1.0;
  }

  void reseed(const std::vector<Sample>& level) {
    mean_rows_ = mean_ms_ = mean_fixed_ = 0;
    fixed_measured_ = true;
    for (const Sample& s : level) {
      mean_rows_ += s.rows / static_cast<double>(level.size());
      mean_ms_ += s.ms / static_cast<double>(level.size());
      mean_fixed_ += s.fixed / static_cast<double>(level.size());
      fixed_measured_ = fixed_measured_ && s.fixed >= 0;
    }
    window_.assign(level.begin(), level.end());
    accepted_ = level.size();
    fit_overhead();
  }

  void accept(Sample s) {
    mean_rows_ += kSmoothing * (s.rows - mean_rows_);
    mean_ms_ += kSmoothing * (s.ms - mean_ms_);
    if (s.fixed < 0) {
      fixed_measured_ = false;
    } else {
      mean_fixed_ = fixed_measured_ ? mean_fixed_ + kSmoothing * (s.fixed - mean_fixed_) : s.fixed;
      fixed_measured_ = true;
    }
    window_.push_back(s);
    if (window_.size() > kWindow) window_.pop_front();
    ++accepted_;
    fit_overhead();
  }

  // Weighted least squares of ms on rows over the window (weights 1/ms^2: the noise is relative),
  // when the rows differ enough; otherwise the overhead stays. It is kept below 90% of every
  // sample's time so that the cost stays positive.
  void fit_overhead() {
    double min_ms = mean_ms_, min_rows = window_.front().rows, max_rows = min_rows;
    for (const Sample& s : window_) {
      min_ms = std::min(min_ms, s.ms);
      min_rows = std::min(min_rows, s.rows);
      max_rows = std::max(max_rows, s.rows);
    }
    double overhead = overhead_;
    const std::size_t n = window_.size();
    if (fixed_measured_) {
      overhead = mean_fixed_;
    } else if (n >= 3 && max_rows >= kSpread * min_rows) {
      double sw = 0, sx = 0, st = 0;
      for (const Sample& s : window_) {
        const double w = 1 / (s.ms * s.ms);
        sw += w;
        sx += w * s.rows;
        st += w * s.ms;
      }
      const double xm = sx / sw, tm = st / sw;
      double sxx = 0, sxt = 0;
      for (const Sample& s : window_) {
        const double w = 1 / (s.ms * s.ms);
        sxx += w * (s.rows - xm) * (s.rows - xm);
        sxt += w * (s.rows - xm) * (s.ms - tm);
      }
      const double slope = sxt / sxx;
      const double intercept = tm - slope * xm;
      if (slope > 0) {
        double rss = 0;
        for (const Sample& s : window_) {
          const double r = s.ms - intercept - slope * s.rows;
          rss += r * r / (s.ms * s.ms);
        }
        const double variance = rss / static_cast<double>(n - 2);
        overhead = intercept - kOverheadSigmas * std::sqrt(variance * (1 / sw + xm * xm / sxx));
      } else {
        overhead = 0;  // time falling with more rows: the window mixes two speeds
      }
    }
    overhead_ = std::clamp(overhead, 0.0, 0.9 * min_ms);
  }

  bool known_ = false;
  std::size_t accepted_ = 0;
  double mean_rows_ = 0, mean_ms_ = 0, overhead_ = 0;
  bool fixed_measured_ = false;  // the latest samples measured their fixed part
  double mean_fixed_ = 0;        // smoothed, while they do
  std::deque<Sample> window_;
  std::vector<std::pair<Sample, double>> streak_;  // deviations in a row on one side, and ratios
};

class AdaptivePolicy final : public SplitPolicy {
 public:
  AdaptivePolicy(std::size_t devices, std::vector<double> initial)
      : devices_(devices), live_(devices, "adaptive") {
    if (initial.empty()) {
      share_.assign(devices, 1.0 / static_cast<double>(devices));
    } else if (initial.size() != devices) {
      throw Error("adaptive split policy: " + std::to_string(initial.size()) +
                  " initial fractions for " + std::to_string(devices) + " devices");
    } else {
      share_ = normalised(initial, "adaptive split policy: initial fractions");
    }
    schedule_probes(false);
  }

  std::vector<double> fractions() override {
    live_.require_any();
    return next_;
  }

  void observe(std::span<const BandTiming> timings, double wall_ms) override {
    (void)wall_ms;  // the guard's (split_guard.cpp)
    if (timings.size() != devices_.size()) {
      throw Error("adaptive split policy: " + std::to_string(timings.size()) + " timings for " +
                  std::to_string(devices_.size()) + " devices");
    }
    double rows = 0, frame_ms = 0;
    std::vector<std::size_t> probed;
    for (std::size_t i = 0; i < timings.size(); ++i) {
      const BandTiming& t = timings[i];
      rows += std::max(t.rows, 0);
      if (!t.ok || t.rows <= 0 || !std::isfinite(t.ms)) continue;
      frame_ms = std::max(frame_ms, t.ms);
      devices_[i].last_ms = t.ms;
      // (A device's first band builds its programs: a cost of the run, not of probing.)
      if (devices_[i].probing() && devices_[i].warmed) probed.push_back(i);
    }
    if (rows > 0) height_ = rows;
    // The budget's base is what the frames take at the split's predicted time: the first
    // frames, slow while the devices build and the split is far off, would inflate it.
    frames_ms_ += std::min(frame_ms, predicted_time(share_));
    if (!probed.empty()) {
      const double excess = std::max(0.0, frame_ms - probed_against_ms_);
      probes_ms_ += excess;
      for (std::size_t i : probed) devices_[i].probe_cost = excess;
    }
    // Bands whose plans were made for the frame (new rows) are slower than the bands after
    // them, and so are the bands the host enqueued after them: such a frame says little of
    // what rows cost, but where the rows moved it would move them again (two H200s, 4K: a
    // device's share shrank frame after frame until it left). A probe in such a frame, which
    // moved the others' rows, is run again at once (after_probe()), then on the same bands.
    const bool skipped = replanned_.left_out(timings);
    if (skipped) learn_move_cost(timings, rows, frame_ms);
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      if (!live_.alive(i)) continue;
      Device& d = devices_[i];
      const BandTiming& t = timings[i];
      std::optional<DeviceModel::Verdict> verdict;
      if (t.ok && t.rows > 0 && std::isfinite(t.ms) && t.ms > 0) {
        // A device's first band includes program builds and first touches of memory.
        if (d.warmed && !skipped) {
          verdict = d.model.add({static_cast<double>(t.rows), t.ms, t.fixed_ms});
        }
        d.warmed = true;
      }
      if (d.probing()) after_probe(d, t, verdict);
    }
    plan(false);
    schedule_probes(true);
  }

  void remove(std::size_t i) override {
    live_.remove(i);
    share_[i] = 0;
    plan(true);
    schedule_probes(false);
  }

  std::string name() const override { return "adaptive"; }
  // Nothing to persist once every device is gone: all zeros would not load again.
  std::vector<double> state() const override {
    return live_.any() ? share_ : std::vector<double>{};
  }

 private:
  struct Device {
    DeviceModel model;
    bool warmed = false;
    // While it sits out of the split:
    double probe_now = 0;  // the probe share the fractions handed out give it; 0: none
    bool probing() const { return probe_now > 0; }
    int until_probe = kProbeFirst;
    int probe_interval = kProbeFirst;
    double probe_share = kProbeShare;
    int retries = 0;  // probes in a row without a usable sample
    double last_ms = 0;     // its latest band's time
    double probe_cost = 0;  // what its next probe is taken to add to the frame, at least
  };

  // Rows per device that make the devices in `members` finish together at `time`, those whose
  // overhead alone exceeds that time left out (water filling).
  struct Fill {
    double time = 0;
    std::vector<std::size_t> members;
    std::vector<double> rows;  // per device
  };

  // Device `doubted`'s overhead is taken `doubt` times.
  Fill water_fill(std::vector<std::size_t> members, double rows,
                  std::size_t doubted = std::numeric_limits<std::size_t>::max(),
                  double doubt = 1) const {
    auto overhead = [&](std::size_t m) {
      return devices_[m].model.overhead() * (m == doubted ? doubt : 1);
    };
    std::sort(members.begin(), members.end(),
              [&](std::size_t a, std::size_t b) { return overhead(a) < overhead(b); });
    Fill f;
    for (;;) {
      double speed = 0, offset = 0;  // rows per ms, and rows the overheads cost
      for (std::size_t m : members) {
        speed += 1 / devices_[m].model.cost();
        offset += overhead(m) / devices_[m].model.cost();
      }
      f.time = (rows + offset) / speed;
      if (members.size() > 1 && overhead(members.back()) >= f.time) {
        members.pop_back();
      } else {
        break;
      }
    }
    f.rows.assign(devices_.size(), 0.0);
    for (std::size_t m : members) {
      f.rows[m] = (f.time - overhead(m)) / devices_[m].model.cost();
    }
    f.members = std::move(members);
    return f;
  }

  // The water filling, less every device that saves too little to be worth a band: unmodelled
  // costs (one more band, one more transfer) and noisy estimates would make it flicker. A
  // device's gain is taken with its fixed cost in doubt (kKeepDoubt, kJoinDoubt): a gain that
  // rests on fixed costs staying as measured does not last. (Not their share of its time: in a
  // 1080p frame of saturation the second of two H200s, enqueued after the first, had 0.147 ms of
  // its 0.309 fixed, and the split took the frame from 0.36 ms to 0.27.)
  Fill choose(std::vector<std::size_t> members, double rows) const {
    for (;;) {
      Fill all = water_fill(members, rows);
      members = all.members;
      if (members.size() <= 1) return all;
      std::size_t worst = members.size();
      double worst_margin = 0;
      for (std::size_t j = 0; j < members.size(); ++j) {
        std::vector<std::size_t> others = members;
        others.erase(others.begin() + static_cast<std::ptrdiff_t>(j));
        const bool joins = share_[members[j]] == 0;
        const Fill doubted = water_fill(members, rows, members[j], joins ? kJoinDoubt : kKeepDoubt);
        const double gain = water_fill(others, rows).time / doubted.time - 1;
        const double margin = gain - (joins ? kJoinGain : kLeaveGain);
        if (margin < worst_margin) worst = j, worst_margin = margin;
      }
      if (worst == members.size()) return all;
      members.erase(members.begin() + static_cast<std::ptrdiff_t>(worst));
    }
  }

  // The frame time predicted for `f` by the devices with a model.
  double predicted_time(const std::vector<double>& f) const {
    double time = 0;
    for (std::size_t i = 0; i < f.size(); ++i) {
      const DeviceModel& m = devices_[i].model;
      if (live_.alive(i) && m.known() && f[i] > 0) {
        time = std::max(time, m.overhead() + f[i] * height_ * m.cost());
      }
    }
    return time;
  }

  // New shares from the models; kept as they are when they would gain too little (`force`:
  // the devices changed, the shares must change).
  void plan(bool force) {
    std::vector<std::size_t> known;
    double unknown_share = 0;  // devices in the split without a model keep their share for now
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      if (!live_.alive(i)) continue;
      if (devices_[i].model.known()) {
        known.push_back(i);
      } else {
        unknown_share += share_[i];
      }
    }
    if (known.empty() || height_ <= 0 || unknown_share >= 1) {
      share_ = live_share(share_, live_);
      return;
    }
    const Fill fill = choose(known, height_ * (1 - unknown_share));
    std::vector<double> proposal = share_;
    bool same_devices = true;
    for (std::size_t i : known) {
      proposal[i] = fill.rows[i] / height_;
      same_devices = same_devices && (proposal[i] > 0) == (share_[i] > 0);
    }
    proposal = live_share(proposal, live_);
    const double now = predicted_time(share_), then = predicted_time(proposal);
    if (!force && same_devices &&
        (now <= then * (1 + kDeadBand) || (now - then) * kPayback < move_ms_)) {
      return;
    }
    for (std::size_t i : known) {
      if (share_[i] > 0 && proposal[i] == 0) {
        Device& d = devices_[i];  // it leaves: probe it soon, then less and less often
        d.until_probe = d.probe_interval = kProbeFirst;
        d.probe_share = kProbeShare;
        d.retries = 0;
        // Until a probe is measured, one is taken to cost what its last band took, up to ten
        // frames: a device idle for a while starts slower than its model says (PoCL: 9 ms for
        // a probe of 16 rows of 1080p bilateral whose model said it fit in the frame's 0.53).
        d.probe_cost = std::min(d.last_ms, kColdProbeFrames * predicted_time(proposal));
      }
    }
    share_ = std::move(proposal);
  }

  // A frame whose bands' plans were made for it: what it took over its prediction is what a move
  // of rows costs. (Not while a device is new to the run or probed: their bands cost more.)
  void learn_move_cost(std::span<const BandTiming> timings, double rows, double frame_ms) {
    if (rows <= 0) return;
    std::vector<double> ran(timings.size(), 0.0);
    for (std::size_t i = 0; i < timings.size(); ++i) {
      const Device& d = devices_[i];
      if (timings[i].rows <= 0) continue;
      if (!timings[i].ok || !d.warmed || !d.model.known() || d.probing()) return;
      ran[i] = timings[i].rows / rows;
    }
    const double excess = std::max(0.0, frame_ms - predicted_time(ran));
    move_ms_ = move_ms_ == 0 ? excess : (1 - kSmoothing) * move_ms_ + kSmoothing * excess;
  }

  void after_probe(Device& d, const BandTiming& t, std::optional<DeviceModel::Verdict> verdict) {
    bool again = false;
    if (t.ok && t.rows <= 0) {
      d.probe_share = std::min(2 * d.probe_share, kProbeShareMax);  // rounding ate the probe
      again = true;
    } else if (verdict == DeviceModel::Verdict::accepted) {
      d.until_probe = d.probe_interval;  // nothing new: look again later
      d.probe_interval = std::min(2 * d.probe_interval, kProbeMax);
    } else if (verdict == DeviceModel::Verdict::new_level) {
      d.until_probe = d.probe_interval = kProbeFirst;
    } else {
      again = t.ok;  // warm-up, or a deviation that may be a new level: look again at once
    }
    if (again && ++d.retries <= kProbeRetries) {
      d.until_probe = 1;
    } else {
      d.retries = 0;
      if (again) d.until_probe = d.probe_interval;
    }
  }

  // What fractions() hands out: the shares, plus a probe share for each device sitting out
  // whose turn it is. `advance`: a frame has passed.
  void schedule_probes(bool advance) {
    next_ = share_;
    double probes = 0, in_split = 0;
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      Device& d = devices_[i];
      d.probe_now = 0;
      if (!live_.alive(i)) continue;
      if (share_[i] > 0) {
        in_split += share_[i];
        continue;
      }
      if (advance) --d.until_probe;
      if (d.until_probe <= 0) {
        d.probe_now = probe_size(i);
        probes += d.probe_now;
      }
    }
    if (probes == 0 || in_split == 0) return;
    const double scale = std::min(1.0, 0.5 / probes);  // probes never take more than half
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      next_[i] = devices_[i].probing() ? devices_[i].probe_now * scale
                                       : share_[i] * (1 - probes * scale) / in_split;
    }
  }

  // The share a probe of device `i` takes now: its probe share, cut to the rows its model says it
  // finishes within the frame's predicted time, or one row where even that is too long; 0 (not
  // now) while what probes cost and what this one is predicted to cost exceed the budget. (A
  // model can be wrong: PoCL's threads, idle for long, took 3.9 ms for a probe predicted to fit
  // in 0.63.)
  double probe_size(std::size_t i) {
    const Device& d = devices_[i];
    const DeviceModel& m = d.model;
    probed_against_ms_ = predicted_time(share_);
    double share = d.probe_share, excess = d.probe_cost;
    if (m.known() && height_ > 0 && probed_against_ms_ > 0) {
      const double fits = (probed_against_ms_ - m.overhead()) / m.cost();
      if (fits >= 1) {
        share = std::min(share, fits / height_);
      } else {
        share = 1 / height_;
        excess = std::max(excess, m.overhead() + m.cost() - probed_against_ms_);
      }
    }
    return probes_ms_ + excess <= kProbeBudget * frames_ms_ ? share : 0.0;
  }

  std::vector<Device> devices_;
  Liveness live_;
  std::vector<double> share_;  // the learnt fractions, 0 for a device that sits out
  std::vector<double> next_;   // what fractions() hands out: the shares plus probes
  double height_ = 0;          // rows of the last frame observed
  double frames_ms_ = 0;       // the frames' times so far, at most the split's predicted time
  double probes_ms_ = 0;       // what probes added to them
  double probed_against_ms_ = 0;  // the frame's predicted time without the latest probe
  double move_ms_ = 0;            // what a frame whose rows moved takes over its prediction
  detail::ReplannedFrames replanned_;
};

}  // namespace

std::unique_ptr<SplitPolicy> make_adaptive_policy(std::size_t devices,
                                                  std::vector<double> initial) {
  if (devices == 0) throw Error("adaptive split policy: no devices to split frames across");
  auto adaptive = std::make_unique<AdaptivePolicy>(devices, std::move(initial));
  if (devices == 1) return adaptive;
  return detail::guard_by_wall_time(std::move(adaptive), devices);
}

std::unique_ptr<SplitPolicy> make_split_policy(std::string_view spec, std::size_t devices) {
  if (devices == 0) throw Error("split policy: no devices to split frames across");
  const std::string_view s = trim(spec);
  if (s.empty() || s == "adaptive" || s == "bands") return make_adaptive_policy(devices);
  if (s == "single") return std::make_unique<SinglePolicy>(devices);
  if (s.starts_with("static:")) return std::make_unique<StaticPolicy>(parse_static(s, devices));
  throw Error("unknown split policy \"" + std::string(spec) +
              "\": expected \"auto\", \"frames\" (whole frames per device), \"bands\" or "
              "\"adaptive\", \"static:F1,...,F" + std::to_string(devices) +
              "\" (one fraction per device), \"single\" or \"chunks:N\" (N-row chunks taken by "
              "whichever device is free)");
}

std::vector<int> band_boundaries(int height, std::span<const double> fractions, int quantum) {
  if (height < 0)
    throw Error("band boundaries: the height " + std::to_string(height) + " is negative");
  if (quantum < 1) {
    throw Error("band boundaries: the quantum " + std::to_string(quantum) + " is below 1 row");
  }
  const std::vector<double> f = normalised(fractions, "band boundaries");
  const std::size_t n = f.size();
  const int whole = height / quantum;  // quanta to share out
  const int rest = height % quantum;   // rows the last non-empty band takes on top
  std::size_t last = n - 1;
  while (f[last] == 0) --last;

  // Each band's exact share in quanta, rounded down; the quanta this leaves go one each to the
  // bands that lost most to the rounding (largest remainder; the earlier band on a tie).
  std::vector<double> target(n);
  std::vector<long long> quanta(n);
  long long left = whole;
  for (std::size_t i = 0; i < n; ++i) {
    const double rows = f[i] * height - (i == last ? rest : 0);
    target[i] = std::max(0.0, rows / quantum);
    quanta[i] = static_cast<long long>(std::floor(target[i]));
    left -= quanta[i];
  }
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < n; ++i) {
    if (f[i] > 0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return target[a] - quanta[a] > target[b] - quanta[b];
  });
  for (std::size_t j = 0; left > 0; j = (j + 1) % order.size(), --left) ++quanta[order[j]];
  // Rounding in the floating point could hand out one quantum too many: take it back from the
  // band that lost least.
  for (std::size_t j = order.size(); left < 0;) {
    j = (j == 0 ? order.size() : j) - 1;
    if (quanta[order[j]] > 0) --quanta[order[j]], ++left;
  }

  std::vector<int> bounds(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    bounds[i + 1] = bounds[i] + static_cast<int>(quanta[i]) * quantum + (i == last ? rest : 0);
  }
  return bounds;
}

}  // namespace tandem
