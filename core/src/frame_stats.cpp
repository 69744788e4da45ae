// Frame statistics: partials added up per frame, running estimates across frames
// (frame_stats.hpp).
#include "frame_stats.hpp"

#include <algorithm>
#include <cmath>
#include <span>

namespace tandem::detail {
namespace {

// Weight of a new frame's statistics in the running estimate used by the next frame.
constexpr double kStatsSmoothing = 0.25;

}  // namespace

void add_partials(const std::vector<StatsRows>& entries, FrameSums& sums) {
  for (const StatsRows& e : entries) {
    StatsSums& s = sums[e.pass];
    s.pixels += e.pixels;
    for (const cl_float2& v : std::span(e.host, e.count)) {
      s.log_sum += v.s[0];
      s.maximum = std::max(s.maximum, static_cast<double>(v.s[1]));
    }
  }
}

std::int64_t FrameStatistics::frames_to_forget(double fraction) {
  return static_cast<std::int64_t>(std::ceil(std::log(fraction) / std::log(1 - kStatsSmoothing)));
}

void FrameStatistics::combine(const FrameSums& sums, bool smooth, std::uint64_t ticket) {
  for (const auto& [pi, sum] : sums) {
    const FrameStats measured{std::exp(sum.log_sum / std::max(sum.pixels, 1.0)), sum.maximum};
    auto [it, first] = by_pass_.try_emplace(pi, measured);
    if (!smooth) {
      it->second = measured;
    } else if (!first) {
      auto blend = [](double old_value, double new_value) {
        const double lo = std::log(std::max(old_value, 1e-12));
        const double ln = std::log(std::max(new_value, 1e-12));
        return std::exp(lo + kStatsSmoothing * (ln - lo));
      };
      it->second = {blend(it->second.log_average, measured.log_average),
                    blend(it->second.maximum, measured.maximum)};
    }
  }
  // A pre-pass runs its frame more than once: the last run stands for it.
  if (!after_.empty() && after_.back().first == ticket) after_.pop_back();
  after_.emplace_back(ticket, by_pass_);
  while (after_.size() > lag_ + 1) after_.pop_front();
}

void FrameStatistics::apply(std::vector<Pass>& passes) const {
  hand(by_pass_, passes);
}

void FrameStatistics::apply_for(std::vector<Pass>& passes, std::uint64_t ticket) const {
  const ByPass* stats = after_.empty() ? &by_pass_ : &after_.front().second;
  for (const auto& [t, s] : after_) {
    if (t + lag_ <= ticket) stats = &s;
  }
  hand(*stats, passes);
}

void FrameStatistics::hand(const ByPass& stats, std::vector<Pass>& passes) {
  for (const auto& [pi, value] : stats) passes[pi].stats_filter()->set_frame_stats(value);
}

}  // namespace tandem::detail
