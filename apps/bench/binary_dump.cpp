// tandem-bench's --dump-binaries (binary_dump.hpp).
#include "binary_dump.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <utility>

namespace tandem::bench {

namespace {

// Lower-case letters and digits of `text`, every other run of characters one '-'.
std::string slug(const std::string& text) {
  std::string s;
  for (unsigned char c : text) {
    if (std::isalnum(c)) {
      s += static_cast<char>(std::tolower(c));
    } else if (!s.empty() && s.back() != '-') {
      s += '-';
    }
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s.empty() ? "program" : s;
}

// What a driver's binary is, from its first bytes: "ptx", "elf", "llvm-bitcode", "poclbin", or
// the bytes.
std::string binary_format(const std::vector<unsigned char>& b) {
  const std::string head(
      b.begin(), b.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(b.size(), 4096)));
  if (head.find(".version ") != std::string::npos && head.find(".target ") != std::string::npos)
    return "ptx";
  if (head.rfind("\177ELF", 0) == 0) return "elf";
  if (head.rfind("BC\xc0\xde", 0) == 0) return "llvm-bitcode";
  if (head.rfind("poclbin", 0) == 0) return "poclbin";  // PoCL: bitcode and per-kernel .so
  std::string shown;
  for (std::size_t i = 0; i < std::min<std::size_t>(head.size(), 8); ++i)
    shown += std::isprint(static_cast<unsigned char>(head[i])) ? head[i] : '.';
  return "unknown, starts \"" + shown + "\"";
}

}  // namespace

BinaryDump::BinaryDump(std::filesystem::path dir) : dir_(std::move(dir)) {
  std::filesystem::create_directories(dir_);
  // Files a previous dump listed are ours to replace; nothing else in DIR is touched.
  std::ifstream index(dir_ / "index.tsv");
  std::string line;
  std::getline(index, line);  // the column names
  while (std::getline(index, line)) {
    const std::string name = line.substr(0, line.find('\t'));
    if (!name.empty() && name.find('/') == std::string::npos) {
      std::error_code ec;
      std::filesystem::remove(dir_ / name, ec);
    }
  }
  std::random_device rd;
  cache_ = std::filesystem::temp_directory_path() /
           ("tandem-bench-cache-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
  std::filesystem::create_directories(cache_);
  ::unsetenv("TANDEM_CACHE");
  ::setenv("TANDEM_CACHE_DIR", cache_.c_str(), 1);
  if (tandem::ProgramCache::global().directory() != cache_) {
    throw tandem::Error(
        "--dump-binaries: the program cache was opened before the bench could "
        "point it at " +
        cache_.string());
  }
}

BinaryDump::~BinaryDump() {
  std::error_code ec;
  std::filesystem::remove_all(cache_, ec);
}

void BinaryDump::take(const std::string& what, const tandem::DeviceInfo& device) {
  std::vector<std::filesystem::path> added;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(cache_ / "programs", ec)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".bin" && name.find(".tmp.") == std::string::npos &&
        seen_.insert(name).second) {
      added.push_back(e.path());
    }
  }
  // In the order they were built.
  std::sort(added.begin(), added.end(), [](const auto& a, const auto& b) {
    std::error_code e1, e2;
    return std::filesystem::last_write_time(a, e1) < std::filesystem::last_write_time(b, e2);
  });
  for (const auto& path : added) {
    std::ifstream in(path, std::ios::binary);
    std::vector<unsigned char> entry((std::istreambuf_iterator<char>(in)),
                                     std::istreambuf_iterator<char>());
    std::uint64_t size = 0;
    if (entry.size() >= 32) std::memcpy(&size, entry.data() + 16, sizeof size);
    if (entry.size() < 32 || std::memcmp(entry.data(), "TNDMPRG1", 8) != 0 ||
        size != entry.size() - 32) {
      warnings_.push_back("cache entry " + path.filename().string() + " (" + what + ", " +
                          device.id +
                          ") is not laid out as expected (magic TNDMPRG1, key, "
                          "size, checksum): not written");
      continue;
    }
    write(what, device, {entry.begin() + 32, entry.end()});
  }
}

void BinaryDump::add(const std::string& what, const tandem::DeviceInfo& device,
                     const cl::Program& program) {
  const auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
  if (binaries.empty() || binaries[0].empty()) {
    warnings_.push_back(what + " on " + device.id + ": the driver returned no binary");
    return;
  }
  write(what, device, binaries[0]);
}

void BinaryDump::write_index() const {
  std::ofstream out(dir_ / "index.tsv");
  out << "file\tcase\tdevice\tdevice_name\tbytes\tformat\n";
  for (const File& f : files_) {
    out << f.name << '\t' << f.what << '\t' << f.device << '\t' << f.device_name << '\t' << f.bytes
        << '\t' << f.format << '\n';
  }
  if (!out.flush()) throw tandem::Error("cannot write " + (dir_ / "index.tsv").string());
}

void BinaryDump::write(const std::string& what, const tandem::DeviceInfo& device,
                       std::vector<unsigned char> binary) {
  const std::string format = binary_format(binary);
  if (format == "ptx") {
    while (!binary.empty() && binary.back() == 0) binary.pop_back();  // C string's NUL
  }
  const std::string stem = slug(what) + "_dev" + device.id;
  const std::string name =
      stem + "_" + std::to_string(++numbers_[stem]) + (format == "ptx" ? ".ptx" : ".bin");
  std::ofstream out(dir_ / name, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(binary.data()),
            static_cast<std::streamsize>(binary.size()));
  if (!out.flush()) throw tandem::Error("cannot write " + (dir_ / name).string());
  files_.push_back({name, what, device.id, device.name, format, binary.size()});
}

}  // namespace tandem::bench
