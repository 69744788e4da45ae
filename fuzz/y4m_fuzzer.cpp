// Fuzz target: the YUV4MPEG2 reader, as `tandem -i -` uses it: VideoReader("-") forces FFmpeg's
// yuv4mpegpipe demuxer on standard input (pipe:0), so every input goes through the y4m header
// and frame parsing rather than through format probing. Standard input is pointed at a file
// holding the input; FFmpeg's pipe protocol reads it as a stream either way (no seeking).
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "input_file.hpp"
#include "tandem/error.hpp"
#include "tandem/video_io.hpp"

namespace {

constexpr std::int64_t kMaxFrames = 32;
constexpr long long kMaxPixels = 1 << 20;

// Points standard input at `path` for the scope.
class StdinFrom {
 public:
  explicit StdinFrom(const std::filesystem::path& path) : saved_(::dup(0)) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (saved_ < 0 || fd < 0 || ::dup2(fd, 0) < 0) {
      std::perror("y4m fuzzer: standard input");
      std::abort();
    }
    ::close(fd);
  }
  ~StdinFrom() {
    ::dup2(saved_, 0);
    ::close(saved_);
  }
  StdinFrom(const StdinFrom&) = delete;
  StdinFrom& operator=(const StdinFrom&) = delete;

 private:
  int saved_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static tandem::fuzz::InputFile file("y4m");
  StdinFrom in(file.write(data, size));
  file.remove();  // standard input holds it open
  try {
    tandem::VideoReader reader(
        "-", {.max_frames = kMaxFrames, .on_error = tandem::OnDecodeError::skip, .threads = 1});
    const tandem::VideoInfo& info = reader.info();
    if (info.width <= 0 || info.height <= 0) std::abort();
    if (info.container != "yuv4mpegpipe") std::abort();
    if (static_cast<long long>(info.width) * info.height > kMaxPixels) return 0;
    tandem::Frame frame;
    std::int64_t pts = 0;
    while (reader.read(frame, pts)) {
    }
  } catch (const tandem::Error&) {
  }
  return 0;
}
