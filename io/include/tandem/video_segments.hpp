#pragma once
// A video cut into segments at its key frames, so that separate processes (the jobs of a Slurm
// array, GNU parallel, tandem-mpi's ranks) each filter one, and join_segments() (video_join.hpp)
// puts their parts back together with stream copy:
//
//   const KeyFrameIndex index = index_key_frames("in.mp4");    // packets only, nothing decoded
//   const std::vector<VideoSegment> segments = cut_segments(index, 8);
//   VideoSegment s = segments[3];
//   add_warm_up(s, index, pipeline.warm_up_frames());           // tonemap's running statistics
//   VideoReader reader("in.mp4", {.from_pts = s.decode_from_pts, .to_pts = s.to_pts});
//   ... process_video() with VideoRunOptions::segment = &s writes frames [from_pts, to_pts) ...
//
// Every frame keeps the timestamp, the index and the time (FrameTime) it has in the whole video,
// so the parts joined equal a run over the whole video.
#include <cstdint>
#include <filesystem>
#include <limits>
#include <vector>

#include "tandem/video_io.hpp"

namespace tandem {

/// The frames of a file's video stream, from its packets alone.
struct KeyFrameIndex {
  Rational time_base;  ///< of the timestamps below (VideoInfo::time_base)
  /// Every frame's timestamp, in display order.
  std::vector<std::int64_t> frame_pts;
  /// Indices into frame_pts of the frames a decoder can start at (key frames), ascending.
  std::vector<std::int64_t> key_frames;
};

/// Reads the packets of `path`'s video stream, without decoding them, for their timestamps and
/// key frames. Throws Error for what VideoReader refuses (no such file, no video stream) and for
/// a stream whose packets carry no timestamps.
KeyFrameIndex index_key_frames(const std::filesystem::path& path);

/// One of a video's segments: the frames [first_frame, first_frame + frames) in display order,
/// whose timestamps are [from_pts, to_pts).
struct VideoSegment {
  static constexpr std::int64_t kOpen = std::numeric_limits<std::int64_t>::max();
  int index = 0;  ///< 0-based
  int count = 1;  ///< segments of the video
  std::int64_t first_frame = 0;
  std::int64_t frames = 0;
  /// The first frame's timestamp (-kOpen for the first segment: from the start) and the next
  /// segment's (kOpen for the last: to the end).
  std::int64_t from_pts = -kOpen, to_pts = kOpen;
  /// The video's first timestamp: frame times (FrameTime::seconds) count from it.
  std::int64_t origin_pts = 0;
  /// Where decoding starts: from_pts and first_frame, or an earlier key frame where frames
  /// before the segment warm a graph's temporal state up (add_warm_up()); the frames from there
  /// to from_pts are filtered, not written.
  std::int64_t decode_from_pts = -kOpen, decode_first_frame = 0;
};

/// Cuts the video into `count` segments of about equal numbers of frames, each beginning at a
/// key frame (the one nearest to an equal cut). Throws Error when `count` is not positive or
/// the video has too few key frames for that many segments (it says how many it has).
std::vector<VideoSegment> cut_segments(const KeyFrameIndex& index, int count);

/// Starts `segment`'s decoding at the latest key frame at least `frames` frames before its first
/// frame (or at the video's start).
void add_warm_up(VideoSegment& segment, const KeyFrameIndex& index, std::int64_t frames);

/// Parses "K/N" (0 <= K < N) as segment K of N; throws Error with the reason otherwise.
std::pair<int, int> parse_segment(const std::string& text);

}  // namespace tandem
