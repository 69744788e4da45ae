#include "tandem/program_cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>

#include "tandem/device.hpp"
#include "tandem/error.hpp"

namespace tandem {
namespace {

constexpr std::array<char, 8> kMagic = {'T', 'N', 'D', 'M', 'P', 'R', 'G', '1'};

struct EntryHeader {
  std::array<char, 8> magic;
  std::uint64_t key;
  std::uint64_t size;
  std::uint64_t checksum;
};

}  // namespace

std::uint64_t program_cache_key(const DeviceInfo& d, std::string_view source,
                                std::string_view options) {
  std::uint64_t h = fnv1a64(source);
  for (std::string_view part : {options, std::string_view(d.platform), std::string_view(d.name),
                                 std::string_view(d.driver_version),
                                 std::string_view(d.device_version)}) {
    h = fnv1a64(std::string_view("\x1f", 1), h);
    h = fnv1a64(part, h);
  }
  return h;
}

namespace {

std::string hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// The cached binary for `key`, or empty when missing, truncated or corrupt.
std::vector<unsigned char> read_entry(const std::filesystem::path& path, std::uint64_t key,
                                      bool& corrupt) {
  corrupt = false;
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::error_code ec;
  const std::uintmax_t file_size = std::filesystem::file_size(path, ec);
  EntryHeader header{};
  std::vector<unsigned char> binary;
  // The size it claims is checked against the file's before anything is allocated.
  if (!ec && file_size >= sizeof header &&
      in.read(reinterpret_cast<char*>(&header), sizeof header) && header.magic == kMagic &&
      header.key == key && header.size > 0 && header.size == file_size - sizeof header) {
    binary.resize(header.size);
    if (in.read(reinterpret_cast<char*>(binary.data()), static_cast<std::streamsize>(binary.size())) &&
        in.peek() == std::char_traits<char>::eof() &&
        fnv1a64({reinterpret_cast<const char*>(binary.data()), binary.size()}) ==
            header.checksum) {
      return binary;
    }
  }
  corrupt = true;
  return {};
}

void write_entry(const std::filesystem::path& path, std::uint64_t key,
                 const std::vector<unsigned char>& binary) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  // Write beside the final name, then rename: readers see a whole entry or none.
  std::random_device rd;
  const auto tmp = path.string() + ".tmp." + std::to_string(::getpid()) + "." + hex(rd());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;  // an unwritable cache only costs a rebuild next time
    EntryHeader header{kMagic, key, binary.size(),
                       fnv1a64({reinterpret_cast<const char*>(binary.data()), binary.size()})};
    out.write(reinterpret_cast<const char*>(&header), sizeof header);
    out.write(reinterpret_cast<const char*>(binary.data()),
              static_cast<std::streamsize>(binary.size()));
    if (!out.flush()) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

// Locks on the cache's builds, by stripes of keys: builds of one program by several processes
// at once (ctest -j, parallel jobs on an empty cache) raced in PoCL's own kernel cache, which
// failed the build ("Device ... failed to build the program") or aborted in PoCL
// (pocl_binary.c: "Assertion `len > 0' failed"): PoCL 3.1 here, 12 test processes at once on an
// empty cache, 5 failed builds and 1 abort in 84 processes. The others wait, then load the
// program from disk.
constexpr std::uint64_t kLockStripes = 256;

// An exclusive flock() on `path` while it lives; none where the file cannot be made (the cache
// is then unwritable too, and the build goes ahead unlocked).
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& path) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    while (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

std::uint64_t fnv1a64(std::string_view data, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

ProgramCache::ProgramCache(std::filesystem::path directory) : directory_(std::move(directory)) {
  static std::atomic<std::uint64_t> next{0};
  id_ = ++next;
}

std::filesystem::path ProgramCache::default_directory() {
  const char* enabled = std::getenv("TANDEM_CACHE");
  if (enabled && std::string_view(enabled) == "0") return {};
  if (const char* dir = std::getenv("TANDEM_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return std::filesystem::path(xdg) / "tandem";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::filesystem::path(home) / ".cache" / "tandem";
  }
  return {};
}

ProgramCache& ProgramCache::global() {
  static ProgramCache cache(default_directory());
  return cache;
}

std::filesystem::path ProgramCache::entry_path(const Device& device, const std::string& source,
                                               const std::string& options) const {
  if (directory_.empty()) return {};
  return directory_ / "programs" / (hex(program_cache_key(device.info(), source, options)) + ".bin");
}

ProgramCache::Stats ProgramCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void ProgramCache::set_extra_options(std::string options) {
  std::lock_guard lock(mutex_);
  extra_options_ = std::move(options);
}

std::string ProgramCache::extra_options() const {
  std::lock_guard lock(mutex_);
  return extra_options_;
}

cl::Program ProgramCache::get(Device& device, const std::string& source,
                              const std::string& base_options, const std::string& what) {
  std::unique_lock lock(mutex_);
  const std::string options =
      extra_options_.empty() ? base_options : base_options + " " + extra_options_;
  lock.unlock();
  const std::uint64_t key = program_cache_key(device.info(), source, options);
  lock.lock();
  auto& programs = device.programs_;
  const auto memory_key = std::make_pair(id_, key);
  if (auto it = programs.find(memory_key); it != programs.end()) {
    ++stats_.memory_hits;
    return it->second;
  }
  const std::string doing = "building " + what + " for " + device.info().name;
  const auto path = entry_path(device, source, options);

  std::optional<FileLock> build_lock;
  if (!path.empty()) {
    build_lock.emplace(directory_ / "locks" / (hex(key % kLockStripes) + ".lock"));
    bool corrupt = false;
    auto binary = read_entry(path, key, corrupt);
    if (!binary.empty()) {
      try {
        cl::Program program(device.context(), {device.cl_device()}, {binary});
        program.build({device.cl_device()}, options.c_str());
        ++stats_.disk_hits;
        return programs[memory_key] = program;
      } catch (const cl::Error&) {
        corrupt = true;  // the driver refused the binary: rebuild from source below
      }
    }
    if (corrupt) ++stats_.rejected;
  }

  cl::Program program;
  try {
    program = cl::Program(device.context(), source);
    program.build({device.cl_device()}, options.c_str());
  } catch (const cl::Error& e) {
    std::string log;
    try {
      log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device.cl_device());
    } catch (const cl::Error&) {
    }
    throw Error(e.err(), e.what(), doing, log);
  }
  ++stats_.builds;
  if (!path.empty()) {
    try {
      auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
      if (binaries.size() == 1 && !binaries[0].empty()) write_entry(path, key, binaries[0]);
    } catch (const cl::Error&) {
      // Some drivers cannot return binaries; the program still works, uncached.
    }
  }
  return programs[memory_key] = program;
}

}  // namespace tandem
