#pragma once
// OpenCL devices: enumeration, selection by a spec string, and the per-platform contexts (one each
// for NVIDIA's GPUs) with one in-order profiling queue per device.
#include <cstdint>
#include <map>
#include <utility>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <CL/opencl.hpp>

#include "tandem/frame.hpp"

namespace tandem {

enum class DeviceType { cpu, gpu, accelerator, other };
std::string_view to_string(DeviceType type);

/// What tandem knows of one OpenCL device, read once at enumeration.
struct DeviceInfo {
  std::string id;  ///< "P.D": platform index, device index within the platform
  int platform_index = 0;
  int device_index = 0;
  DeviceType type = DeviceType::other;
  std::string name;
  std::string platform;
  std::string vendor;
  std::string driver_version;
  std::string device_version;
  unsigned compute_units = 0;
  std::uint64_t global_memory = 0;         ///< bytes
  std::size_t base_address_alignment = 0;  ///< bytes (CL_DEVICE_MEM_BASE_ADDR_ALIGN / 8)
  std::size_t max_work_group_size = 0;
  std::size_t local_memory = 0;  ///< bytes of local memory a work-group may use
  unsigned preferred_vector_width_char = 0;
  unsigned preferred_vector_width_float = 0;
  bool host_unified_memory = false;  ///< shares memory with the host (CPU devices, iGPUs)
  /// Cores a CPU device leaves to the host in a DeviceSet with GPUs (compute_units is then its
  /// sub-device's): the thread that feeds each GPU would otherwise wait for a core.
  unsigned cores_left_to_host = 0;
};

/// Every device of every platform, in platform then device order. Throws Error if no OpenCL
/// platform or device exists (the message says to install a driver such as pocl-opencl-icd).
std::vector<DeviceInfo> enumerate_devices();

/// Indices into `available` selected by `spec`: "all", "cpu", "gpu", "accelerator", ids "0.1",
/// or case-insensitive name substrings, comma separated. Throws Error naming what was available
/// when the selection is empty, an item matches nothing, or a name matches several devices.
std::vector<std::size_t> select_devices(std::string_view spec,
                                        std::span<const DeviceInfo> available);

/// One selected device: its context (shared with the other selected devices of its platform,
/// but for NVIDIA's GPUs, which get one each: core/src/quirks.hpp) and its own in-order queue with
/// profiling enabled. A device with its own memory (a discrete GPU) has two more queues for copies,
/// so that a frame's upload and another's download can overlap the kernels of a third.
class Device {
 public:
  Device(DeviceInfo info, cl::Device device, cl::Context context);

  const DeviceInfo& info() const { return info_; }
  const cl::Device& cl_device() const { return device_; }
  const cl::Context& context() const { return context_; }
  cl::CommandQueue& queue() { return queue_; }
  /// Host-to-device copies; queue() itself on devices that share the host's memory.
  cl::CommandQueue& upload_queue() { return upload_queue_; }
  /// Device-to-host copies; queue() itself on devices that share the host's memory.
  cl::CommandQueue& download_queue() { return download_queue_; }
  /// Index of this device's context within its DeviceSet; devices with equal indices share it.
  int context_index() const { return context_index_; }

 private:
  friend class DeviceSet;
  friend class ProgramCache;
  DeviceInfo info_;
  cl::Device device_;
  cl::Context context_;
  cl::CommandQueue queue_;
  cl::CommandQueue upload_queue_;
  cl::CommandQueue download_queue_;
  int context_index_ = 0;
  // Programs built for this device in this context, by (ProgramCache id, key): they live as
  // long as the device, so closing a DeviceSet frees its contexts.
  std::map<std::pair<std::uint64_t, std::uint64_t>, cl::Program> programs_;
};

class ProgramCache;

/// The devices a run uses. Devices of one platform share one context, but for NVIDIA's GPUs,
/// which get one each.
class DeviceSet {
 public:
  /// Opens the devices selected by `spec` (see select_devices).
  static DeviceSet open(std::string_view spec = "all");

  std::span<Device> devices() { return devices_; }
  std::span<const Device> devices() const { return devices_; }
  std::size_t size() const { return devices_.size(); }
  Device& operator[](std::size_t i) { return devices_[i]; }
  const Device& operator[](std::size_t i) const { return devices_[i]; }
  /// Number of distinct contexts among the devices: one per platform, and one for each device
  /// whose driver serves it better alone (NVIDIA's GPUs, core/src/quirks.hpp).
  int context_count() const { return context_count_; }
  /// Least common multiple of 64 bytes and every device's base-address alignment: the row pitch
  /// granularity that makes every row start a valid sub-buffer origin on every device.
  std::size_t row_alignment() const;
  /// Memory for frames: pinned host memory of the first device that does not share the host's
  /// memory (a discrete GPU copies from it at full bus speed), or nullptr for plain memory.
  HostAllocator host_allocator();
  /// A frame with this set's row alignment and host allocator.
  Frame make_frame(int width, int height, PixelFormat format);
  /// "0.0,0.1" style list of the device ids, stable key for learned state.
  std::string key() const;

 private:
  std::vector<Device> devices_;
  int context_count_ = 0;
};

}  // namespace tandem
