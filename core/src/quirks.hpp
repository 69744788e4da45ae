#pragma once
// Known driver behaviours tandem works around, named in one place.
#include <string_view>

#include "tandem/device.hpp"

namespace tandem::detail {

/// PoCL's "basic" CPU device runs each kernel inside clEnqueueNDRangeKernel on the calling
/// thread (seen with PoCL 3.1): devices enqueued after it would only start once it finished,
/// so it is enqueued last.
inline bool runs_kernels_at_enqueue(const DeviceInfo& d) {
  return d.platform.find("Portable Computing Language") != std::string_view::npos &&
         std::string_view(d.name).starts_with("basic");
}

/// PoCL compiles OpenCL C with clang for its CPU devices, whose __builtin_nontemporal_store
/// becomes the CPU's streaming stores.
inline bool has_nontemporal_stores(const DeviceInfo& d) {
  return d.platform.find("Portable Computing Language") != std::string_view::npos &&
         d.type == DeviceType::cpu;
}

}  // namespace tandem::detail
