// Parts of a video joined by stream copy (video_join.hpp).
#include "tandem/video_join.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

extern "C" {
#include <libavformat/avformat.h>
#include <libavutil/pixdesc.h>
}

#include "av_support.hpp"
#include "tandem/error.hpp"
#include "tandem/video_segments.hpp"

namespace fs = std::filesystem;

namespace tandem {
namespace {

using detail::av_error;
using Context = std::unique_ptr<AVFormatContext, detail::InputCloser>;

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f s", s);
  return text;
}

// A file opened for its packets; `video` is its video stream.
struct Input {
  Context ctx;
  int video = -1;
  const AVStream* stream() const { return ctx->streams[video]; }
};

Input open_input(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error("cannot read " + quoted(path) + ": no such file");
  AVFormatContext* raw = nullptr;
  const std::string url = "file:" + path.string();
  if (const int r = avformat_open_input(&raw, url.c_str(), nullptr, nullptr); r < 0) {
    throw Error("cannot read " + quoted(path) + ": " + av_error(r));
  }
  Input in{Context(raw)};
  if (const int r = avformat_find_stream_info(raw, nullptr); r < 0) {
    throw Error("cannot read " + quoted(path) + ": " + av_error(r));
  }
  in.video = av_find_best_stream(raw, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (in.video < 0) throw Error("cannot read " + quoted(path) + ": it has no video stream");
  return in;
}

// Reads the next packet of `in`'s streams not discarded; false at the end.
bool next_packet(Input& in, AVPacket* packet, const fs::path& path) {
  const int r = av_read_frame(in.ctx.get(), packet);
  if (r == AVERROR_EOF) return false;
  if (r < 0) throw Error("cannot read " + quoted(path) + ": " + av_error(r));
  return true;
}

// A part: where it begins, in seconds, by its first video packet.
struct Part {
  fs::path path;
  double first_seconds = 0;
};

std::string video_description(const AVCodecParameters* p) {
  const char* format = av_get_pix_fmt_name(static_cast<AVPixelFormat>(p->format));
  return std::string(avcodec_get_name(p->codec_id)) + " " + std::to_string(p->width) + "x" +
         std::to_string(p->height) + " " + (format ? format : "?");
}

Part look_at(const fs::path& path, const AVCodecParameters* first, const fs::path& first_path) {
  Input in = open_input(path);
  const AVCodecParameters* p = in.stream()->codecpar;
  if (first) {
    if (p->codec_id != first->codec_id || p->width != first->width ||
        p->height != first->height || p->format != first->format) {
      throw Error("cannot join " + quoted(path) + " to " + quoted(first_path) + ": its video is " +
                  video_description(p) + " where the other's is " + video_description(first));
    }
    if (p->extradata_size != first->extradata_size ||
        (p->extradata_size > 0 &&
         std::memcmp(p->extradata, first->extradata, p->extradata_size) != 0)) {
      throw Error("cannot join " + quoted(path) + " to " + quoted(first_path) +
                  ": their encoders were set up differently (the codec's extradata differs); "
                  "join parts of runs with the same options");
    }
  }
  const detail::PacketPtr packet = detail::new_packet();
  while (next_packet(in, packet.get(), path)) {
    const bool video = packet->stream_index == in.video;
    const std::int64_t t = packet->pts != AV_NOPTS_VALUE ? packet->pts : packet->dts;
    av_packet_unref(packet.get());
    if (!video) continue;
    if (t == AV_NOPTS_VALUE) {
      throw Error("cannot join " + quoted(path) + ": its video packets carry no timestamps");
    }
    return {path, t * av_q2d(in.stream()->time_base)};
  }
  throw Error("cannot join " + quoted(path) + ": its video stream has no frames");
}

// The frames of streams_from's video, to check that the parts hold each once.
class FrameCheck {
 public:
  FrameCheck(const fs::path& input) : input_(input), index_(index_key_frames(input)) {}

  // Video packet `pts` (in `tb`) of `part`: the first of the part when `first`.
  void packet(std::int64_t pts, AVRational tb, const fs::path& part, bool first) {
    const std::int64_t frame = frame_of(pts, tb, part);
    if (first) {
      if (frame != last_ + 1) {
        const std::string where = last_ < 0 ? "the input's first frame"
                                            : "frame " + std::to_string(last_ + 1) + " (after " +
                                                  quoted(previous_) + ")";
        throw Error("cannot join " + quoted(part) + ": it begins at frame " +
                    std::to_string(frame) + " of " + quoted(input_) + " where " + where +
                    " should come" +
                    (frame > last_ + 1 ? ": frames " + std::to_string(last_ + 1) + " to " +
                                             std::to_string(frame - 1) +
                                             " are in no part (is one left out?)"
                                       : ": parts overlap (is one given twice?)"));
      }
      previous_ = part;
    }
    last_ = std::max(last_, frame);
  }

  // After the last part.
  void finish() const {
    const auto frames = static_cast<std::int64_t>(index_.frame_pts.size());
    if (last_ + 1 != frames) {
      throw Error("cannot join: the parts end at frame " + std::to_string(last_) + " of " +
                  quoted(input_) + ", whose last is " + std::to_string(frames - 1) +
                  " (is the last part left out?)");
    }
  }

 private:
  std::int64_t frame_of(std::int64_t pts, AVRational tb, const fs::path& part) const {
    const std::vector<std::int64_t>& all = index_.frame_pts;
    const std::int64_t t = av_rescale_q(pts, tb, detail::to_av(index_.time_base));
    auto at = std::lower_bound(all.begin(), all.end(), t);
    if (at == all.end() || (at != all.begin() && t - *(at - 1) < *at - t)) --at;
    // Within half a frame: a part's container may keep coarser timestamps (Matroska's 1 ms).
    const std::size_t i = at - all.begin();
    const std::int64_t step =
        all.size() > 1 ? all[std::min(i + 1, all.size() - 1)] - all[i > 0 ? i - 1 : 0] : 0;
    if (std::llabs(*at - t) * 4 > std::max<std::int64_t>(step, 1) + 4) {
      throw Error("cannot join " + quoted(part) + ": its frame at " +
                  seconds_text(pts * av_q2d(tb)) + " is none of " + quoted(input_) +
                  "'s (was it cut from another input?)");
    }
    return static_cast<std::int64_t>(i);
  }

  fs::path input_;
  KeyFrameIndex index_;
  std::int64_t last_ = -1;
  fs::path previous_;
};

// The output, written to a hidden file beside it and renamed into place.
class Output {
 public:
  explicit Output(const fs::path& path) : path_(path) {
    temp_ = detail::temporary_beside(path);
    const std::string url = "file:" + temp_.string();
    if (avformat_alloc_output_context2(&ctx_, nullptr, nullptr, url.c_str()) < 0 || !ctx_) {
      throw Error("cannot write " + quoted(path) + ": FFmpeg has no container for its extension");
    }
  }
  ~Output() {
    if (ctx_) {
      if (opened_) avio_closep(&ctx_->pb);
      avformat_free_context(ctx_);
      std::error_code ec;
      if (!done_) fs::remove(temp_, ec);
    }
  }
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  AVFormatContext* get() { return ctx_; }
  std::string what() const { return "cannot write " + quoted(path_) + ": "; }

  void open() {
    if (const int r = avio_open(&ctx_->pb, ("file:" + temp_.string()).c_str(), AVIO_FLAG_WRITE);
        r < 0) {
      throw Error(what() + av_error(r));
    }
    opened_ = true;
    if (const int r = avformat_write_header(ctx_, nullptr); r < 0) {
      throw Error(what() + "the container refused the streams: " + av_error(r));
    }
  }
  void write(AVPacket* packet) {
    if (const int r = av_interleaved_write_frame(ctx_, packet); r < 0) {
      throw Error(what() + "writing a packet failed: " + av_error(r));
    }
  }
  void finish() {
    if (const int r = av_write_trailer(ctx_); r < 0) throw Error(what() + av_error(r));
    avio_closep(&ctx_->pb);
    opened_ = false;
    std::error_code ec;
    fs::rename(temp_, path_, ec);
    if (ec) throw Error(what() + ec.message());
    done_ = true;
  }

 private:
  fs::path path_, temp_;
  AVFormatContext* ctx_ = nullptr;
  bool opened_ = false, done_ = false;
};

bool kept(const AVStream* st, const JoinOptions& o) {
  if (st->disposition & AV_DISPOSITION_ATTACHED_PIC) return false;
  switch (st->codecpar->codec_type) {
    case AVMEDIA_TYPE_AUDIO:
      return !o.no_audio;
    case AVMEDIA_TYPE_SUBTITLE:
      return !o.no_subtitles;
    case AVMEDIA_TYPE_DATA:
      return !o.no_data;
    default:
      return false;
  }
}

}  // namespace

JoinStats join_segments(std::vector<fs::path> paths, const fs::path& output,
                        const JoinOptions& options) {
  detail::init_ffmpeg_log();
  if (paths.empty()) throw Error("nothing to join: no parts given");
  std::vector<Part> parts;
  {
    const Input first = open_input(paths.front());
    for (const fs::path& p : paths) {
      parts.push_back(look_at(p, p == paths.front() ? nullptr : first.stream()->codecpar,
                              paths.front()));
    }
  }
  std::stable_sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) {
    return a.first_seconds < b.first_seconds;
  });
  std::optional<FrameCheck> check;
  if (!options.streams_from.empty()) check.emplace(options.streams_from);

  JoinStats stats;
  Output out(output);
  AVFormatContext* octx = out.get();
  // The video stream as the first part has it, with its tags and side data (rotation, HDR10).
  Input part = open_input(parts.front().path);
  AVStream* video = avformat_new_stream(octx, nullptr);
  if (!video) throw std::bad_alloc();
  if (avcodec_parameters_copy(video->codecpar, part.stream()->codecpar) < 0) {
    throw std::bad_alloc();
  }
  if (avformat_query_codec(octx->oformat, video->codecpar->codec_id, FF_COMPLIANCE_NORMAL) == 0) {
    throw Error(out.what() + "the " + octx->oformat->name + " container cannot hold " +
                avcodec_get_name(video->codecpar->codec_id) + " video");
  }
  video->codecpar->codec_tag = 0;
  video->time_base = part.stream()->time_base;
  video->avg_frame_rate = part.stream()->avg_frame_rate;
  video->disposition = part.stream()->disposition;
  av_dict_copy(&video->metadata, part.stream()->metadata, 0);
  av_dict_copy(&octx->metadata, part.ctx->metadata, 0);
  for (int i = 0; i < part.stream()->nb_side_data; ++i) {
    const AVPacketSideData& d = part.stream()->side_data[i];
    std::uint8_t* copy = av_stream_new_side_data(video, d.type, d.size);
    if (!copy) throw std::bad_alloc();
    std::memcpy(copy, d.data, d.size);
  }

  // The other streams, from the input the parts were cut from: output stream by input index.
  std::optional<Input> others;
  std::vector<AVStream*> copy_to;
  if (!options.streams_from.empty()) {
    others.emplace(open_input(options.streams_from));
    AVFormatContext* ictx = others->ctx.get();
    copy_to.assign(ictx->nb_streams, nullptr);
    for (unsigned i = 0; i < ictx->nb_streams; ++i) {
      AVStream* in = ictx->streams[i];
      if (static_cast<int>(i) == others->video || !kept(in, options)) {
        in->discard = AVDISCARD_ALL;
        continue;
      }
      const char* codec = avcodec_get_name(in->codecpar->codec_id);
      const char* kind = av_get_media_type_string(in->codecpar->codec_type);
      if (avformat_query_codec(octx->oformat, in->codecpar->codec_id, FF_COMPLIANCE_NORMAL) == 0) {
        throw Error(out.what() + "the " + octx->oformat->name + " container cannot hold " +
                    kind + " stream " + std::to_string(i) + " (" + codec + ") of " +
                    quoted(options.streams_from) + "; choose another container, or leave it out");
      }
      AVStream* st = avformat_new_stream(octx, nullptr);
      if (!st || avcodec_parameters_copy(st->codecpar, in->codecpar) < 0) throw std::bad_alloc();
      st->codecpar->codec_tag = 0;
      st->time_base = in->time_base;
      st->disposition = in->disposition;
      av_dict_copy(&st->metadata, in->metadata, 0);
      copy_to[i] = st;
      const AVDictionaryEntry* language = av_dict_get(in->metadata, "language", nullptr, 0);
      stats.streams.push_back(std::string(kind) + " " + std::to_string(i) + " (" + codec +
                              (language ? std::string(", ") + language->value : "") + ")");
    }
  }
  out.open();

  // Merged by time: the next video packet and the next of the other streams, the earlier first.
  const detail::PacketPtr vpkt = detail::new_packet(), opkt = detail::new_packet();
  std::size_t current = 0;
  bool first_of_part = true;
  auto next_video = [&]() -> bool {
    while (true) {
      while (next_packet(part, vpkt.get(), parts[current].path)) {
        if (vpkt->stream_index != part.video) {
          av_packet_unref(vpkt.get());
          continue;
        }
        if (check && vpkt->pts != AV_NOPTS_VALUE) {
          check->packet(vpkt->pts, part.stream()->time_base, parts[current].path, first_of_part);
        }
        first_of_part = false;
        av_packet_rescale_ts(vpkt.get(), part.stream()->time_base, video->time_base);
        vpkt->stream_index = video->index;
        vpkt->pos = -1;
        return true;
      }
      if (++current == parts.size()) return false;
      part = open_input(parts[current].path);
      first_of_part = true;
    }
  };
  auto next_other = [&]() -> bool {
    if (!others) return false;
    while (next_packet(*others, opkt.get(), options.streams_from)) {
      const int i = opkt->stream_index;
      if (i < 0 || i >= static_cast<int>(copy_to.size()) || !copy_to[i]) {
        av_packet_unref(opkt.get());
        continue;
      }
      av_packet_rescale_ts(opkt.get(), others->ctx->streams[i]->time_base, copy_to[i]->time_base);
      opkt->stream_index = copy_to[i]->index;
      opkt->pos = -1;
      return true;
    }
    return false;
  };
  auto time_of = [](const AVPacket* p) { return p->dts != AV_NOPTS_VALUE ? p->dts : p->pts; };
  bool have_video = next_video(), have_other = next_other();
  while (have_video || have_other) {
    if (options.stop && options.stop->load()) {
      stats.stopped = true;
      return stats;  // the temporary file goes with `out`
    }
    bool take_video = have_video;
    if (have_video && have_other) {
      const std::int64_t tv = time_of(vpkt.get()), to = time_of(opkt.get());
      const AVRational tbo = octx->streams[opkt->stream_index]->time_base;
      take_video = tv == AV_NOPTS_VALUE ||
                   (to != AV_NOPTS_VALUE && av_compare_ts(tv, video->time_base, to, tbo) <= 0);
    }
    if (take_video) {
      out.write(vpkt.get());
      ++stats.frames;
      have_video = next_video();
    } else {
      out.write(opkt.get());
      have_other = next_other();
    }
  }
  if (check) check->finish();
  out.finish();
  return stats;
}

}  // namespace tandem
