// VideoReader: a file's video stream decoded into frames, damage found and reported in display
// order; and StreamPacket, the other streams' packets it keeps.
#include "tandem/video_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <new>
#include <utility>

extern "C" {
#include <libavutil/display.h>
#include <libavutil/mastering_display_metadata.h>
#include <libavutil/pixdesc.h>
}

#include "av_support.hpp"
#include "tandem/error.hpp"
#include "video_reader_impl.hpp"

// FFmpeg 6 carries a packet's opaque to its frame (and deprecates reordered_opaque, which does
// the same in 5.x).
#ifdef AV_CODEC_FLAG_COPY_OPAQUE
#define TANDEM_COPY_OPAQUE 1
#else
#define TANDEM_COPY_OPAQUE 0
#endif

namespace tandem {

namespace packet_tag = detail::packet_tag;
using detail::allocate_picture;
using detail::av_error;
using detail::av_format;
using detail::copy_planes;
using detail::disown_log;
using detail::display_matrix_of;
using detail::explain;
using detail::init_ffmpeg_log;
using detail::is_full_range_yuvj;
using detail::is_video_format;
using detail::is_yuv;
using detail::kind_name;
using detail::kSwsFlags;
using detail::log_mutex;
using detail::LogScope;
using detail::own_log;
using detail::same_samples;
using detail::ScalerSide;
using detail::sws_matrix;
using detail::to_av;
using detail::to_rational;
using detail::yuv_matrix;

namespace {

namespace fs = std::filesystem;

std::string seconds_text(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", seconds);
  return buf;
}

// An enum field of a decoded frame as the integer FFmpeg stored: a damaged stream can put a value
// there that is none of the enum's (seen: colorspace 244 from a fuzzed Matroska file), and
// reading it as the enum type is undefined behaviour.
template <typename Enum>
int stored_value(const Enum& field) {
  static_assert(sizeof(Enum) == sizeof(int));
  int value;
  std::memcpy(&value, &field, sizeof value);
  return value;
}

// FFmpeg's name of a colour description's `value` (an int as stored, stored_value()); empty for
// `unspecified`, for a value out of the enum's [0, count), and for one FFmpeg has no name for.
template <typename Enum>
std::string colour_name(int value, int unspecified, int count, const char* (*name)(Enum)) {
  if (value == unspecified || value < 0 || value >= count) return "";
  const char* n = name(static_cast<Enum>(value));
  return n && std::strcmp(n, "unknown") != 0 ? n : "";
}

// The encoding of pictures in `format` with matrix `space` and range `range` (AVColorSpace and
// AVColorRange as stored), by the rules the conversions to and from RGBA follow (sws_matrix(),
// is_full_range_yuvj()), so that both agree; none for RGB and grey pictures and for the matrices
// YuvEncoding has no name for (FCC, SMPTE 240M, YCgCo, BT.2020 constant luminance, ...).
std::optional<YuvEncoding> yuv_encoding_of(AVPixelFormat format, int space, int range, int height) {
  if (!is_yuv(format)) return std::nullopt;
  const bool named = space == AVCOL_SPC_BT709 || space == AVCOL_SPC_BT470BG ||
                     space == AVCOL_SPC_SMPTE170M || space == AVCOL_SPC_BT2020_NCL;
  const bool unmarked = space == AVCOL_SPC_UNSPECIFIED || space == AVCOL_SPC_RESERVED ||
                        space < 0 || space >= AVCOL_SPC_NB;
  if (!named && !unmarked) return std::nullopt;
  return YuvEncoding{yuv_matrix(sws_matrix(space, height)),
                     range == AVCOL_RANGE_JPEG || is_full_range_yuvj(format)};
}

// "00:01:02.500000000", as Matroska muxers tag each stream's duration.
double parse_duration_tag(const char* text) {
  int h = 0, m = 0;
  double s = 0;
  if (text && std::sscanf(text, "%d:%d:%lf", &h, &m, &s) == 3) return h * 3600.0 + m * 60.0 + s;
  return 0;
}

// Seconds the video stream lasts as the file states it; 0 when it does not.
double stated_duration(const AVFormatContext* fmt, const AVStream* st) {
  if (st->duration != AV_NOPTS_VALUE && st->duration > 0)
    return st->duration * av_q2d(st->time_base);
  if (const AVDictionaryEntry* e = av_dict_get(st->metadata, "DURATION", nullptr, 0)) {
    if (const double d = parse_duration_tag(e->value); d > 0) return d;
  }
  // The container's duration is the video's only when nothing else is in it, and only when it
  // was read rather than guessed from the bit rate.
  if (fmt->nb_streams == 1 && fmt->duration != AV_NOPTS_VALUE && fmt->duration > 0 &&
      fmt->duration_estimation_method != AVFMT_DURATION_FROM_BITRATE) {
    return fmt->duration / static_cast<double>(AV_TIME_BASE);
  }
  return 0;
}

bool is_cover_art(const AVStream* st) {
  return st->disposition & AV_DISPOSITION_ATTACHED_PIC;
}

// HDR10's static metadata in the first frame's own side data, for streams whose container
// states none (x265's SEI messages in an MP4 without mdcv and clli boxes): a decoder of its own
// decodes packets of stream `video` of `url` until a frame comes out, at most 64.
std::vector<detail::SideData> first_frame_hdr_metadata(const std::string& url, int video) {
  detail::LogSink said;  // what the probe makes FFmpeg say is not the reader's to report
  detail::LogScope scope(&said);
  std::vector<detail::SideData> found;
  AVFormatContext* opened = nullptr;
  if (avformat_open_input(&opened, url.c_str(), nullptr, nullptr) < 0) return found;
  std::unique_ptr<AVFormatContext, detail::InputCloser> ctx(opened);
  if (avformat_find_stream_info(ctx.get(), nullptr) < 0 ||
      video >= static_cast<int>(ctx->nb_streams)) {
    return found;
  }
  const AVCodecParameters* par = ctx->streams[video]->codecpar;
  const AVCodec* codec = avcodec_find_decoder(par->codec_id);
  std::unique_ptr<AVCodecContext, detail::CodecFree> decoder(avcodec_alloc_context3(codec));
  if (!codec || !decoder || avcodec_parameters_to_context(decoder.get(), par) < 0 ||
      avcodec_open2(decoder.get(), codec, nullptr) < 0) {
    return found;
  }
  detail::PacketPtr packet = detail::new_packet();
  detail::FramePtr frame = detail::new_frame();
  for (int packets = 0; packets < 64;) {
    const bool more = av_read_frame(ctx.get(), packet.get()) >= 0;
    if (more && packet->stream_index != video) {
      av_packet_unref(packet.get());
      continue;
    }
    ++packets;
    avcodec_send_packet(decoder.get(), more ? packet.get() : nullptr);
    av_packet_unref(packet.get());
    if (avcodec_receive_frame(decoder.get(), frame.get()) == 0) {
      const std::pair<AVFrameSideDataType, AVPacketSideDataType> kinds[] = {
          {AV_FRAME_DATA_MASTERING_DISPLAY_METADATA, AV_PKT_DATA_MASTERING_DISPLAY_METADATA},
          {AV_FRAME_DATA_CONTENT_LIGHT_LEVEL, AV_PKT_DATA_CONTENT_LIGHT_LEVEL}};
      for (const auto& [in_frame, in_stream] : kinds) {
        if (const AVFrameSideData* d = av_frame_get_side_data(frame.get(), in_frame)) {
          found.push_back({in_stream, std::vector<std::uint8_t>(d->data, d->data + d->size)});
        }
      }
      return found;
    }
    if (!more) break;
  }
  return found;
}

}  // namespace

// ---- StreamPacket ----

StreamPacket::StreamPacket(AVPacket* packet, int stream, Rational time_base)
    : packet_(packet), stream_(stream), time_base_(time_base) {}
StreamPacket::StreamPacket(StreamPacket&& other) noexcept
    : packet_(std::exchange(other.packet_, nullptr)),
      stream_(other.stream_),
      time_base_(other.time_base_) {}
StreamPacket& StreamPacket::operator=(StreamPacket&& other) noexcept {
  if (this != &other) {
    av_packet_free(&packet_);
    packet_ = std::exchange(other.packet_, nullptr);
    stream_ = other.stream_;
    time_base_ = other.time_base_;
  }
  return *this;
}
StreamPacket::~StreamPacket() {
  av_packet_free(&packet_);
}
std::int64_t StreamPacket::pts() const {
  return packet_ ? packet_->pts : std::numeric_limits<std::int64_t>::min();
}
const std::uint8_t* StreamPacket::data() const {
  return packet_ ? packet_->data : nullptr;
}
std::size_t StreamPacket::size() const {
  return packet_ ? static_cast<std::size_t>(packet_->size) : 0;
}

// ---- VideoReader ----

VideoReader::Impl::Impl(const fs::path& path, VideoReaderOptions opts) : options(opts) {
  init_ffmpeg_log();
  LogScope scope(&log);
  try {
    open(path);
  } catch (...) {
    decoder.reset();
    format.reset();
    disown_log(&log);
    throw;
  }
}

VideoReader::Impl::~Impl() {
  sws_freeContext(sws);
  decoder.reset();
  format.reset();
  disown_log(&log);
}

void VideoReader::Impl::open(const fs::path& path) {
  const bool from_stdin = path == "-";
  name = from_stdin ? "standard input" : path.string();
  const std::string what = "cannot read '" + name + "': ";
  if (!from_stdin) {
    std::error_code ec;
    if (!fs::exists(path, ec)) throw Error(what + "no such file");
    if (fs::is_directory(path, ec)) throw Error(what + "it is a directory");
    if (fs::is_regular_file(path, ec) && fs::file_size(path, ec) == 0) {
      throw Error(what + "the file is empty");
    }
  }
  if (options.start < 0 || options.duration < 0 || options.max_frames < 0 ||
      !std::isfinite(options.start) || !std::isfinite(options.duration)) {
    throw Error(what + "start, duration and frame limit must be positive");
  }

  AVFormatContext* ctx = nullptr;
  const AVInputFormat* forced = from_stdin ? av_find_input_format("yuv4mpegpipe") : nullptr;
  // "file:" keeps a name such as "http:x" or "concat:a|b" a local file name.
  const std::string url = from_stdin ? "pipe:0" : "file:" + path.string();
  int r = avformat_open_input(&ctx, url.c_str(), forced, nullptr);
  if (r < 0) {
    if (r == AVERROR_INVALIDDATA) {
      log.take();
      throw Error(what + (from_stdin
                              ? "not a YUV4MPEG2 stream"
                              : "not a media file FFmpeg can read, or it is truncated or corrupt"));
    }
    throw Error(what + explain(log, r));
  }
  format.reset(ctx);
  own_log(ctx, &log);
  r = avformat_find_stream_info(ctx, nullptr);
  if (r < 0) throw Error(what + "cannot find its streams: " + explain(log, r));

  const AVCodec* codec = nullptr;
  video = av_find_best_stream(ctx, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
  if (video >= 0 && is_cover_art(ctx->streams[video])) video = AVERROR_STREAM_NOT_FOUND;
  if (video == AVERROR_STREAM_NOT_FOUND) {
    for (unsigned i = 0; i < ctx->nb_streams && video < 0; ++i) {
      const AVStream* st = ctx->streams[i];
      if (st->codecpar->codec_type == AVMEDIA_TYPE_VIDEO && !is_cover_art(st)) {
        video = static_cast<int>(i);
        codec = avcodec_find_decoder(st->codecpar->codec_id);
      }
    }
  }
  if (video < 0 && video != AVERROR_DECODER_NOT_FOUND) {
    std::string has;
    for (unsigned i = 0; i < ctx->nb_streams; ++i) {
      const AVCodecParameters* par = ctx->streams[i]->codecpar;
      has += std::string(has.empty() ? "" : ", ") + kind_name(par->codec_type) + " (" +
             avcodec_get_name(par->codec_id) + ")";
    }
    throw Error(what + "it has no video stream" + (has.empty() ? "" : " (it has " + has + ")"));
  }
  if (video == AVERROR_DECODER_NOT_FOUND || !codec) {
    const int v = av_find_best_stream(ctx, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
    const char* codec_name = v >= 0 ? avcodec_get_name(ctx->streams[v]->codecpar->codec_id) : "?";
    throw Error(what + "FFmpeg has no decoder for its video codec '" + codec_name + "'");
  }
  AVStream* st = ctx->streams[video];
  time_base = st->time_base;

  decoder.reset(avcodec_alloc_context3(codec));
  if (!decoder) throw std::bad_alloc();
  if ((r = avcodec_parameters_to_context(decoder.get(), st->codecpar)) < 0) {
    throw Error(what + explain(log, r));
  }
  decoder->pkt_timebase = st->time_base;
  decoder->thread_count = options.threads;
  decoder->err_recognition |= AV_EF_CRCCHECK;  // codecs with checksums (FFV1 slices) verify them
  if ((r = avcodec_open2(decoder.get(), codec, nullptr)) < 0) {
    throw Error(what + "cannot open the " + codec->name + " decoder: " + explain(log, r));
  }
  own_log(decoder.get(), &log);
  own_log(ctx->pb, &log);
#if TANDEM_COPY_OPAQUE
  decoder->flags |= AV_CODEC_FLAG_COPY_OPAQUE;
#endif
  frame_threads = decoder->active_thread_type & FF_THREAD_FRAME;
  reader_number = packet_tag::g_next_reader++;
  {
    std::lock_guard lock(log_mutex());
    packet_tag::owners()[reader_number & packet_tag::kReaderMask] = &log;
  }

  info.width = st->codecpar->width;
  info.height = st->codecpar->height;
  if (info.width <= 0 || info.height <= 0)
    throw Error(what + "the video stream has no picture size");
  const AVRational rate = av_guess_frame_rate(ctx, st, nullptr);
  if (rate.num > 0 && rate.den > 0) info.frame_rate = to_rational(rate);
  info.time_base = to_rational(time_base);
  const AVRational sar = av_guess_sample_aspect_ratio(ctx, st, nullptr);
  if (sar.num > 0 && sar.den > 0) info.sample_aspect_ratio = to_rational(sar);
  info.duration = stated_duration(ctx, st);
  info.frame_count = st->nb_frames > 0 ? st->nb_frames : 0;
  if (info.frame_count == 0) {
    if (const AVDictionaryEntry* e = av_dict_get(st->metadata, "NUMBER_OF_FRAMES", nullptr, 0)) {
      info.frame_count = std::strtoll(e->value, nullptr, 10);
    }
  }
  info.display_matrix = display_matrix_of(st);
  if (info.display_matrix) {
    const double ccw = av_display_rotation_get(info.display_matrix->data());
    if (std::isfinite(ccw))
      info.rotation = ((-static_cast<int>(std::lround(ccw))) % 360 + 360) % 360;
  }
  info.codec = avcodec_get_name(st->codecpar->codec_id);
  const char* pix = av_get_pix_fmt_name(static_cast<AVPixelFormat>(st->codecpar->format));
  info.pixel_format = pix ? pix : "unknown";
  info.container = ctx->iformat->name;
  if (const AVPixFmtDescriptor* d =
          av_pix_fmt_desc_get(static_cast<AVPixelFormat>(st->codecpar->format))) {
    info.bit_depth = d->comp[0].depth;
  }
  // Names of what the stream states; none for "unspecified" or a value FFmpeg does not know
  // (a damaged file can store any number there: it is read as an int and checked first).
  const AVCodecParameters* par = st->codecpar;
  info.color_primaries = colour_name(stored_value(par->color_primaries), AVCOL_PRI_UNSPECIFIED,
                                     AVCOL_PRI_NB, av_color_primaries_name);
  info.color_transfer = colour_name(stored_value(par->color_trc), AVCOL_TRC_UNSPECIFIED,
                                    AVCOL_TRC_NB, av_color_transfer_name);
  info.color_matrix = colour_name(stored_value(par->color_space), AVCOL_SPC_UNSPECIFIED,
                                  AVCOL_SPC_NB, av_color_space_name);
  info.color_range = colour_name(stored_value(par->color_range), AVCOL_RANGE_UNSPECIFIED,
                                 AVCOL_RANGE_NB, av_color_range_name);
  info.chroma_location = colour_name(stored_value(par->chroma_location),
                                     AVCHROMA_LOC_UNSPECIFIED, AVCHROMA_LOC_NB,
                                     av_chroma_location_name);
  info.yuv_encoding =
      yuv_encoding_of(static_cast<AVPixelFormat>(par->format), stored_value(par->color_space),
                      stored_value(par->color_range), info.height);
  // HDR10's static metadata as the container states it, else as the first frame carries it
  // (HDR video only: the probe decodes a frame); the peak: MaxCLL, else the mastering
  // display's.
  for (const AVPacketSideDataType type :
       {AV_PKT_DATA_MASTERING_DISPLAY_METADATA, AV_PKT_DATA_CONTENT_LIGHT_LEVEL}) {
    std::size_t size = 0;
    if (const std::uint8_t* data = av_stream_get_side_data(st, type, &size); data && size > 0) {
      hdr_metadata.push_back({type, std::vector<std::uint8_t>(data, data + size)});
    }
  }
  const bool hdr = info.color_transfer == "smpte2084" || info.color_transfer == "arib-std-b67";
  if (hdr_metadata.empty() && hdr && !from_stdin) {
    hdr_metadata = first_frame_hdr_metadata(url, video);
  }
  for (const detail::SideData& d : hdr_metadata) {
    if (d.type == AV_PKT_DATA_CONTENT_LIGHT_LEVEL && d.bytes.size() >= sizeof(AVContentLightMetadata)) {
      const auto* cll = reinterpret_cast<const AVContentLightMetadata*>(d.bytes.data());
      if (cll->MaxCLL > 0) info.peak_luminance = cll->MaxCLL;
    }
  }
  for (const detail::SideData& d : hdr_metadata) {
    if (info.peak_luminance == 0 && d.type == AV_PKT_DATA_MASTERING_DISPLAY_METADATA &&
        d.bytes.size() >= sizeof(AVMasteringDisplayMetadata)) {
      const auto* mdm = reinterpret_cast<const AVMasteringDisplayMetadata*>(d.bytes.data());
      if (mdm->has_luminance && mdm->max_luminance.den > 0) {
        info.peak_luminance = av_q2d(mdm->max_luminance);
      }
    }
  }
  if (rate.num > 0 && rate.den > 0) {
    frame_step = std::max<std::int64_t>(1, av_rescale_q(1, av_inv_q(rate), time_base));
  }

  kept.assign(ctx->nb_streams, false);
  for (unsigned i = 0; i < ctx->nb_streams; ++i) {
    AVStream* s = ctx->streams[i];
    const AVMediaType type = s->codecpar->codec_type;
    const bool other =
        static_cast<int>(i) != video && !is_cover_art(s) &&
        (type == AVMEDIA_TYPE_AUDIO || type == AVMEDIA_TYPE_SUBTITLE || type == AVMEDIA_TYPE_DATA);
    if (other) {
      StreamInfo si;
      si.index = static_cast<int>(i);
      si.kind = type == AVMEDIA_TYPE_AUDIO      ? StreamKind::audio
                : type == AVMEDIA_TYPE_SUBTITLE ? StreamKind::subtitle
                                                : StreamKind::data;
      si.codec = avcodec_get_name(s->codecpar->codec_id);
      if (const AVDictionaryEntry* e = av_dict_get(s->metadata, "language", nullptr, 0)) {
        si.language = e->value;
      }
      streams.push_back(si);
      kept[i] = options.keep_packets;
    }
    // The demuxer skips what nobody reads.
    if (static_cast<int>(i) != video && !kept[i]) s->discard = AVDISCARD_ALL;
  }

  origin = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
  if (options.start > 0) {
    start_pts = origin + static_cast<std::int64_t>(std::llround(options.start / av_q2d(time_base)));
    // Not every input seeks (a pipe); then the frames before the start are decoded and dropped.
    if (av_seek_frame(ctx, video, start_pts, AVSEEK_FLAG_BACKWARD) < 0) log.take();
  }
  if (options.duration > 0) {
    end_pts = origin + static_cast<std::int64_t>(
                           std::llround((options.start + options.duration) / av_q2d(time_base)));
  }
  constexpr std::int64_t open_end = std::numeric_limits<std::int64_t>::max();
  if (options.from_pts != -open_end || options.to_pts != open_end) {
    if (options.start > 0 || options.duration > 0) {
      throw Error(what + "a range is given in seconds or in timestamps, not both");
    }
    if (options.from_pts >= options.to_pts) throw Error(what + "the range of timestamps is empty");
    if (options.from_pts != -open_end) {
      start_pts = options.from_pts;
      if (av_seek_frame(ctx, video, start_pts, AVSEEK_FLAG_BACKWARD) < 0) log.take();
    }
    end_pts = options.to_pts;
  }
  log.take();  // what the probing said is not about any frame
}

// Something wrong at the next frame (or at timestamp `at`): thrown, or noted when skipping.
void VideoReader::Impl::problem(const std::string& what, bool lost_frame, std::int64_t at) {
  const std::int64_t index = returned + passed;
  std::string line = "cannot decode '" + name + "' at frame " + std::to_string(index) + " (" +
                     seconds_text(seconds(at == AV_NOPTS_VALUE ? next_pts() : at)) + "): " + what;
  if (options.on_error == OnDecodeError::stop) {
    finished = true;
    throw Error(line);
  }
  if (lost_frame) ++passed;
  errors.push_back(std::move(line));
}

// A problem found before the decoder, at timestamp `at`: reported once the frames shown before
// it are out, so that it is numbered in display order whatever the decoder's delay. Without a
// timestamp, reported now.
void VideoReader::Impl::lose(std::int64_t at, std::string what, bool lost_frame) {
  if (at == AV_NOPTS_VALUE) {
    note_dependents();
    problem(what, lost_frame);
    return;
  }
  losses.emplace(at, Loss{std::move(what), lost_frame});
}

// Reports the losses at or before timestamp `up_to`; those outside the range are dropped.
void VideoReader::Impl::report_losses(std::int64_t up_to) {
  while (!losses.empty() && losses.begin()->first <= up_to) {
    auto loss = losses.extract(losses.begin());
    if (loss.key() < start_pts || loss.key() >= end_pts) continue;
    note_dependents();
    problem(loss.mapped().what, loss.mapped().lost_frame, loss.key());
  }
}

// A packet sent whose frame should have been shown by now but never came. When the decoder said
// why while decoding it, or failed on it, that is a lost frame; otherwise the packet held no
// picture of its own. With frame threads a failure does not say which packet it was about: a
// packet the decoder complained about is taken to be it, and failures left over are reported at
// the end.
void VideoReader::Impl::give_up_on(std::int64_t serial, std::int64_t at) {
  const std::vector<std::string> said = log.take_packet(serial);
  int code = 0;
  if (const auto it = failed.find(serial); it != failed.end()) {
    code = it->second;
    failed.erase(it);
  }
  if (said.empty() && code == 0) return;
  if (unclaimed_failures > 0) --unclaimed_failures;
  lost_from.insert(serial);
  lose(at,
       "the frame cannot be decoded (" +
           (said.empty()
                ? "the " + std::string(decoder->codec->name) + " decoder failed: " + av_error(code)
                : said.front()) +
           ")",
       true);
}

// The serial of the packet the frame in `decoded` came from (the decoder carries it from packet
// to frame). Packets decoded before it that should have been shown before it, and were not, are
// given up on: only what does not depend on how far ahead the decoder runs decides that. A packet
// without a timestamp is given up on once frames 16 packets later (H.264's deepest reordering)
// come out.
std::int64_t VideoReader::Impl::serial_of_decoded() {
  std::int64_t serial = sent - 1;  // a frame that does not say: the last packet sent
#if TANDEM_COPY_OPAQUE
  const auto tag = reinterpret_cast<std::uintptr_t>(decoded->opaque);
  if (tag & packet_tag::kMarker) serial = static_cast<std::int64_t>(tag & packet_tag::kSerialMask);
#else
  if (decoded->reordered_opaque >= 0 && decoded->reordered_opaque < sent)
    serial = decoded->reordered_opaque;
#endif
  unshown.erase(serial);
  const std::int64_t t =
      decoded->pts != AV_NOPTS_VALUE ? decoded->pts : decoded->best_effort_timestamp;
  for (auto it = unshown.begin(); it != unshown.end() && it->first < serial;) {
    const auto [dropped, at] = *it;
    const bool passed_by =
        at == AV_NOPTS_VALUE ? dropped + 16 < serial : t != AV_NOPTS_VALUE && at < t;
    if (!passed_by) {
      ++it;
      continue;
    }
    it = unshown.erase(it);
    give_up_on(dropped, at);
  }
  return serial;
}

// The decoder refused a packet or failed to give a frame: a lost frame, reported when its place
// in display order is reached (give_up_on). Without frame threads the failure is about packet
// `serial`; with them it is about a packet sent earlier that FFmpeg does not name.
void VideoReader::Impl::decoder_failed(int code, std::int64_t serial) {
  if (frame_threads) {
    ++unclaimed_failures;
    unclaimed_code = code;
  } else {
    failed[serial] = code;
  }
}

void VideoReader::Impl::note_dependents() {
  if (dependents == 0) return;
  errors.push_back("cannot decode '" + name + "': left out frame" +
                   (dependents == 1 ? " " + std::to_string(dependents_first)
                                    : "s " + std::to_string(dependents_first) + " to " +
                                          std::to_string(dependents_first + dependents - 1)) +
                   (dependents == 1 ? ", which depends" : ", which depend") +
                   " on lost data, up to the next key frame");
  dependents = 0;
}

void VideoReader::Impl::feed() {
  if (demuxed_all) {
    if (!flushing) {
      avcodec_send_packet(decoder.get(), nullptr);
      flushing = true;
    }
    return;
  }
  AVFormatContext* ctx = format.get();
  log.take();  // what was said before is not the demuxer's
  const int r = av_read_frame(ctx, packet.get());
  const bool at_end = r == AVERROR_EOF || (r < 0 && ctx->pb && avio_feof(ctx->pb));
  const bool ends_here = at_end || (ctx->pb && avio_feof(ctx->pb));
  // Where in the video the packet read lies, to place what the demuxer said about it.
  std::int64_t here = AV_NOPTS_VALUE;
  if (r >= 0) {
    const std::int64_t ts = packet->pts != AV_NOPTS_VALUE ? packet->pts : packet->dts;
    if (ts != AV_NOPTS_VALUE)
      here = av_rescale_q(ts, ctx->streams[packet->stream_index]->time_base, time_base);
  }
  // The demuxer logs what it had to skip (Matroska resynchronising after junk, a cut sample),
  // and that the file ended early. Frames decoded from the next video packet on may predict
  // from what was skipped.
  if (std::vector<std::string> lines = log.take(); !lines.empty()) {
    std::string said = lines.front();
    if (lines.size() > 1) said += " (and " + std::to_string(lines.size() - 1) + " more)";
    lost_from.insert(sent);
    if (ends_here) {
      if (!std::exchange(truncation_reported, true))
        truncated = "the file is truncated (" + said + ")";
    } else {
      lose(here, "the file is corrupt here (" + said + ")", false);
    }
  }
  if (at_end) {
    demuxed_all = true;
    return;
  }
  if (r < 0) {
    lost_from.insert(sent);
    lose(AV_NOPTS_VALUE, "cannot read the file: " + av_error(r), false);
    if (++failures_in_row > 16) demuxed_all = true;
    return;
  }
  failures_in_row = 0;
  const int index = packet->stream_index;
  if (index == video) {
    if (packet->flags & AV_PKT_FLAG_CORRUPT) {
      av_packet_unref(packet.get());
      lost_from.insert(sent);
      if (ends_here) {
        truncation_reported = true;
        lose(here, "the file is truncated (its last packet is cut)", true);
      } else {
        lose(here, "the file is corrupt here (a damaged packet)", true);
      }
      return;
    }
    const std::int64_t serial = sent++;
    unshown[serial] = packet->pts;
    if (ends_here) eof_serial = serial;
    decoder->opaque = packet_tag::make(reader_number, serial);
#if TANDEM_COPY_OPAQUE
    packet->opaque = decoder->opaque;
#else
    decoder->reordered_opaque = serial;
#endif
    const int s = avcodec_send_packet(decoder.get(), packet.get());
    av_packet_unref(packet.get());
    if (s < 0 && s != AVERROR(EAGAIN) && s != AVERROR_EOF) decoder_failed(s, serial);
    return;
  }
  if (index >= 0 && index < static_cast<int>(kept.size()) && kept[index]) {
    // Packets outside the requested range stay behind.
    const AVStream* st = ctx->streams[index];
    bool inside = true;
    if (packet->pts != AV_NOPTS_VALUE) {
      const std::int64_t t = av_rescale_q(packet->pts, st->time_base, time_base);
      inside = t >= start_pts && t < end_pts;
    }
    if (inside) {
      AVPacket* copy = av_packet_alloc();
      if (!copy) throw std::bad_alloc();
      av_packet_move_ref(copy, packet.get());
      std::lock_guard lock(pending_mutex);
      pending.emplace_back(copy, index, to_rational(st->time_base));
    }
  }
  av_packet_unref(packet.get());
}

void VideoReader::Impl::convert(Frame& frame) {
  const int w = info.width, h = info.height;
  if (frame.empty()) frame = Frame(w, h, PixelFormat::rgba8);
  if (!is_video_format(frame.format()) || frame.width() != w || frame.height() != h) {
    throw Error("VideoReader::read: the frame must be rgba8, rgba32f or of a plane format, " +
                std::to_string(w) + "x" + std::to_string(h) + ", not " +
                std::string(to_string(frame.format())) + " " + std::to_string(frame.width()) + "x" +
                std::to_string(frame.height()));
  }
  if (frame.format() == PixelFormat::rgba8) {
    to_rgba(frame.row(0), static_cast<int>(frame.pitch()));
  } else if (frame.format() == PixelFormat::rgba32f) {
    to_float_rgba(frame);
  } else {
    to_planes(frame);
  }
}

// The decoded picture's format and colours as swscale takes them: its matrix and range for
// Y'CbCr (the matrix by the picture's height where it is not marked), full range otherwise.
ScalerSide VideoReader::Impl::decoded_side() const {
  const auto source = static_cast<AVPixelFormat>(decoded->format);
  if (!is_yuv(source)) return {source};
  return {source, sws_matrix(stored_value(decoded->colorspace), info.height),
          stored_value(decoded->color_range) == AVCOL_RANGE_JPEG || is_full_range_yuvj(source)};
}

// The decoded picture as float RGBA, through swscale's planar float R'G'B' (which took a 10-bit
// ramp there and back exactly, where its RGBA64 was 0.4% off at the top).
void VideoReader::Impl::to_float_rgba(Frame& frame) {
  const int w = info.width, h = info.height;
  const ScalerSide from = decoded_side();
  allocate_picture(rgba.get(), AV_PIX_FMT_GBRPF32LE, w, h);
  if (!to_float_scaler.scale(w, h, from, decoded->data, decoded->linesize, {AV_PIX_FMT_GBRPF32LE},
                             rgba->data, rgba->linesize)) {
    const char* n = av_get_pix_fmt_name(from.format);
    throw Error("cannot decode '" + name + "': cannot convert pixel format " + (n ? n : "unknown") +
                " to float RGB");
  }
  detail::gbrpf32_to_rgba(*rgba, frame);
}

// The decoded picture as RGBA, rows `pitch` bytes apart from `dst`.
void VideoReader::Impl::to_rgba(std::uint8_t* dst, int pitch) {
  const int w = info.width, h = info.height;
  const auto source = static_cast<AVPixelFormat>(decoded->format);
  sws = sws_getCachedContext(sws, w, h, source, w, h, AV_PIX_FMT_RGBA, kSwsFlags, nullptr, nullptr,
                             nullptr);
  if (!sws) {
    const char* n = av_get_pix_fmt_name(source);
    throw Error("cannot decode '" + name + "': cannot convert pixel format " + (n ? n : "unknown") +
                " to RGBA");
  }
  if (is_yuv(source)) {
    const ScalerSide from = decoded_side();
    sws_setColorspaceDetails(sws, sws_getCoefficients(from.matrix), from.full_range,
                             sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
  }
  std::uint8_t* const rows[4] = {dst, nullptr, nullptr, nullptr};
  const int stride[4] = {pitch, 0, 0, 0};
  sws_scale(sws, decoded->data, decoded->linesize, 0, h, rows, stride);
}

// The decoded picture into a frame of a plane format: its planes as they are when they hold its
// samples, else resampled in the picture's own encoding. A picture that has none (RGB, grey, a
// matrix YuvEncoding cannot name) takes the RGBA read's way, then VideoWriter's from RGBA into the
// encoding players assume for the height, so both reads of it agree.
void VideoReader::Impl::to_planes(Frame& frame) {
  const int w = info.width, h = info.height;
  const auto source = static_cast<AVPixelFormat>(decoded->format);
  const std::optional<YuvEncoding> own = yuv_encoding_of(source, stored_value(decoded->colorspace),
                                                         stored_value(decoded->color_range), h);
  const YuvEncoding encoding =
      own.value_or(YuvEncoding{yuv_matrix(sws_matrix(AVCOL_SPC_UNSPECIFIED, h)), false});
  if (own && same_samples(source, frame.format())) {
    copy_planes(*decoded, frame);
  } else {
    const AVPixelFormat target = av_format(frame.format());
    allocate_picture(planes.get(), target, w, h);
    const ScalerSide to{target, sws_matrix(encoding.matrix), encoding.full_range};
    bool converted;
    if (own) {
      converted = to_planes_scaler.scale(w, h, {source, to.matrix, to.full_range}, decoded->data,
                                         decoded->linesize, to, planes->data, planes->linesize);
    } else {
      allocate_picture(rgba.get(), AV_PIX_FMT_RGBA, w, h);
      to_rgba(rgba->data[0], rgba->linesize[0]);
      converted = to_planes_scaler.scale(w, h, {AV_PIX_FMT_RGBA}, rgba->data, rgba->linesize, to,
                                         planes->data, planes->linesize);
    }
    if (!converted) {
      const char* n = av_get_pix_fmt_name(own ? source : AV_PIX_FMT_RGBA);
      throw Error("cannot decode '" + name + "': cannot convert pixel format " +
                  (n ? n : "unknown") + " to " + av_get_pix_fmt_name(target));
    }
    copy_planes(*planes, frame);
  }
  frame.set_yuv_encoding(encoding);
}

// A frame out of the decoder: true when it was handed out.
bool VideoReader::Impl::take_frame(Frame& frame, std::int64_t& pts) {
  const std::int64_t serial = serial_of_decoded();
  std::int64_t t = decoded->best_effort_timestamp;
  if (t == AV_NOPTS_VALUE) t = next_pts();
  // Some files repeat a timestamp; frames handed out keep strictly increasing ones.
  if (last_pts != AV_NOPTS_VALUE && t <= last_pts) t = last_pts + 1;
  // What the decoder logged while it decoded this frame's packet, and the frame's own flags.
  // decode_error_flags are read only without frame threads: FFmpeg 5.1's frame threads may hand
  // out a frame before the thread decoding it has set them (H.264 sets them as it finishes the
  // picture), so with them the flags come and go from run to run.
  const bool said = !log.take_packet(serial).empty();
  const bool damaged = (decoded->flags & AV_FRAME_FLAG_CORRUPT) ||
                       (!frame_threads && decoded->decode_error_flags) || said;
  if (t < start_pts) {  // decoded only to reach the start
    av_frame_unref(decoded.get());
    return false;
  }
  report_losses(std::min(t, end_pts - 1));
  if (t >= end_pts) {
    av_frame_unref(decoded.get());
    end_of_range(false);
    return false;
  }
  if (damaged) {
    av_frame_unref(decoded.get());
    note_dependents();
    lost_from.insert(serial + 1);  // frames decoded after it may predict from it
    // A damaged frame from the last packet of the file is the cut-off last one.
    if (serial == eof_serial && !truncation_reported) {
      truncation_reported = true;
      problem("the file is truncated (the frame is damaged and the file ends here)", true, t);
    } else {
      problem("the frame is damaged (the decoder reported errors)", true, t);
    }
    last_pts = t;
    return false;
  }
  // A packet decoded before this frame's with damage whose frame is still to come (a reference
  // frame shown after the B-frames that predict from it): this frame may predict from it.
  if (const std::int64_t earlier = log.first_packet(); earlier >= 0 && earlier < serial) {
    lost_from.insert(earlier + 1);
  }
  if (!lost_from.empty() && *lost_from.begin() <= serial) {
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(58, 7, 100)
    const bool key = decoded->flags & AV_FRAME_FLAG_KEY;
#else
    const bool key = decoded->key_frame;
#endif
    if (!key) {
      // Stopping, this is the first frame lost: one shown before a damaged frame it predicts from.
      if (options.on_error == OnDecodeError::stop) {
        av_frame_unref(decoded.get());
        problem("the frame depends on a damaged frame", true, t);
      }
      if (dependents++ == 0) dependents_first = returned + passed;
      ++passed;
      last_pts = t;
      av_frame_unref(decoded.get());
      return false;
    }
    // A key frame predicts from nothing before it.
    lost_from.erase(lost_from.begin(), lost_from.upper_bound(serial));
    note_dependents();
  }
  if (decoded->width != info.width || decoded->height != info.height) {
    av_frame_unref(decoded.get());
    finished = true;
    throw Error("cannot decode '" + name + "' at frame " + std::to_string(returned + passed) +
                ": the picture size changes from " + std::to_string(info.width) + "x" +
                std::to_string(info.height) + " to " + std::to_string(decoded->width) + "x" +
                std::to_string(decoded->height) + ", which tandem does not support");
  }
  convert(frame);
  av_frame_unref(decoded.get());
  pts = last_pts = t;
  ++returned;
  return true;
}

void VideoReader::Impl::end_of_range(bool reached_end_of_file) {
  if (finished) return;
  finished = true;
  // Packets of the other streams past the last frame do not belong to the range.
  if (last_pts != AV_NOPTS_VALUE) {
    const std::int64_t cut = std::min(end_pts, last_pts + frame_step);
    std::lock_guard lock(pending_mutex);
    std::erase_if(pending, [&](const StreamPacket& p) {
      return p.pts() != AV_NOPTS_VALUE &&
             av_rescale_q(p.pts(), to_av(p.time_base()), time_base) >= cut;
    });
  }
  if (reached_end_of_file) {
    // Packets that never gave a frame, and what was lost after the last frame.
    while (!unshown.empty()) {
      const auto [serial, at] = *unshown.begin();
      unshown.erase(unshown.begin());
      give_up_on(serial, at);
    }
    report_losses(std::numeric_limits<std::int64_t>::max());
    note_dependents();
    // Failures that no packet given up on could be taken for (frame threads): lost frames all
    // the same, counted at the end.
    for (; unclaimed_failures > 0; --unclaimed_failures) {
      problem("the frame cannot be decoded (the " + std::string(decoder->codec->name) +
                  " decoder failed: " + av_error(unclaimed_code) + ")",
              true);
    }
    if (!truncated.empty()) problem(std::exchange(truncated, {}), false);
  }
  note_dependents();
  if (!reached_end_of_file || info.duration <= 0 || truncation_reported) return;
  // A file that stops well before the length it states was cut short. Half a second (or three
  // frames) of slack keeps streams whose last frame lasts longer than the others from failing.
  const double step = frame_step * av_q2d(time_base);
  const double got = last_pts == AV_NOPTS_VALUE ? 0.0 : seconds(last_pts) + step;
  const double expected =
      std::min(info.duration, options.duration > 0 ? options.start + options.duration
                                                   : std::numeric_limits<double>::max());
  if (got < expected - std::max(0.5, 3 * step)) {
    problem("the file is truncated (it says the video lasts " + seconds_text(info.duration) + ")",
            false);
  }
}

bool VideoReader::Impl::read(Frame& frame, std::int64_t& pts) {
  if (finished) return false;
  if (options.max_frames > 0 && returned >= options.max_frames) {
    end_of_range(false);
    return false;
  }
  LogScope scope(&log);
  int errors_in_row = 0;
  while (!finished) {
    const int r = avcodec_receive_frame(decoder.get(), decoded.get());
    if (r == 0) {
      errors_in_row = 0;
      if (take_frame(frame, pts)) return true;
      continue;
    }
    if (r == AVERROR_EOF || (r == AVERROR(EAGAIN) && flushing)) {
      end_of_range(true);
      break;
    }
    if (r != AVERROR(EAGAIN)) {
      decoder_failed(r, sent - 1);
      if (++errors_in_row > 64) {
        end_of_range(true);
        break;
      }
      continue;
    }
    feed();
  }
  return false;
}

VideoReader::VideoReader(const fs::path& path, VideoReaderOptions options)
    : impl_(std::make_unique<Impl>(path, options)) {}
VideoReader::~VideoReader() = default;
VideoReader::VideoReader(VideoReader&&) noexcept = default;
VideoReader& VideoReader::operator=(VideoReader&&) noexcept = default;
const VideoInfo& VideoReader::info() const {
  return impl_->info;
}
const std::vector<StreamInfo>& VideoReader::streams() const {
  return impl_->streams;
}
bool VideoReader::read(Frame& frame, std::int64_t& pts) {
  return impl_->read(frame, pts);
}
std::vector<StreamPacket> VideoReader::take_packets() {
  std::lock_guard lock(impl_->pending_mutex);
  std::vector<StreamPacket> out(std::make_move_iterator(impl_->pending.begin()),
                                std::make_move_iterator(impl_->pending.end()));
  impl_->pending.clear();
  return out;
}
std::int64_t VideoReader::frames_read() const {
  return impl_->returned;
}
const std::vector<std::string>& VideoReader::errors() const {
  return impl_->errors;
}
const std::string& VideoReader::name() const {
  return impl_->name;
}

}  // namespace tandem
