#include "kernel_sources.hpp"

#include <deque>
#include <map>
#include <mutex>

#include "tandem/error.hpp"

namespace tandem::detail {
namespace {

struct Registered {
  std::mutex mutex;
  // Deque: stable addresses, since lookups hand out views into these strings.
  std::deque<std::pair<std::string, std::string>> storage;
  std::map<std::string, std::size_t, std::less<>> index;
};

Registered& registered() {
  static Registered r;
  return r;
}

}  // namespace

KernelSource find_kernel_source(std::string_view name) {
  {
    Registered& r = registered();
    std::lock_guard lock(r.mutex);
    if (auto it = r.index.find(name); it != r.index.end()) {
      const auto& [n, text] = r.storage[it->second];
      return {n, text, {}};
    }
  }
  for (const auto& s : embedded_kernel_sources()) {
    if (s.name == name) return s;
  }
  throw Error("no OpenCL source named '" + std::string(name) + "' is embedded or registered");
}

void register_kernel_source(std::string name, std::string source) {
  Registered& r = registered();
  std::lock_guard lock(r.mutex);
  r.storage.emplace_back(name, std::move(source));
  r.index[std::move(name)] = r.storage.size() - 1;
}

}  // namespace tandem::detail
