#pragma once
// Built OpenCL programs, cached in memory per device and on disk under a hash of source, build
// options, platform, device name and driver version (darktable, Boost.Compute).
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include <CL/opencl.hpp>

namespace tandem {

class Device;

class ProgramCache {
 public:
  struct Stats {
    int memory_hits = 0;
    int disk_hits = 0;
    int builds = 0;
    int rejected = 0;  ///< disk entries found truncated or corrupt, rebuilt
  };

  /// `directory` empty disables the disk cache.
  explicit ProgramCache(std::filesystem::path directory);
  /// The process-wide cache: $TANDEM_CACHE_DIR, else $XDG_CACHE_HOME/tandem, else
  /// ~/.cache/tandem; disabled on disk when TANDEM_CACHE=0.
  static ProgramCache& global();
  /// The directory the global cache uses (empty when disabled).
  static std::filesystem::path default_directory();

  /// The program for `device` built from `source` with `options` (kept in memory by `device`). Throws Error with the build
  /// log when the build fails; `what` names the program in messages.
  cl::Program get(Device& device, const std::string& source, const std::string& options,
                  const std::string& what);
  /// The disk file that holds (or would hold) the program.
  std::filesystem::path entry_path(const Device& device, const std::string& source,
                                   const std::string& options) const;
  Stats stats() const;
  /// Options appended to every build (experiments such as "-cl-fast-relaxed-math").
  void set_extra_options(std::string options);
  std::string extra_options() const;
  const std::filesystem::path& directory() const { return directory_; }

 private:
  std::filesystem::path directory_;
  std::string extra_options_;
  std::uint64_t id_;  // tells apart the caches' programs kept by a Device
  mutable std::mutex mutex_;
  Stats stats_;
};

struct DeviceInfo;

/// The key of a program's cache entry: a hash of its source, its build options and the
/// platform, device name, driver and device version it is built for.
std::uint64_t program_cache_key(const DeviceInfo& device, std::string_view source,
                                std::string_view options);

/// 64-bit FNV-1a, the stable hash used for cache keys.
std::uint64_t fnv1a64(std::string_view data, std::uint64_t seed = 0xcbf29ce484222325ull);

}  // namespace tandem
