// One host thread per device that enqueues its commands (device_feeders.hpp).
#include "device_feeders.hpp"

#include <utility>

namespace tandem::detail {

DeviceFeeders::DeviceFeeders(std::size_t devices) : feeders_(devices) {}

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
    f->thread = std::thread([jobs = &f->jobs] {
      for (;;) {
        std::function<void()> next;
        jobs->pop(next);  // blocks until one comes
        if (!next) return;
        next();
      }
    });
  }
  f->jobs.push(std::move(job));
}

}  // namespace tandem::detail
