// tandem-bench's --dump-binaries: every program as the driver built it, written to a directory
// by case and device (binary_dump.cpp).
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tandem/tandem.hpp"

namespace tandem::bench {

// ---- Program binaries (--dump-binaries) ------------------------------------------------------

// The library keeps the programs it builds to itself, but its disk cache holds each one as a
// 32-byte header (magic "TNDMPRG1", key, size, checksum) followed by the driver's
// CL_PROGRAM_BINARIES. So the bench points the process's cache at a fresh temporary directory
// (TANDEM_CACHE_DIR, set before the first program is built; every program is then built from
// source in the warm-up) and takes the entries each case adds, by case and device. A program an
// earlier case built on the same device is found in memory and adds no entry.
class BinaryDump {
 public:
  struct File {
    std::string name, what, device, device_name, format;
    std::size_t bytes = 0;
  };

  explicit BinaryDump(std::filesystem::path dir);
  ~BinaryDump();
  BinaryDump(const BinaryDump&) = delete;
  BinaryDump& operator=(const BinaryDump&) = delete;

  // Writes the cache entries added since the last call as programs of `what` on `device`.
  void take(const std::string& what, const tandem::DeviceInfo& device);

  // A program the bench built itself (the copy kernels).
  void add(const std::string& what, const tandem::DeviceInfo& device, const cl::Program& program);

  // index.tsv: one line per file written, with the case and the device it was built for.
  void write_index() const;

  const std::filesystem::path& dir() const { return dir_; }
  const std::vector<File>& files() const { return files_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  void write(const std::string& what, const tandem::DeviceInfo& device,
             std::vector<unsigned char> binary);

  std::filesystem::path dir_, cache_;
  std::set<std::string> seen_;
  std::map<std::string, int> numbers_;
  std::vector<File> files_;
  std::vector<std::string> warnings_;
};

}  // namespace tandem::bench
