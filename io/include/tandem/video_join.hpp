#pragma once
// Parts of a video, filtered segment by segment (video_segments.hpp), joined into one file by
// stream copy: the video packets of the parts in the order of their timestamps, and the other
// streams (audio, subtitles, data) taken once, whole, from the input the parts were cut from,
// so that nothing drifts at the joins:
//
//   join_segments({"part-0.mkv", "part-1.mkv"}, "out.mkv", {.streams_from = "in.mp4"});
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tandem {

struct JoinOptions {
  /// The input the parts were cut from: its streams besides the video are copied from it, and
  /// the parts must hold every one of its frames, none twice. Empty: the video alone, and the
  /// parts only must not overlap.
  std::filesystem::path streams_from;
  /// Kinds of streams_from's streams left out (FFmpeg's -an, -sn, -dn).
  bool no_audio = false, no_subtitles = false, no_data = false;
  /// Set (from a signal handler, say) to stop: nothing is left at the output.
  const std::atomic<bool>* stop = nullptr;
};

struct JoinStats {
  std::int64_t frames = 0;  ///< video packets written
  /// One line per stream written besides the video: "audio 1 (aac, eng)".
  std::vector<std::string> streams;
  bool stopped = false;  ///< by options.stop; the output was not written
};

/// Writes `output` (its container chosen by its extension) from `parts`, given in any order.
/// The file is written to a hidden temporary file beside the output and renamed into place at
/// the end, so a failure leaves nothing there. Throws Error naming the part and the problem: a
/// part that is not a video, parts whose video differs (codec, size, pixel format, encoder
/// settings), parts that overlap, frames of streams_from that no part holds (a part left out),
/// a stream the container cannot hold.
JoinStats join_segments(std::vector<std::filesystem::path> parts,
                        const std::filesystem::path& output, const JoinOptions& options = {});

}  // namespace tandem
