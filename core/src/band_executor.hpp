#pragma once
// One device's share of one frame: the band's upload (or the sub-buffers of a host frame the
// device shares), its passes, and its download (or the mapping that makes its rows visible),
// each on its queue, none waited for. It keeps, per device and workspace slot, the band plans
// and scratch buffers the bands reuse from frame to frame.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include <CL/opencl.hpp>

#include "band_plan.hpp"
#include "frame_stats.hpp"
#include "plan.hpp"
#include "tandem/device.hpp"
#include "tandem/frame.hpp"
#include "workspace.hpp"

namespace tandem::detail {

/// One device's commands for one band, by what they do.
struct BandEvents {
  std::vector<cl::Event> upload;    ///< host to device
  std::vector<cl::Event> compute;   ///< kernels and copies between device buffers
  std::vector<cl::Event> download;  ///< device to host (or the mapping that makes rows visible)
  /// Rows each of its images holds beyond the band's own rows (stencils' halos), a mean over
  /// the images.
  double halo_rows = 0;
  /// Its band plan was made for it (another band, frame or workspace than the last there): the
  /// first use of buffers, which takes longer than the bands after.
  bool new_plan = false;

  bool empty() const { return upload.empty() && compute.empty() && download.empty(); }
  void wait() const;
};

class BandExecutor {
 public:
  /// Runs the passes of `plan` (which it reads at every band: the caller lowers into it) on
  /// `devices`, each with `slots` workspaces, stencils in `schedule`.
  BandExecutor(DeviceSet& devices, Plan& plan, Schedule schedule, int slots);

  /// `plan` was lowered again: band plans made before are made again at their next band.
  void replanned() { ++generation_; }

  /// Enqueues device `d`'s band of `input` -> `output` in its workspace `slot`, its point-wise
  /// stages with `args` (taken from the plan by stage_args()), and flushes nothing. Its commands
  /// go to `events`; unmaps that must wait for them to `after`; with `collect_stats`, the
  /// statistics partials it reads back to `stats_rows`. Throws cl::Error or Error; what it
  /// enqueued before is in `events`.
  void enqueue(std::size_t d, int slot, const Frame& input, Frame& output, Range band,
               BandEvents& events, std::vector<std::function<void()>>& after,
               std::vector<StatsRows>& stats_rows, bool collect_stats, const StageArgs& args);

  /// The buffer wrapping host `frame` in `device`'s context (CL_MEM_USE_HOST_PTR), made once per
  /// frame and context: zero-copy where the device shares the host's memory.
  cl::Buffer frame_buffer(const Frame& frame, const Device& device, cl_mem_flags flags);
  /// Tells `device` (sharing the host's memory) that the host wrote `frame`: an invalidating map
  /// and its unmap, which move nothing there (and none at all where the device computes in the
  /// host's pointer, quirks.hpp). Not blocking: the kernels behind it on the in-order queue see
  /// the host's rows, and waiting would hold the caller until the frame before on the queue was
  /// done.
  void host_wrote(Device& device, const Frame& frame);

 private:
  // The plan of device d's band in workspace `slot`, made again when it was made for another
  // band, frame or plan.
  // `made`: whether it was.
  BandPlan& band_plan(std::size_t d, int slot, const Frame& input, const Frame& output, Range band,
                      bool& made);

  DeviceSet& devices_;
  Plan& plan_;
  Schedule schedule_;
  HostAllocator pinned_;  // host memory the set's discrete GPU reads into without staging
  std::mutex bindings_mutex_;          // guards the frames' wrappers (frame_buffer())
  std::vector<Workspace> workspaces_;  // slot-major: slot * devices + device
  std::vector<BandPlan> band_plans_;   // beside workspaces_, one each
  std::uint64_t generation_ = 1;
  const std::uint64_t id_;  // tells its frame bindings from a dead executor's at the same address
};

}  // namespace tandem::detail
