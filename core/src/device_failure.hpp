#pragma once
// A device that failed while enqueuing or running its share of a frame: the pipeline takes it
// out of the run and has the others redo that share.
#include <cstddef>
#include <string>

#include <CL/opencl.hpp>

#include "tandem/error.hpp"

namespace tandem::detail {

struct DeviceFailure {
  std::size_t device;
  Error error;
};

inline DeviceFailure failure(std::size_t device, const cl::Error& e, const std::string& doing) {
  return {device, Error(e.err(), e.what(), doing)};
}

}  // namespace tandem::detail
