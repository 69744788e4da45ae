// tandem-bench's measure of a device's limit: the bandwidth of a copy in device memory, against
// which every filter's kernel time is reported (copy_bandwidth.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bench_support.hpp"

#include "tandem/tandem.hpp"

namespace tandem::bench {

// ---- The device's limit: copy bandwidth ------------------------------------------------------

struct CopyMethod {
  std::string name;   // uint4, float4, copy_buffer, uint16 streamed
  Summary ms;         // profiling-event time of one copy
  double gbps = NAN;  // (bytes read + bytes written) / median time
};

// One device's copy bandwidth on buffers of `bytes`: the best of the methods is its limit.
struct CopyRow {
  std::string device;  // label
  std::string frame;   // the pixel format of the frame whose size this is
  std::size_t bytes = 0;
  std::vector<CopyMethod> methods;
  double gbps = NAN;
};

// GB/s of moving `bytes` in `ms`; NaN (null in JSON) when no time was measured.
inline double gb_per_s(double bytes, double ms) {
  return ms > 0 ? bytes / (ms * 1e6) : NAN;
}

cl::Program build_copy_program(tandem::Device& device);

// Times each copy method between two buffers of `bytes` (rounded up to 64) in device memory:
// `warmup` untimed copies, then the median of `repeats`, each waited for on its own.
CopyRow measure_copy(tandem::Device& device, const cl::Program& program, std::size_t bytes,
                     int warmup, int repeats);

}  // namespace tandem::bench
