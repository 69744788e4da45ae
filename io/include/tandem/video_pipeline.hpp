#pragma once
// A whole video through a Pipeline: decode -> frame -> bands on the devices -> frame -> encode,
// as a TBB pipeline with a bounded number of frames in flight, so that while the devices process
// frame N, frame N+1 is decoded and uploaded and frame N-1 downloaded and encoded. Frames go to
// the devices in the decoder's own planes where the devices can convert them (device_format()).
#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "tandem/pipeline.hpp"
#include "tandem/video_io.hpp"
#include "tandem/video_segments.hpp"

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
  /// The segment of the video the reader reads (video_segments.hpp): its frames are timed as in
  /// the whole video (FrameTime's index from segment->decode_first_frame, seconds from
  /// origin_pts), and those before from_pts, a warm-up, go through the pipeline for the state
  /// they leave but are not written. VideoFrameInfo::index counts the frames written.
  const VideoSegment* segment = nullptr;
};

/// Where a video's host time went, summed over its frames. The stages run at once, so their sum
/// exceeds the wall time by as much as they overlapped; the devices' own upload, kernel and
/// download times are in Pipeline::report().
struct VideoRunStats {
  std::int64_t frames = 0;  ///< frames written
  double wall_ms = 0;
  double decode_ms = 0;  ///< reading, decoding, and copying or converting to the frame
  double submit_ms = 0;  ///< handing frames to the devices (Pipeline::submit)
  double wait_ms = 0;    ///< waiting for the devices (Pipeline::wait)
  double encode_ms = 0;  ///< copying or converting the frame, encoding, writing, copied packets
  /// The frames' format on the devices (device_format()), and the bytes of a frame that go to
  /// the devices and come back: what a device that does not share the host's memory copies (a
  /// frame's rows at their pitch; bands add their halo rows to it).
  PixelFormat format = PixelFormat::rgba8;
  std::size_t frame_bytes_in = 0, frame_bytes_out = 0;
};

/// The format frames of `reader` go to the devices in, for `writer`: the plane format of the
/// decoder's Y'CbCr pictures (yuv420p, yuv422p10, yuv444p12, ...; NV12 and P010 rearranged to
/// yuv420p and yuv420p10), copied as they are and converted to RGBA (rgba8 for 8 bits, rgba32f
/// for more) and back by the devices, where the video is in a matrix the devices convert
/// (VideoInfo::yuv_encoding) and the writer encodes Y'CbCr (it converts a layout or depth of its
/// own); otherwise converted by swscale on the host: to rgba32f (through planar float R'G'B')
/// where both the video and the writer's pixel format are deeper than 8 bits, to rgba8 where
/// either is not.
PixelFormat device_format(const VideoReader& reader, const VideoWriter& writer);

/// The time of frame `index` (from 0) of `info`'s video, read with timestamp `pts`, where the
/// first frame read had `first_pts`: seconds from that frame, or index / 25 without a time base.
/// What Pipeline::submit() gives filters that follow time (fade).
FrameTime frame_time(const VideoInfo& info, std::int64_t index, std::int64_t pts,
                     std::int64_t first_pts);

/// Processes every frame `reader` gives with `pipeline` and writes it, with the source's other
/// streams, to `writer`. Does not finish() the writer. On an exception the writer is left to the
/// caller (abort() it).
VideoRunStats process_video(VideoReader& reader, Pipeline& pipeline, VideoWriter& writer,
                            const VideoRunOptions& options = {});

}  // namespace tandem
