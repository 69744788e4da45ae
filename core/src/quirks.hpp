#pragma once
// Known driver behaviours tandem works around, named in one place.
#include <string_view>

#include "tandem/device.hpp"

namespace tandem::detail {

/// Devices of PoCL's platform.
inline bool is_pocl(const DeviceInfo& d) {
  return d.platform.find("Portable Computing Language") != std::string_view::npos;
}

/// PoCL's "basic" CPU device runs each kernel inside clEnqueueNDRangeKernel on the calling
/// thread (seen with PoCL 3.1): devices enqueued after it would only start once it finished,
/// so it is enqueued last.
inline bool runs_kernels_at_enqueue(const DeviceInfo& d) {
  return is_pocl(d) && std::string_view(d.name).starts_with("basic");
}

/// PoCL compiles OpenCL C with clang for its CPU devices, whose __builtin_nontemporal_store
/// becomes the CPU's streaming stores.
inline bool has_nontemporal_stores(const DeviceInfo& d) {
  return is_pocl(d) && d.type == DeviceType::cpu;
}

/// PoCL's CPU devices compute in the host's own pointer of a CL_MEM_USE_HOST_PTR buffer, and
/// their maps and unmaps of it copy nothing (PoCL's clCreateBuffer keeps the host pointer,
/// aligned or not, and its common driver makes it the device's memory; a map whose pointer is
/// the device's skips its copy: PoCL 3.1 and later). The calls still cost the host: two maps
/// and two unmaps a frame, 11-12 us each on a 2-core VM, where leaving them out takes
/// 0.04-0.05 ms off a frame of crop, pad, hflip or scale
/// (bench-results/2026-11-29-vm-s34-pocl-without-maps.txt). There the wait for a frame's last
/// command is what makes its rows the host's.
inline bool computes_in_host_pointer(const DeviceInfo& d) {
  return is_pocl(d) && d.type == DeviceType::cpu;
}

/// NVIDIA's GPUs (its OpenCL platform has no other devices).
inline bool is_nvidia_gpu(const DeviceInfo& d) {
  return d.type == DeviceType::gpu && d.vendor.find("NVIDIA") != std::string_view::npos;
}

/// NVIDIA's GPUs run work-items in warps of 32 consecutive ones, whose registers inline PTX
/// can exchange (shfl.sync): NVIDIA's OpenCL has no sub-group functions (no cl_khr_subgroups)
/// but compiles asm(). Kernels see it as TANDEM_WARP_SHUFFLES.
inline bool has_warp_shuffles(const DeviceInfo& d) {
  return is_nvidia_gpu(d);
}

/// NVIDIA's OpenCL: devices of one context contend inside the driver when their threads
/// enqueue at once (two H200s of one context streamed the 1080p light graph at 0.155-0.165 ms a
/// frame so, against 0.131-0.138 enqueuing one after the other), and one after the other the
/// second GPU of a frame's bands started a whole band's enqueue late (its fixed cost a band
/// 0.08-0.22 ms, the first's 0.03). With a
/// context each, both enqueue at once and neither waits: H200 pair, 2026-11-30, bands one 1080p
/// frame at a time, heavy graph 1.43-1.55x one GPU against 1.38-1.47x, whole frames of the light
/// graph from two threads 0.097-0.098 ms against 0.119-0.132
/// (bench-results/2026-11-30-h200x2-s43-contexts.txt). Each such GPU gets a context of its own
/// (DeviceSet::open()).
inline bool wants_own_context(const DeviceInfo& d) {
  return is_nvidia_gpu(d);
}

}  // namespace tandem::detail
