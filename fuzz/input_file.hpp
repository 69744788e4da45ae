#pragma once
// A fuzz input written to a file of this process, for readers that take a path (read_image,
// VideoReader): one file per process, written for each input and removed once it is read
// (libFuzzer may leave without running destructors).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace tandem::fuzz {

class InputFile {
 public:
  /// `name` ends the file name; no extension, so that readers go by the contents alone.
  explicit InputFile(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("tandem-fuzz-" + std::to_string(::getpid()) + "-" + name)) {}
  ~InputFile() { remove(); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  /// Replaces the file's contents with `data`.
  const std::filesystem::path& write(const std::uint8_t* data, std::size_t size) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (!f || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
      std::perror(path_.c_str());
      std::abort();  // the harness cannot work; not a finding
    }
    return path_;
  }
  const std::filesystem::path& path() const { return path_; }
  void remove() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }

 private:
  std::filesystem::path path_;
};

}  // namespace tandem::fuzz
