#include "tandem/device.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <set>

#include "quirks.hpp"
#include "tandem/error.hpp"

namespace tandem {
namespace {

constexpr const char* kNoDriver =
    "no OpenCL device found: install an OpenCL driver (on Debian: apt-get install "
    "pocl-opencl-icd) and check with 'tandem devices'";

DeviceType type_of(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return DeviceType::gpu;
  if (t & CL_DEVICE_TYPE_CPU) return DeviceType::cpu;
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return DeviceType::accelerator;
  return DeviceType::other;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

std::string available_list(std::span<const DeviceInfo> available) {
  std::string list;
  for (const auto& d : available) {
    list += (list.empty() ? "" : ", ") + d.id + " " + std::string(to_string(d.type)) + " '" +
            d.name + "'";
  }
  return list.empty() ? "none" : list;
}

std::vector<std::pair<cl::Platform, std::vector<cl::Device>>> platforms_and_devices() {
  std::vector<cl::Platform> platforms;
  try {
    cl::Platform::get(&platforms);
  } catch (const cl::Error& e) {
    // The ICD loader reports CL_PLATFORM_NOT_FOUND_KHR when no driver is installed.
    throw Error(kNoDriver);
  }
  std::vector<std::pair<cl::Platform, std::vector<cl::Device>>> out;
  for (auto& p : platforms) {
    std::vector<cl::Device> devices;
    try {
      p.getDevices(CL_DEVICE_TYPE_ALL, &devices);
    } catch (const cl::Error&) {
      devices.clear();  // a platform without devices reports CL_DEVICE_NOT_FOUND
    }
    out.emplace_back(p, std::move(devices));
  }
  return out;
}

DeviceInfo describe(const cl::Platform& platform, const cl::Device& d, int p, int i) {
  DeviceInfo info;
  info.id = std::to_string(p) + "." + std::to_string(i);
  info.platform_index = p;
  info.device_index = i;
  info.type = type_of(d.getInfo<CL_DEVICE_TYPE>());
  info.name = trim(d.getInfo<CL_DEVICE_NAME>());
  info.platform = trim(platform.getInfo<CL_PLATFORM_NAME>());
  info.vendor = trim(d.getInfo<CL_DEVICE_VENDOR>());
  info.driver_version = trim(d.getInfo<CL_DRIVER_VERSION>());
  info.device_version = trim(d.getInfo<CL_DEVICE_VERSION>());
  info.compute_units = d.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
  info.global_memory = d.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
  info.base_address_alignment = d.getInfo<CL_DEVICE_MEM_BASE_ADDR_ALIGN>() / 8;  // bits
  info.max_work_group_size = d.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
  info.local_memory = d.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
  info.preferred_vector_width_char = d.getInfo<CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR>();
  info.preferred_vector_width_float = d.getInfo<CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT>();
  info.host_unified_memory = d.getInfo<CL_DEVICE_HOST_UNIFIED_MEMORY>() != CL_FALSE;
  return info;
}

// A CPU device that runs beside GPUs: a sub-device that leaves a core to the host thread and
// one to each GPU's driver, where the device can be partitioned and keeps at least two cores;
// the device itself otherwise. (H100 + PoCL on 16 cores, 4K saturation with a fifth of the rows
// on the CPU: 1.24 ms a frame with PoCL on every core, 1.11 with two left, GPU alone 1.28.)
cl::Device beside_gpus(cl::Device device, DeviceInfo& info, unsigned gpus) {
  const unsigned leave = 1 + gpus;
  if (info.type != DeviceType::cpu || gpus == 0 || info.compute_units < leave + 2) return device;
  const auto kinds = device.getInfo<CL_DEVICE_PARTITION_PROPERTIES>();
  if (std::find(kinds.begin(), kinds.end(), CL_DEVICE_PARTITION_BY_COUNTS) == kinds.end()) {
    return device;
  }
  const cl_device_partition_property counts[] = {
      CL_DEVICE_PARTITION_BY_COUNTS,
      static_cast<cl_device_partition_property>(info.compute_units - leave),
      CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
  std::vector<cl::Device> parts;
  try {
    device.createSubDevices(counts, &parts);
  } catch (const cl::Error&) {
    return device;  // a driver that lists the partition but refuses it: the whole device
  }
  if (parts.empty()) return device;
  info.cores_left_to_host = leave;
  info.compute_units = parts.front().getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
  return parts.front();
}

}  // namespace

std::string_view to_string(DeviceType type) {
  switch (type) {
    case DeviceType::cpu: return "cpu";
    case DeviceType::gpu: return "gpu";
    case DeviceType::accelerator: return "accelerator";
    default: return "other";
  }
}

std::vector<DeviceInfo> enumerate_devices() {
  std::vector<DeviceInfo> infos;
  try {
    const auto all = platforms_and_devices();
    for (std::size_t p = 0; p < all.size(); ++p) {
      for (std::size_t i = 0; i < all[p].second.size(); ++i) {
        infos.push_back(describe(all[p].first, all[p].second[i], static_cast<int>(p),
                                 static_cast<int>(i)));
      }
    }
  } catch (const cl::Error& e) {
    throw Error(e.err(), e.what(), "reading OpenCL device information");
  }
  if (infos.empty()) throw Error(kNoDriver);
  return infos;
}

std::vector<std::size_t> select_devices(std::string_view spec,
                                        std::span<const DeviceInfo> available) {
  std::vector<std::size_t> chosen;
  auto take = [&](std::size_t i) {
    if (std::find(chosen.begin(), chosen.end(), i) == chosen.end()) chosen.push_back(i);
  };
  auto fail = [&](const std::string& why) {
    throw Error("device selection '" + std::string(spec) + "': " + why +
                "; available: " + available_list(available));
  };
  if (trim(spec).empty()) fail("empty selection");

  std::size_t start = 0;
  while (start <= spec.size()) {
    std::size_t comma = spec.find(',', start);
    if (comma == std::string_view::npos) comma = spec.size();
    const std::string item = lower(trim(spec.substr(start, comma - start)));
    start = comma + 1;
    if (item.empty()) fail("empty item in the list");

    std::vector<std::size_t> matches;
    for (std::size_t i = 0; i < available.size(); ++i) {
      const DeviceInfo& d = available[i];
      const bool hit = item == "all" || item == to_string(d.type) || item == d.id;
      if (hit) matches.push_back(i);
    }
    const bool keyword = item == "all" || item == "cpu" || item == "gpu" ||
                         item == "accelerator" || item == "other";
    const bool id_like = !item.empty() && std::isdigit(static_cast<unsigned char>(item[0])) &&
                         item.find('.') != std::string::npos;
    if (matches.empty() && !keyword && !id_like) {
      for (std::size_t i = 0; i < available.size(); ++i) {
        const DeviceInfo& d = available[i];
        if (lower(d.name).find(item) != std::string::npos ||
            lower(d.platform).find(item) != std::string::npos) {
          matches.push_back(i);
        }
      }
      if (matches.size() > 1) {
        std::string which;
        for (auto i : matches) which += (which.empty() ? "" : ", ") + available[i].id;
        fail("'" + item + "' is ambiguous, it matches devices " + which +
             " (name them by id, or use 'all')");
      }
    }
    if (matches.empty()) fail("'" + item + "' matches no device");
    for (auto i : matches) take(i);
  }
  return chosen;
}

Device::Device(DeviceInfo info, cl::Device device, cl::Context context)
    : info_(std::move(info)),
      device_(std::move(device)),
      context_(std::move(context)),
      queue_(context_, device_, CL_QUEUE_PROFILING_ENABLE) {
  if (!info_.host_unified_memory) {
    upload_queue_ = cl::CommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE);
    download_queue_ = cl::CommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE);
  } else {
    upload_queue_ = download_queue_ = queue_;
  }
}

DeviceSet DeviceSet::open(std::string_view spec) {
  auto infos = enumerate_devices();
  const auto chosen = select_devices(spec, infos);
  DeviceSet set;
  try {
    auto all = platforms_and_devices();
    const auto gpus =
        static_cast<unsigned>(std::count_if(chosen.begin(), chosen.end(), [&](std::size_t i) {
          return infos[i].type == DeviceType::gpu;
        }));
    for (auto i : chosen) {
      cl::Device& d = all[infos[i].platform_index].second[infos[i].device_index];
      d = beside_gpus(d, infos[i], gpus);
    }
    // One context per platform, made from the explicit list of chosen devices of that platform,
    // and one for each device that wants its own (quirks.hpp). A context's key: its platform,
    // or -1 - the device's place in `chosen`.
    std::vector<int> keys, platforms, context_of(chosen.size());
    std::vector<std::vector<cl::Device>> members;
    for (std::size_t k = 0; k < chosen.size(); ++k) {
      const DeviceInfo& info = infos[chosen[k]];
      const int key =
          detail::wants_own_context(info) ? -1 - static_cast<int>(k) : info.platform_index;
      const auto at = std::find(keys.begin(), keys.end(), key);
      context_of[k] = static_cast<int>(at - keys.begin());
      if (at == keys.end()) {
        keys.push_back(key);
        platforms.push_back(info.platform_index);
        members.emplace_back();
      }
      members[context_of[k]].push_back(all[info.platform_index].second[info.device_index]);
    }
    std::vector<cl::Context> contexts;
    for (std::size_t c = 0; c < members.size(); ++c) {
      cl_context_properties props[] = {
          CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(all[platforms[c]].first()),
          0};
      contexts.emplace_back(members[c], props);
    }
    for (std::size_t k = 0; k < chosen.size(); ++k) {
      const auto& info = infos[chosen[k]];
      set.devices_.emplace_back(info, all[info.platform_index].second[info.device_index],
                                contexts[context_of[k]]);
      set.devices_.back().context_index_ = context_of[k];
    }
    set.context_count_ = static_cast<int>(contexts.size());
  } catch (const cl::Error& e) {
    throw Error(e.err(), e.what(), "opening OpenCL devices '" + std::string(spec) + "'");
  }
  return set;
}

std::size_t DeviceSet::row_alignment() const {
  std::size_t align = 64;
  for (const auto& d : devices_) align = std::lcm(align, std::max<std::size_t>(d.info().base_address_alignment, 1));
  return align;
}

HostAllocator DeviceSet::host_allocator() {
  for (Device& d : devices_) {
    if (d.info().host_unified_memory) continue;
    cl::Context context = d.context();
    cl::CommandQueue queue = d.queue();
    return [context, queue](std::size_t bytes) mutable -> std::shared_ptr<std::uint8_t> {
      try {
        cl::Buffer buffer(context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes);
        void* p = queue.enqueueMapBuffer(buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes);
        // The mapping lives as long as the frame; the buffer and queue are kept with it.
        return {static_cast<std::uint8_t*>(p), [buffer, queue](std::uint8_t* q) mutable {
                  try {
                    queue.enqueueUnmapMemObject(buffer, q);
                    queue.finish();
                  } catch (const cl::Error&) {
                    // Freeing at exit after the driver went away: nothing left to do.
                  }
                }};
      } catch (const cl::Error&) {
        return nullptr;  // no pinned memory to be had: plain memory works, only slower
      }
    };
  }
  return nullptr;
}

Frame DeviceSet::make_frame(int width, int height, PixelFormat format) {
  return Frame(width, height, format, row_alignment(), host_allocator());
}

std::string DeviceSet::key() const {
  std::string key;
  for (const auto& d : devices_) key += (key.empty() ? "" : ",") + d.info().id + ":" + d.info().name;
  return key;
}

}  // namespace tandem
