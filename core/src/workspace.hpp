#pragma once
// Per-device state kept between frames: scratch images and kernel objects.
#include <map>
#include <string>
#include <tuple>

#include "tandem/filter.hpp"

namespace tandem::detail {

class Workspace {
 public:
  /// A buffer of at least `bytes`, kept under (owner, slot) and grown when too small.
  cl::Buffer buffer(const cl::Context& context, const void* owner, int slot, std::size_t bytes);
  cl::Kernel kernel(const cl::Program& program, const std::string& name);

 private:
  struct Scratch {
    cl::Buffer buffer;
    std::size_t bytes = 0;
  };
  std::map<std::pair<const void*, int>, Scratch> scratch_;
  std::map<std::pair<cl_program, std::string>, cl::Kernel> kernels_;
};

}  // namespace tandem::detail
