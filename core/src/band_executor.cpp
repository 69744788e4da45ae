// One device's share of one frame (band_executor.hpp).
#include "band_executor.hpp"

#include <atomic>
#include <cstring>
#include <map>
#include <memory>

#include "quirks.hpp"
#include "tandem/program_cache.hpp"

namespace tandem::detail {
namespace {

// Scratch slots of the executor, apart from one per value.
constexpr int kStatsSlotBase = -1000;

// Buffers wrapping a host frame in each context whose devices share memory with the host.
struct FrameBinding {
  std::uint64_t owner = 0;  // BandExecutor::id_: addresses of dead executors get reused
  std::map<int, cl::Buffer> by_context;
};

bool same_args(const cl_float16& a, const cl_float16& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

std::uint64_t next_id() {
  static std::atomic<std::uint64_t> counter{0};
  return ++counter;
}

}  // namespace

void BandEvents::wait() const {
  for (const auto* list : {&upload, &compute, &download}) {
    if (!list->empty()) cl::Event::waitForEvents(*list);
  }
}

BandExecutor::BandExecutor(DeviceSet& devices, Plan& plan, Schedule schedule, int slots)
    : devices_(devices),
      plan_(plan),
      schedule_(schedule),
      pinned_(devices.host_allocator()),
      workspaces_(static_cast<std::size_t>(slots) * devices.size()),
      band_plans_(workspaces_.size()),
      id_(next_id()) {}

cl::Buffer BandExecutor::frame_buffer(const Frame& frame, const Device& device,
                                      cl_mem_flags flags) {
  // A frame may be on the devices twice (an input submitted again), from two feeding threads.
  std::lock_guard lock(bindings_mutex_);
  auto binding = std::static_pointer_cast<FrameBinding>(frame.binding());
  if (!binding || binding->owner != id_) {
    binding = std::make_shared<FrameBinding>();
    binding->owner = id_;
    frame.binding() = binding;
  }
  auto it = binding->by_context.find(device.context_index());
  if (it == binding->by_context.end()) {
    // Page-aligned memory of whole pages: zero-copy on devices that share the host's memory.
    cl::Buffer b(device.context(), flags | CL_MEM_USE_HOST_PTR, frame.capacity(),
                 const_cast<std::uint8_t*>(frame.data()));
    it = binding->by_context.emplace(device.context_index(), b).first;
  }
  return it->second;
}

void BandExecutor::host_wrote(Device& device, const Frame& frame) {
  if (computes_in_host_pointer(device.info())) return;
  const cl::Buffer buffer = frame_buffer(frame, device, CL_MEM_READ_ONLY);
  void* p = device.queue().enqueueMapBuffer(buffer, CL_FALSE, CL_MAP_WRITE_INVALIDATE_REGION, 0,
                                            frame.capacity());
  device.queue().enqueueUnmapMemObject(buffer, p);
}

BandPlan& BandExecutor::band_plan(std::size_t d, int slot, const Frame& input, const Frame& output,
                                  Range band, bool& made) {
  const std::size_t i = slot * devices_.size() + d;
  BandPlan& plan = band_plans_[i];
  made = !plan.made_for(generation_, band, input, output);
  if (made) {
    plan.make(plan_, generation_, band, input, output,
              {devices_[d], workspaces_[i], this, devices_.row_alignment()});
  }
  return plan;
}

void BandExecutor::enqueue(std::size_t d, int slot, const Frame& input, Frame& output, Range band,
                           BandEvents& events, std::vector<std::function<void()>>& after,
                           std::vector<StatsRows>& stats_rows, bool collect_stats,
                           const StageArgs& args) {
  Device& device = devices_[d];
  Workspace& ws = workspaces_[slot * devices_.size() + d];
  std::vector<Pass>& passes = plan_.passes;
  const int output_value = plan_.output_value;
  cl::CommandQueue& queue = device.queue();
  const bool zero_copy = device.info().host_unified_memory;
  BandPlan& plan = band_plan(d, slot, input, output, band, events.new_plan);
  const std::vector<Range>& need = plan.need;
  std::vector<DeviceImage>& images = plan.images;
  events.halo_rows = plan.halo_rows;

  if (!need[0].empty()) {
    if (zero_copy) {
      // Its own read-only sub-buffer of the rows it reads: devices never share a buffer object
      // (runtimes such as PoCL serialise devices that use one buffer).
      cl_buffer_region region{input.pitch() * need[0].lo, input.pitch() * need[0].rows()};
      images[0].buffer =
          frame_buffer(input, device, CL_MEM_READ_ONLY)
              .createSubBuffer(CL_MEM_READ_ONLY, CL_BUFFER_CREATE_TYPE_REGION, &region);
    } else {
      // On its own queue, so that it overlaps the kernels of the frame before; the kernels of
      // this frame wait for it.
      cl::Event e;
      device.upload_queue().enqueueWriteBuffer(images[0].buffer, CL_FALSE, 0,
                                               input.pitch() * need[0].rows(),
                                               input.row(need[0].lo), nullptr, &e);
      events.upload.push_back(e);
      queue.enqueueBarrierWithWaitList(&events.upload);
    }
  }

  // The band's rows of the output frame: its own sub-buffer, or a staging buffer read back.
  DeviceImage& band_out = plan.band_out;
  const std::size_t band_bytes = output.pitch() * band_out.rows;
  if (zero_copy) {
    cl_buffer_region region{output.pitch() * band_out.first_row, band_bytes};
    band_out.buffer =
        frame_buffer(output, device, CL_MEM_READ_WRITE)
            .createSubBuffer(CL_MEM_WRITE_ONLY, CL_BUFFER_CREATE_TYPE_REGION, &region);
    if (plan.direct) images[output_value].buffer = band_out.buffer;
  }

  struct Read {
    cl::Buffer buffer;
    std::size_t offset, bytes;
    void* host;
  };
  std::vector<Read> stats_reads;
  for (std::size_t pi = 0; pi < passes.size(); ++pi) {
    Pass& p = passes[pi];
    const Range r = need[p.output];
    if (r.empty()) continue;
    const DeviceImage& out = images[p.output];
    // A pass's size is its output's (a fused chain's inputs have it too).
    const int width = plan.sizes[p.output].width;
    const int height = plan.sizes[p.output].height;
    BandContext ctx(device, ws, ProgramCache::global(), width, height, r.lo, r.hi, events.compute,
                    schedule_, p.has_epilogue() ? &p.epilogue : nullptr,
                    p.output == output_value);

    if (!p.pointwise) {
      std::vector<DeviceImage> in;
      for (int v : p.inputs) in.push_back(images[v]);
      p.filters.front()->enqueue(ctx, in, out);
      continue;
    }
    BandPlan::Fused& fused = plan.fused[pi];
    if (fused.stage_args.empty()) {
      // Its own kernel object, its arguments bound once here: a pass's program may serve
      // another pass, whose arguments differ.
      if (!fused.kernel()) {
        fused.kernel = cl::Kernel(ctx.program(p.sources, p.options, p.generated), "tandem_fused");
      }
      // Recorded once every argument is bound: a failure half-way binds them all next time.
      std::vector<std::pair<cl_uint, int>> bound_images;
      std::vector<cl_float16> bound_stages;
      cl_uint arg = 0;
      for (int v : p.inputs) {
        bound_images.emplace_back(arg, v);
        arg = set_image_args(fused.kernel, arg, images[v]);
      }
      bound_images.emplace_back(arg, p.output);
      arg = set_image_args(fused.kernel, arg, out);
      fused.kernel.setArg(arg++, r.lo);
      if (p.stores_planes()) fused.kernel.setArg(arg++, std::min(r.hi, height));
      if (p.stores_planes() || p.on_planes) fused.kernel.setArg(arg++, width);
      fused.stage_arg = arg;
      for (std::size_t s = 0; s < p.filters.size(); ++s) {
        bound_stages.push_back(args[pi][s]);
        fused.kernel.setArg(arg++, bound_stages.back());
      }
      fused.images = std::move(bound_images);
      fused.stage_args = std::move(bound_stages);
    } else if (zero_copy) {
      // The host's frames are wrapped anew each frame.
      for (const auto& [arg, v] : fused.images) {
        if (v == 0 || v == output_value) fused.kernel.setArg(arg, images[v].buffer);
      }
    }
    for (std::size_t s = 0; s < p.filters.size(); ++s) {
      const cl_float16& now = args[pi][s];
      if (!same_args(now, fused.stage_args[s])) {
        fused.stage_args[s] = now;
        fused.kernel.setArg(fused.stage_arg + static_cast<cl_uint>(s), now);
      }
    }
    cl::Kernel& kernel = fused.kernel;
    const std::size_t items = static_cast<std::size_t>((width + 3) / 4);
    if (p.stores_planes()) {
      // A work-item stores a row group's rows (4:2:0 chroma is the mean of a 2x2 block).
      const int g = rows_per_group(p.format);
      ctx.enqueue(kernel, items, (std::min(r.hi, height) - r.lo + g - 1) / g,
                  "fused point-wise kernel storing planes");
      continue;
    }
    if (p.on_planes) {
      // 16 samples a work-item over the output's row pairs, three Y' rows' worth each.
      const std::size_t luma = static_cast<std::size_t>(out.pitch_elements()) / 3 * 2;
      ctx.enqueue(kernel, 3 * luma / 16, (std::min(r.hi, height) - r.lo + 1) / 2,
                  "point-wise kernel on planes");
      continue;
    }
    if (p.stats_stage < 0) {
      ctx.enqueue(kernel, items, r.rows(), "fused point-wise kernel");
      continue;
    }
    // The kernel leaves a statistics partial per work-group of each row it computes.
    const std::size_t group = stats_group(items, device.info());
    const std::size_t groups = items / group;
    const cl::Buffer partial =
        ws.buffer(device.context(), this, kStatsSlotBase - static_cast<int>(pi),
                  sizeof(cl_float2) * groups * r.rows());
    if (fused.partial() != partial()) {
      fused.partial = partial;
      const cl_uint arg = fused.stage_arg + static_cast<cl_uint>(p.filters.size());
      kernel.setArg(arg, width);
      kernel.setArg(arg + 1, partial);
    }
    ctx.enqueue(kernel, cl::NDRange(items, r.rows()), cl::NDRange(group, 1),
                "fused point-wise kernel with frame statistics");
    if (!collect_stats) continue;
    // Only the band's own rows count (the pass may compute rows of its neighbours, for a
    // stencil after it). Read back without blocking, below: the frame's wait covers it.
    const Range own = plan.own[p.output];
    const std::size_t count = groups * own.rows();
    auto* host = reinterpret_cast<cl_float2*>(
        ws.host(this, kStatsSlotBase - static_cast<int>(pi), sizeof(cl_float2) * count, pinned_));
    stats_reads.push_back(
        {partial, sizeof(cl_float2) * groups * (own.lo - r.lo), sizeof(cl_float2) * count, host});
    stats_rows.push_back({pi, partial, own, host, count, static_cast<double>(own.rows()) * width});
  }

  // The result is the source itself, or rows of a wider intermediate: copy the band's rows.
  // (Plain copies: PoCL 3.1 crashed on a rectangular copy out of a sub-buffer.)
  const DeviceImage& result = images[output_value];
  if (result.buffer() != band_out.buffer()) {
    const std::size_t row_bytes =
        static_cast<std::size_t>(output.width()) * bytes_per_pixel(output.format());
    const std::size_t src = (band.lo - result.first_row) * result.pitch;
    const int copies = result.pitch == band_out.pitch ? 1 : band.rows();
    for (int i = 0; i < copies; ++i) {
      cl::Event e;
      queue.enqueueCopyBuffer(result.buffer, band_out.buffer, src + i * result.pitch,
                              i * band_out.pitch,
                              copies == 1 ? band_out.pitch * band.rows() : row_bytes, nullptr, &e);
      events.compute.push_back(e);
    }
  }

  if (zero_copy) {
    // Behind the kernels on their queue; moves nothing where memory is shared.
    for (const Read& read : stats_reads) {
      cl::Event e;
      queue.enqueueReadBuffer(read.buffer, CL_FALSE, read.offset, read.bytes, read.host, nullptr,
                              &e);
      events.download.push_back(e);
    }
    if (computes_in_host_pointer(device.info())) {
      // No map: a marker behind the band's commands is what the frame waits for. (Its events
      // alone would miss commands a filter put on BandContext::queue() without one, which the
      // map waited for: the Feeding tests' copies, on the GPU machine's PoCL.)
      cl::Event e;
      queue.enqueueMarkerWithWaitList(nullptr, &e);
      events.download.push_back(e);
      return;
    }
    // Mapping makes the band's rows visible to the host by the rules of OpenCL; for devices
    // that share the host's memory it moves nothing.
    cl::Event e;
    const cl::Buffer band_sub = band_out.buffer;
    void* mapped =
        queue.enqueueMapBuffer(band_sub, CL_FALSE, CL_MAP_READ, 0, band_bytes, nullptr, &e);
    events.download.push_back(e);
    after.push_back([&queue, band_sub, mapped] { queue.enqueueUnmapMemObject(band_sub, mapped); });
  } else {
    // On its own queue, once this band's last kernel or copy is done (its queue runs in
    // order), so that it overlaps the kernels of the next frame.
    std::vector<cl::Event> computed(1);
    if (events.compute.empty()) {
      queue.enqueueMarkerWithWaitList(nullptr, &computed[0]);
    } else {
      computed[0] = events.compute.back();
    }
    cl::Event e;
    device.download_queue().enqueueReadBuffer(band_out.buffer, CL_FALSE, 0, band_bytes,
                                              output.row(band_out.first_row), &computed, &e);
    events.download.push_back(e);
    // The statistics behind it, into pinned memory. On the kernel queue they waited for the
    // copy engine behind the frame before's download and held up the next kernels (H100
    // stream: 0.26 ms a frame against 0.19 here; a fourth queue of their own gave 0.19 too).
    for (const Read& read : stats_reads) {
      device.download_queue().enqueueReadBuffer(read.buffer, CL_FALSE, read.offset, read.bytes,
                                                read.host, nullptr, &e);
      events.download.push_back(e);
    }
  }
}

}  // namespace tandem::detail
