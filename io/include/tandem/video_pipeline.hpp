#pragma once
// A whole video through a Pipeline: decode -> RGBA frame -> bands on the devices -> frame ->
// encode, as a TBB pipeline with a bounded number of frames in flight, so that while the devices
// process frame N, frame N+1 is decoded and uploaded and frame N-1 downloaded and encoded.
#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "tandem/pipeline.hpp"
#include "tandem/video_io.hpp"

namespace tandem {

/// A frame as it leaves process_video().
struct VideoFrameInfo {
  std::int64_t index = 0;  ///< 0, 1, 2, ... in output order
  std::int64_t pts = 0;    ///< its timestamp, in the input's time base (VideoInfo::time_base)
  const Frame* output = nullptr;  ///< the processed frame, valid during the call
  std::vector<double> split;      ///< fraction of its rows each device computed
};

struct VideoRunOptions {
  /// Frames in flight (being decoded, on the devices (Pipeline::capacity() at most), being
  /// encoded); memory is this many input and output frames whatever the length of the video.
  /// 0: the pipeline's capacity() and two more, one being decoded and one being encoded.
  int frames_in_flight = 0;
  /// Called after each frame is encoded, in order, from one thread at a time.
  std::function<void(const VideoFrameInfo& frame)> on_frame;
  /// Set (from a signal handler, say) to stop after the frames in flight.
  const std::atomic<bool>* stop = nullptr;
};

/// Where a video's host time went, summed over its frames. The stages run at once, so their sum
/// exceeds the wall time by as much as they overlapped; the devices' own upload, kernel and
/// download times are in Pipeline::report().
struct VideoRunStats {
  std::int64_t frames = 0;  ///< frames written
  double wall_ms = 0;
  double decode_ms = 0;  ///< reading, decoding and converting to RGBA
  double submit_ms = 0;  ///< handing frames to the devices (Pipeline::submit)
  double wait_ms = 0;    ///< waiting for the devices (Pipeline::wait)
  double encode_ms = 0;  ///< converting from RGBA, encoding and writing, with copied packets
};

/// Processes every frame `reader` gives with `pipeline` and writes it, with the source's other
/// streams, to `writer`. Does not finish() the writer. On an exception the writer is left to the
/// caller (abort() it).
VideoRunStats process_video(VideoReader& reader, Pipeline& pipeline, VideoWriter& writer,
                            const VideoRunOptions& options = {});

}  // namespace tandem
