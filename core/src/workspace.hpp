#pragma once
// Per-device state kept between frames: scratch images, programs and kernel objects.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>

#include "tandem/filter.hpp"

namespace tandem::detail {

class Workspace {
 public:
  /// A buffer of at least `bytes`, kept under (owner, slot) and grown when too small.
  cl::Buffer buffer(const cl::Context& context, const void* owner, int slot, std::size_t bytes);
  /// A read-only buffer holding `bytes` of `data`, kept under (owner, slot) and made again
  /// when `version` changes.
  cl::Buffer constant(const cl::Context& context, const void* owner, int slot, const void* data,
                      std::size_t bytes, std::uint64_t version);
  cl::Kernel kernel(const cl::Program& program, const std::string& name);
  /// Host memory of at least `bytes`, kept under (owner, slot) and made by `allocate` (pinned
  /// memory, which a discrete GPU reads into without staging it) or, without one, plainly.
  std::uint8_t* host(const void* owner, int slot, std::size_t bytes, const HostAllocator& allocate);
  /// The program kept under `key`, made by `build` the first time it is asked for.
  cl::Program program(const std::string& key, const std::function<cl::Program()>& build);

 private:
  struct Scratch {
    cl::Buffer buffer;
    std::size_t bytes = 0;
  };
  struct Constant {
    cl::Buffer buffer;
    std::uint64_t version = 0;
  };
  struct Host {
    std::shared_ptr<std::uint8_t> memory;
    std::size_t bytes = 0;
  };
  std::map<std::pair<const void*, int>, Scratch> scratch_;
  std::map<std::pair<const void*, int>, Host> host_;
  std::map<std::pair<const void*, int>, Constant> constants_;
  std::map<std::pair<cl_program, std::string>, cl::Kernel> kernels_;
  std::unordered_map<std::string, cl::Program> programs_;
};

}  // namespace tandem::detail
