// Chunks taken by whichever device is free (chunk_scheduler.hpp).
#include "chunk_scheduler.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

namespace tandem::detail {

void run_chunks(const ChunkRun& run, const Frame& input, Frame& output, int chunk_rows,
                bool collect_stats, std::vector<DeviceTimes>& times, FrameSums& sums) {
  DeviceSet& devices = run.devices;
  const std::size_t n = devices.size();
  const int height = output.height();  // chunks are of output rows
  std::vector<int> todo;
  for (int lo = (height - 1) / chunk_rows * chunk_rows; lo >= 0; lo -= chunk_rows) todo.push_back(lo);
  std::mutex chunk_mutex;  // guards todo, sums, times, failures
  times.assign(n, {});
  std::exception_ptr fatal;

  // Wrappers of the frames are made here, before the threads share them.
  for (std::size_t d = 0; d < n; ++d) {
    if (run.failed[d] || !devices[d].info().host_unified_memory) continue;
    run.executor.frame_buffer(input, devices[d], CL_MEM_READ_ONLY);
    run.executor.frame_buffer(output, devices[d], CL_MEM_READ_WRITE);
    run.executor.host_wrote(devices[d], input);
  }

  auto worker = [&](std::size_t d) {
    for (;;) {
      int lo = 0;
      {
        std::lock_guard lock(chunk_mutex);
        if (todo.empty() || fatal) return;
        lo = todo.back();
        todo.pop_back();
      }
      const Range band{lo, std::min(height, lo + chunk_rows)};
      BandEvents events;
      std::vector<std::function<void()>> after;
      std::vector<StatsRows> stats_rows;
      try {
        try {
          run.executor.enqueue(d, 0, input, output, band, events, after, stats_rows,
                               collect_stats, run.args);
          devices[d].upload_queue().flush();
          devices[d].queue().flush();
          devices[d].download_queue().flush();
          events.wait();
        } catch (const cl::Error& e) {
          throw failure(d, e, "running a chunk");
        } catch (const Error& e) {
          throw DeviceFailure{d, e};
        }
        for (auto& f : after) f();
        std::lock_guard lock(chunk_mutex);
        add_partials(stats_rows, sums);
        times[d].rows += band.rows();
        times[d].upload += busy_ms(events.upload);
        times[d].compute += busy_ms(events.compute);
        times[d].download += busy_ms(events.download);
      } catch (const DeviceFailure& f) {
        for (auto& fn : after) fn();
        std::lock_guard lock(chunk_mutex);
        todo.push_back(lo);  // redone by the others
        try {
          run.fail(f);
        } catch (...) {
          fatal = std::current_exception();
        }
        return;
      }
    }
  };
  // A failing device puts its chunk back, possibly after the others found the queue empty and
  // left: the healthy devices go round again until no chunk is left.
  while (!todo.empty()) {
    std::vector<std::thread> threads;
    for (std::size_t d = 0; d < n; ++d) {
      if (!run.failed[d]) threads.emplace_back(worker, d);
    }
    for (auto& t : threads) t.join();
    if (fatal) std::rethrow_exception(fatal);
  }
  int done = 0;
  for (const DeviceTimes& t : times) done += t.rows;
  if (done != height) {
    throw Error("chunks covered " + std::to_string(done) + " of " + std::to_string(height) +
                " rows");  // never a frame with rows missing
  }
}

}  // namespace tandem::detail
