#include "kernel_sources.hpp"

#include <map>
#include <mutex>
#include <string>

#include "tandem/error.hpp"
#include "tandem/user_filter.hpp"

namespace tandem {
namespace {

struct Registered {
  std::mutex mutex;
  // Nothing is ever replaced or erased, so the views lookups hand out stay valid.
  std::map<std::string, std::string, std::less<>> sources;
};

Registered& registered() {
  static Registered r;
  return r;
}

const detail::KernelSource* find_embedded(std::string_view name) {
  for (const auto& s : detail::embedded_kernel_sources()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace

detail::KernelSource detail::find_kernel_source(std::string_view name) {
  {
    Registered& r = registered();
    std::lock_guard lock(r.mutex);
    if (auto it = r.sources.find(name); it != r.sources.end()) return {it->first, it->second, {}};
  }
  if (const KernelSource* s = find_embedded(name)) return *s;
  throw Error("no OpenCL source named '" + std::string(name) + "' is embedded or registered");
}

void register_kernel_source(std::string name, std::string source) {
  if (name.empty()) throw Error("an OpenCL source needs a name");
  if (find_embedded(name)) {
    throw Error("an OpenCL source named '" + name + "' is built into tandem");
  }
  Registered& r = registered();
  std::lock_guard lock(r.mutex);
  if (r.sources.count(name)) {
    throw Error("an OpenCL source named '" + name + "' is already registered");
  }
  r.sources.emplace(std::move(name), std::move(source));
}

}  // namespace tandem
