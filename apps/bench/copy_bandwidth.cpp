// tandem-bench's copy bandwidth (copy_bandwidth.hpp).
#include "copy_bandwidth.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

#include "quirks.hpp"

namespace tandem::bench {

namespace {

// A copy in device memory bounds what a filter that reads its frame once and writes it once can
// reach. One 16-byte element per work-item, as integers and as floats (the two ways the filters
// load pixels), next to the driver's own clEnqueueCopyBuffer; where kernels may store without
// reading the line first (TANDEM_STREAM_STORE16, PoCL's CPU devices), a copy of 64-byte lines
// so stored too, as crop's output is.
constexpr const char* kCopySource = R"CL(
__kernel void copy_uint4(__global const uint4* restrict src, __global uint4* restrict dst,
                         uint n) {
  const uint i = (uint)get_global_id(0);
  if (i < n) dst[i] = src[i];
}
__kernel void copy_float4(__global const float4* restrict src, __global float4* restrict dst,
                          uint n) {
  const uint i = (uint)get_global_id(0);
  if (i < n) dst[i] = src[i];
}
#ifdef STREAM_STORES
__kernel void copy_uint16_streamed(__global const uint16* restrict src,
                                   __global uint16* restrict dst, uint n) {
  const uint i = (uint)get_global_id(0);
  if (i < n) __builtin_nontemporal_store(src[i], dst + i);
}
#endif
)CL";

double event_ms(const cl::Event& e) {
  return static_cast<double>(e.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                             e.getProfilingInfo<CL_PROFILING_COMMAND_START>()) *
         1e-6;
}

}  // namespace

cl::Program build_copy_program(tandem::Device& device) {
  cl::Program program(device.context(), std::string(kCopySource));
  try {
    program.build({device.cl_device()},
                  tandem::detail::has_nontemporal_stores(device.info()) ? "-DSTREAM_STORES" : "");
  } catch (const cl::Error& e) {
    std::string log;
    try {
      log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device.cl_device());
    } catch (const cl::Error&) {
    }
    throw tandem::Error(e.err(), e.what(),
                        "building tandem-bench's copy kernels for " + device.info().name, log);
  }
  return program;
}

CopyRow measure_copy(tandem::Device& device, const cl::Program& program, std::size_t bytes,
                     int warmup, int repeats) {
  const std::size_t size = (bytes + 63) / 64 * 64;
  cl::CommandQueue& queue = device.queue();
  cl::Buffer src(device.context(), CL_MEM_READ_WRITE, size);
  cl::Buffer dst(device.context(), CL_MEM_READ_WRITE, size);
  queue.enqueueFillBuffer(src, cl_uint{0x5a3c96e1}, 0, size);
  queue.enqueueFillBuffer(dst, cl_uint{0}, 0, size);
  queue.finish();
  CopyRow row{device_label(device.info()), "", size, {}, NAN};
  auto time = [&](const char* name, const std::function<cl::Event()>& copy) {
    for (int i = 0; i < warmup; ++i) copy().wait();
    std::vector<double> ms;
    for (int i = 0; i < repeats; ++i) {
      const cl::Event e = copy();
      e.wait();
      ms.push_back(event_ms(e));
    }
    CopyMethod m{name, summarize(ms)};
    m.gbps = gb_per_s(2.0 * static_cast<double>(size), m.ms.median);
    if (std::isnan(row.gbps) || m.gbps > row.gbps) row.gbps = m.gbps;
    row.methods.push_back(m);
  };
  std::vector<std::pair<std::string, std::size_t>> kernels{{"uint4", 16}, {"float4", 16}};
  if (tandem::detail::has_nontemporal_stores(device.info())) {
    kernels.emplace_back("uint16 streamed", 64);
  }
  for (const auto& [name, element] : kernels) {
    const std::size_t elements = size / element;
    std::string kernel_name = "copy_" + name;
    std::replace(kernel_name.begin(), kernel_name.end(), ' ', '_');
    cl::Kernel kernel(program, kernel_name.c_str());
    kernel.setArg(0, src);
    kernel.setArg(1, dst);
    kernel.setArg(2, static_cast<cl_uint>(elements));
    const std::size_t local = std::min<std::size_t>(
        256, kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device.cl_device()));
    const std::size_t global = (elements + local - 1) / local * local;
    time(name.c_str(), [&] {
      cl::Event e;
      queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(global), cl::NDRange(local),
                                 nullptr, &e);
      return e;
    });
  }
  time("copy_buffer", [&] {
    cl::Event e;
    queue.enqueueCopyBuffer(src, dst, 0, 0, size, nullptr, &e);
    return e;
  });
  return row;
}

}  // namespace tandem::bench
