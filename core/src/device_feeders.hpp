#pragma once
// One host thread per device that enqueues its commands, so that no device waits for another's
// driver calls: a frame's bands go to their devices at once, and a whole frame given to one
// device does not hold up the thread that submits the next. Each device's jobs run in the
// order they were posted; a device's thread starts with its first job. A thread that spins waits
// for its next job awake for kSpin after its last before it sleeps: a sleeping thread took a
// wake-up to start a frame's band (see device_feeders.cpp).
#include <cstddef>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <tbb/concurrent_queue.h>

namespace tandem::detail {

class DeviceFeeders {
 public:
  /// A thread for each device, `spins[d]` whether device d's spins (GPUs': their host thread
  /// is all they take of the CPU).
  explicit DeviceFeeders(std::vector<bool> spins);
  /// Runs the jobs posted so far, then stops the threads.
  ~DeviceFeeders();
  DeviceFeeders(const DeviceFeeders&) = delete;
  DeviceFeeders& operator=(const DeviceFeeders&) = delete;

  /// Runs `job` on device `d`'s thread after the jobs posted to it before. A job must not throw.
  void post(std::size_t d, std::function<void()> job);

 private:
  struct Feeder {
    tbb::concurrent_bounded_queue<std::function<void()>> jobs;  // an empty one stops the thread
    std::thread thread;
  };
  std::vector<bool> spins_;
  std::vector<std::unique_ptr<Feeder>> feeders_;
};

}  // namespace tandem::detail
