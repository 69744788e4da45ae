#pragma once
// What filters read from files (lut3d's tables, overlay's pictures), kept by path while the
// file's size and time are unchanged: a graph is built (validated, lowered, shown in
// tandem-view) more than once, and each build makes its filters anew.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "tandem/error.hpp"

namespace tandem::file_cache {

/// What `read` made of the file at `path`, kept from an earlier call while the file is
/// unchanged. Throws Error for a file that cannot be read, or what `read` throws.
template <typename T>
std::shared_ptr<const T> load(
    const std::string& path,
    const std::function<std::shared_ptr<const T>(const std::string&)>& read) {
  namespace fs = std::filesystem;
  struct Kept {
    fs::file_time_type time;
    std::uintmax_t size = 0;
    std::shared_ptr<const T> value;
  };
  static std::mutex mutex;
  static std::map<std::string, Kept> kept;
  std::error_code ec;
  const fs::file_time_type time = fs::last_write_time(path, ec);
  const std::uintmax_t size = ec ? 0 : fs::file_size(path, ec);
  if (ec) throw Error("cannot read '" + path + "': " + ec.message());
  std::lock_guard lock(mutex);
  auto it = kept.find(path);
  if (it != kept.end() && it->second.time == time && it->second.size == size) {
    return it->second.value;
  }
  std::shared_ptr<const T> value = read(path);
  kept[path] = {time, size, value};
  return value;
}

/// A number that tells apart values read (BandContext::constant()'s version).
inline std::uint64_t next_version() {
  static std::atomic<std::uint64_t> counter{0};
  return ++counter;
}

}  // namespace tandem::file_cache
