// One host thread per device that enqueues its commands (device_feeders.hpp).
#include "device_feeders.hpp"

#include <chrono>
#include <utility>

namespace tandem::detail {
namespace {

// How long a spinning thread stays awake for its next job: a frame's time and more on GPUs at
// 1080p and 4K (0.1-1.3 ms). Two H200s, a context each, one 1080p frame at a time, in one
// alternated A/B of three graphs: the second GPU's fixed cost a band (the report's fixed_ms, from
// the frame's first enqueue to the band's end, what its rows do not scale) 0.031-0.059 ms with its
// thread asleep and 0.025-0.037 spinning, where the first GPU's (enqueued by the submitting
// thread) was 0.022-0.037 (bench-results/2026-11-30-h200x2-s43-contexts.txt).
constexpr std::chrono::microseconds kSpin{2000};

}  // namespace

DeviceFeeders::DeviceFeeders(std::vector<bool> spins)
    : spins_(std::move(spins)), feeders_(spins_.size()) {}

DeviceFeeders::~DeviceFeeders() {
  for (auto& f : feeders_) {
    if (!f) continue;
    f->jobs.push({});
    f->thread.join();
  }
}

void DeviceFeeders::post(std::size_t d, std::function<void()> job) {
  auto& f = feeders_.at(d);
  if (!f) {
    f = std::make_unique<Feeder>();
    f->thread = std::thread([jobs = &f->jobs, spin = spins_[d]] {
      for (;;) {
        std::function<void()> next;
        bool got = false;
        if (spin) {
          const auto until = std::chrono::steady_clock::now() + kSpin;
          while (!(got = jobs->try_pop(next)) && std::chrono::steady_clock::now() < until) {
          }
        }
        if (!got) jobs->pop(next);  // blocks until one comes
        if (!next) return;
        next();
      }
    });
  }
  f->jobs.push(std::move(job));
}

}  // namespace tandem::detail
