// Fuzz target: the video reader (tandem::VideoReader on a file: FFmpeg's probing, any demuxer and
// decoder it picks, and tandem's accounting of damaged, lost and truncated frames), reading with
// on_error=skip and with the other streams' packets kept, as the command line copies them.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "input_file.hpp"
#include "tandem/error.hpp"
#include "tandem/video_io.hpp"

namespace {

// Enough frames to pass key frames and damage; pictures up to 1 Mpx (a header may claim more:
// what that costs is a question of limits, not of memory safety).
constexpr std::int64_t kMaxFrames = 32;
constexpr long long kMaxPixels = 1 << 20;

void read_all(const std::filesystem::path& path, tandem::OnDecodeError on_error) {
  // One decoder thread: a finding replays the same way.
  tandem::VideoReader reader(
      path, {.max_frames = kMaxFrames, .on_error = on_error, .keep_packets = true, .threads = 1});
  const tandem::VideoInfo& info = reader.info();
  if (info.width <= 0 || info.height <= 0) std::abort();  // the reader promises a size
  if (static_cast<long long>(info.width) * info.height > kMaxPixels) return;
  tandem::Frame frame;
  std::int64_t pts = 0;
  std::int64_t last = 0;
  while (reader.read(frame, pts)) {
    if (reader.frames_read() > 1 && pts <= last) std::abort();  // timestamps strictly increase
    last = pts;
    reader.take_packets();
  }
  if (reader.frames_read() > kMaxFrames) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static tandem::fuzz::InputFile file("video");
  const auto& path = file.write(data, size);
  for (const auto on_error : {tandem::OnDecodeError::skip, tandem::OnDecodeError::stop}) {
    try {
      read_all(path, on_error);
    } catch (const tandem::Error&) {
    }
  }
  file.remove();
  return 0;
}
