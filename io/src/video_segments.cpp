// A video cut into segments at its key frames (video_segments.hpp).
#include "tandem/video_segments.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

extern "C" {
#include <libavformat/avformat.h>
}

#include "av_support.hpp"
#include "tandem/error.hpp"

namespace fs = std::filesystem;

namespace tandem {

KeyFrameIndex index_key_frames(const fs::path& path) {
  // VideoReader checks the file the way every other command does (missing, empty, not a
  // video) and finds the stream; its packets are read here, none decoded.
  const VideoReader reader(path);
  const std::string what = "cannot index the key frames of '" + path.string() + "': ";
  detail::init_ffmpeg_log();
  AVFormatContext* raw = nullptr;
  const std::string url = "file:" + path.string();
  if (const int r = avformat_open_input(&raw, url.c_str(), nullptr, nullptr); r < 0) {
    throw Error(what + detail::av_error(r));
  }
  const std::unique_ptr<AVFormatContext, detail::InputCloser> ctx(raw);
  if (const int r = avformat_find_stream_info(ctx.get(), nullptr); r < 0) {
    throw Error(what + detail::av_error(r));
  }
  const int video = av_find_best_stream(ctx.get(), AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (video < 0) throw Error(what + "it has no video stream");
  for (unsigned i = 0; i < ctx->nb_streams; ++i) {
    if (static_cast<int>(i) != video) ctx->streams[i]->discard = AVDISCARD_ALL;
  }
  const AVStream* st = ctx->streams[video];
  KeyFrameIndex index;
  index.time_base = reader.info().time_base;
  const AVRational to = detail::to_av(index.time_base);
  std::vector<std::int64_t> keys;
  const detail::PacketPtr packet = detail::new_packet();
  while (true) {
    const int r = av_read_frame(ctx.get(), packet.get());
    if (r == AVERROR_EOF) break;
    if (r < 0) throw Error(what + detail::av_error(r));
    if (packet->stream_index == video) {
      std::int64_t t = packet->pts != AV_NOPTS_VALUE ? packet->pts : packet->dts;
      if (t == AV_NOPTS_VALUE) {
        av_packet_unref(packet.get());
        throw Error(what + "its video packets carry no timestamps, so it cannot be cut");
      }
      t = av_rescale_q(t, st->time_base, to);
      index.frame_pts.push_back(t);
      if (packet->flags & AV_PKT_FLAG_KEY) keys.push_back(t);
    }
    av_packet_unref(packet.get());
  }
  if (index.frame_pts.empty()) throw Error(what + "its video stream has no frames");
  std::sort(index.frame_pts.begin(), index.frame_pts.end());
  for (const std::int64_t k : keys) {
    const auto at = std::lower_bound(index.frame_pts.begin(), index.frame_pts.end(), k);
    index.key_frames.push_back(at - index.frame_pts.begin());
  }
  std::sort(index.key_frames.begin(), index.key_frames.end());
  index.key_frames.erase(std::unique(index.key_frames.begin(), index.key_frames.end()),
                         index.key_frames.end());
  return index;
}

std::vector<VideoSegment> cut_segments(const KeyFrameIndex& index, int count) {
  if (count < 1) throw Error("segments: " + std::to_string(count) + " is not a positive count");
  const auto frames = static_cast<std::int64_t>(index.frame_pts.size());
  // Key frames a segment may begin at; the first segment begins at the first frame whatever
  // the stream says of it.
  std::vector<std::int64_t> starts;
  for (const std::int64_t k : index.key_frames) {
    if (k > 0) starts.push_back(k);
  }
  if (static_cast<std::int64_t>(starts.size()) < count - 1) {
    throw Error("cannot cut the video into " + std::to_string(count) + " segments: its " +
                std::to_string(frames) + " frames have " + std::to_string(starts.size() + 1) +
                " key frame" + (starts.empty() ? "" : "s") + " to begin one at, so " +
                std::to_string(starts.size() + 1) + " segments at most");
  }
  // Border k (1..count-1) is the key frame nearest to k/count of the frames, after border k-1
  // and leaving a key frame for each border after it.
  std::vector<std::int64_t> borders{0};
  std::size_t next = 0;  // first key frame border k may take
  for (int k = 1; k < count; ++k) {
    const double target = static_cast<double>(frames) * k / count;
    const std::size_t last = starts.size() - static_cast<std::size_t>(count - k);
    std::size_t best = next;
    for (std::size_t c = next; c <= last; ++c) {
      if (std::abs(starts[c] - target) < std::abs(starts[best] - target)) best = c;
      if (starts[c] > target) break;
    }
    borders.push_back(starts[best]);
    next = best + 1;
  }
  borders.push_back(frames);
  std::vector<VideoSegment> segments;
  for (int k = 0; k < count; ++k) {
    VideoSegment s;
    s.index = k;
    s.count = count;
    s.first_frame = borders[k];
    s.frames = borders[k + 1] - borders[k];
    s.from_pts = k == 0 ? -VideoSegment::kOpen : index.frame_pts[borders[k]];
    s.to_pts = k + 1 == count ? VideoSegment::kOpen : index.frame_pts[borders[k + 1]];
    s.origin_pts = index.frame_pts.front();
    s.decode_from_pts = s.from_pts;
    s.decode_first_frame = s.first_frame;
    segments.push_back(s);
  }
  return segments;
}

void add_warm_up(VideoSegment& segment, const KeyFrameIndex& index, std::int64_t frames) {
  if (frames <= 0 || segment.first_frame == 0) return;
  const std::int64_t want = segment.first_frame - frames;
  // The latest key frame at or before `want`; none: the start of the video.
  const auto after = std::upper_bound(index.key_frames.begin(), index.key_frames.end(), want);
  if (want <= 0 || after == index.key_frames.begin()) {
    segment.decode_from_pts = -VideoSegment::kOpen;
    segment.decode_first_frame = 0;
    return;
  }
  segment.decode_first_frame = *(after - 1);
  segment.decode_from_pts =
      segment.decode_first_frame == 0 ? -VideoSegment::kOpen
                                      : index.frame_pts[segment.decode_first_frame];
}

std::pair<int, int> parse_segment(const std::string& text) {
  const std::string what = "--segment '" + text + "': ";
  const auto slash = text.find('/');
  std::size_t used_k = 0, used_n = 0;
  int k = -1, n = 0;
  try {
    if (slash == std::string::npos) throw std::invalid_argument("");
    k = std::stoi(text.substr(0, slash), &used_k);
    n = std::stoi(text.substr(slash + 1), &used_n);
  } catch (const std::exception&) {
    throw Error(what + "give K/N, segment K (from 0) of N, e.g. 3/8");
  }
  if (used_k != slash || used_n != text.size() - slash - 1) {
    throw Error(what + "give K/N, segment K (from 0) of N, e.g. 3/8");
  }
  if (n < 1) throw Error(what + "N must be at least 1");
  if (k < 0 || k >= n) {
    throw Error(what + "K counts from 0 to N-1 (" + std::to_string(n - 1) + " here)");
  }
  return {k, n};
}

}  // namespace tandem
