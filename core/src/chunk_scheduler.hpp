#pragma once
// Chunks (`--split chunks:N`), EngineCL's dynamic scheme: a frame's rows in a shared queue of
// N-row chunks; each device takes the next one as soon as it has finished its last, one host
// thread per device keeping its queue fed. No model and no history: the devices' speeds show
// in how many chunks each takes.
#include <functional>
#include <vector>

#include "band_executor.hpp"
#include "device_failure.hpp"
#include "frame_ring.hpp"
#include "frame_stats.hpp"
#include "tandem/device.hpp"
#include "tandem/frame.hpp"

namespace tandem::detail {

struct ChunkRun {
  DeviceSet& devices;
  BandExecutor& executor;  // its workspace slot 0 on each device
  const StageArgs& args;   // the frame's point-wise stage arguments
  const std::vector<bool>& failed;  // devices out of the run; `fail` adds to it
  // Takes a device out of the run (its chunk goes back to the queue); throws when none is left.
  std::function<void(const DeviceFailure&)> fail;
};

// Runs `input` -> `output` in chunks of `chunk_rows` rows on the devices that have not failed:
// what each did goes to `times` (rows, busy times), the statistics partials to `sums` (with
// `collect_stats`). Throws when no device is left, or Error should rows be left out.
void run_chunks(const ChunkRun& run, const Frame& input, Frame& output, int chunk_rows,
                bool collect_stats, std::vector<DeviceTimes>& times, FrameSums& sums);

}  // namespace tandem::detail
