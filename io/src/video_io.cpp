#include "tandem/video_io.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <unordered_map>
#include <utility>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/display.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include "tandem/error.hpp"

// FFmpeg 6.1 moved stream side data (the display matrix) into the codec parameters.
#define TANDEM_CODECPAR_SIDE_DATA (LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 31, 102))
// FFmpeg 6 carries a packet's opaque to its frame (and deprecates reordered_opaque, which does
// the same in 5.x).
#ifdef AV_CODEC_FLAG_COPY_OPAQUE
#define TANDEM_COPY_OPAQUE 1
#else
#define TANDEM_COPY_OPAQUE 0
#endif

namespace tandem {
namespace {

namespace fs = std::filesystem;

// ---- FFmpeg's log: silenced, its error lines kept for the Error a reader or writer throws ----

// Error lines FFmpeg logged on behalf of one reader or writer. A decoder's lines are kept per
// packet (see packet_tag), so that a frame is judged by what was said while its own packet was
// decoded, whichever thread decoded it and whenever the frame comes out.
class LogSink {
 public:
  void add(std::string line) {  // under log_mutex()
    if (lines_.size() < 8) lines_.push_back(std::move(line));
  }
  void add_for_packet(std::int64_t serial, std::string line) {  // under log_mutex()
    std::vector<std::string>& lines = packets_[serial];
    if (lines.size() < 4) lines.push_back(std::move(line));
    if (packets_.size() > 4096) packets_.erase(packets_.begin());  // packets never claimed
  }
  std::vector<std::string> take();
  /// What the decoder said while it decoded packet `serial`.
  std::vector<std::string> take_packet(std::int64_t serial);
  /// The first packet the decoder said something about that is not taken yet; -1 for none.
  std::int64_t first_packet() const;

 private:
  std::vector<std::string> lines_;
  std::map<std::int64_t, std::vector<std::string>> packets_;
};

std::mutex& log_mutex() {
  static std::mutex m;
  return m;
}
// Contexts (format, codec, I/O) whose messages belong to a sink: decoder slice threads log from
// other threads with the codec context as their source.
std::unordered_map<const void*, LogSink*>& log_owners() {
  static std::unordered_map<const void*, LogSink*> owners;
  return owners;
}
// The sink of the reader or writer working on this thread, for sources not registered (the
// demuxer while it opens, the I/O context).
thread_local LogSink* t_log_sink = nullptr;
int g_forward_level = AV_LOG_QUIET;

// A reader tags each packet it sends to its decoder in AVCodecContext.opaque: a reader number and
// the packet's serial. FFmpeg's frame threads copy opaque from the caller's context into the
// worker's context when a packet is handed to the worker (update_context_from_user), so what a
// worker logs carries the packet it is decoding; slice threads log with the caller's context.
// The tag is a number, never dereferenced, with the top bit set so that it is no pointer.
namespace packet_tag {
constexpr int kSerialBits = 40;
constexpr std::uint64_t kMarker = std::uint64_t{1} << 63;
constexpr std::uint64_t kSerialMask = (std::uint64_t{1} << kSerialBits) - 1;
constexpr std::uint64_t kReaderMask = (std::uint64_t{1} << (63 - kSerialBits)) - 1;

void* make(std::uint64_t reader, std::int64_t serial) {
  return reinterpret_cast<void*>(
      static_cast<std::uintptr_t>(kMarker | (reader & kReaderMask) << kSerialBits |
                                  (static_cast<std::uint64_t>(serial) & kSerialMask)));
}
// Readers by number, for the log callback.
std::unordered_map<std::uint64_t, LogSink*>& owners() {  // under log_mutex()
  static std::unordered_map<std::uint64_t, LogSink*> readers;
  return readers;
}
std::atomic<std::uint64_t> g_next_reader{1};
}  // namespace packet_tag

std::vector<std::string> LogSink::take() {
  std::lock_guard lock(log_mutex());
  return std::exchange(lines_, {});
}

std::vector<std::string> LogSink::take_packet(std::int64_t serial) {
  std::lock_guard lock(log_mutex());
  const auto it = packets_.find(serial);
  if (it == packets_.end()) return {};
  std::vector<std::string> lines = std::move(it->second);
  packets_.erase(it);
  return lines;
}

std::int64_t LogSink::first_packet() const {
  std::lock_guard lock(log_mutex());
  return packets_.empty() ? -1 : packets_.begin()->first;
}

void log_callback(void* source, int level, const char* format, va_list args) {
  if (level <= g_forward_level) {
    va_list copy;
    va_copy(copy, args);
    av_log_default_callback(source, level, format, copy);
    va_end(copy);
  }
  const AVClass* cls = source ? *static_cast<const AVClass* const*>(source) : nullptr;
  std::uint64_t tag = 0;
  if (cls == avcodec_get_class()) {
    tag = reinterpret_cast<std::uintptr_t>(static_cast<const AVCodecContext*>(source)->opaque);
  }
  // Besides errors, a decoder's error concealment says at info level that it concealed damage
  // ("concealing 3 DC, 3 AC, 3 MV errors in P frame", where it sets decode_error_flags): that is
  // damage in the frame of the packet being decoded too.
  if (level > AV_LOG_ERROR &&
      (level > AV_LOG_INFO || !(tag & packet_tag::kMarker) || !std::strstr(format, "concealing"))) {
    return;
  }
  char text[768];
  std::vsnprintf(text, sizeof text, format, args);
  std::string line = text;
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  if (line.empty()) return;
  if (cls && cls->item_name) line = std::string(cls->item_name(source)) + ": " + line;
  std::lock_guard lock(log_mutex());
  if (tag & packet_tag::kMarker) {
    const auto reader =
        packet_tag::owners().find((tag >> packet_tag::kSerialBits) & packet_tag::kReaderMask);
    if (reader != packet_tag::owners().end()) {
      reader->second->add_for_packet(static_cast<std::int64_t>(tag & packet_tag::kSerialMask),
                                     std::move(line));
      return;
    }
  }
  LogSink* sink = t_log_sink;
  if (auto it = log_owners().find(source); it != log_owners().end()) sink = it->second;
  if (sink) sink->add(std::move(line));
}

void init_ffmpeg_log() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (const char* env = std::getenv("TANDEM_FFMPEG_LOG")) {
      const std::string v = env;
      g_forward_level = v == "fatal"     ? AV_LOG_FATAL
                        : v == "error"   ? AV_LOG_ERROR
                        : v == "warning" ? AV_LOG_WARNING
                        : v == "info"    ? AV_LOG_INFO
                        : v == "verbose" ? AV_LOG_VERBOSE
                        : v == "debug"   ? AV_LOG_DEBUG
                                         : AV_LOG_QUIET;
    }
    av_log_set_callback(log_callback);
  });
}

void own_log(const void* context, LogSink* sink) {
  if (!context) return;
  std::lock_guard lock(log_mutex());
  log_owners()[context] = sink;
}

void disown_log(LogSink* sink) {
  std::lock_guard lock(log_mutex());
  std::erase_if(log_owners(), [&](const auto& entry) { return entry.second == sink; });
  std::erase_if(packet_tag::owners(), [&](const auto& entry) { return entry.second == sink; });
}

// Sends this thread's unattributed FFmpeg errors to `sink` for the scope.
class LogScope {
 public:
  explicit LogScope(LogSink* sink) : previous_(t_log_sink) { t_log_sink = sink; }
  ~LogScope() { t_log_sink = previous_; }
  LogScope(const LogScope&) = delete;
  LogScope& operator=(const LogScope&) = delete;

 private:
  LogSink* previous_;
};

std::string av_error(int code) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, buf, sizeof buf);
  return buf;
}

// What FFmpeg said about a failure: its logged lines, else the error code's text.
std::string explain(LogSink& log, int code = 0) {
  std::vector<std::string> lines = log.take();
  std::string text;
  for (const auto& line : lines) {
    if (text.find(line) != std::string::npos) continue;
    if (!text.empty()) text += "; ";
    text += line;
    if (text.size() > 300) break;
  }
  if (code < 0) {
    const std::string code_text = av_error(code);
    if (text.empty()) return code_text;
    if (code != AVERROR(EINVAL) && code != AVERROR_INVALIDDATA) text += " (" + code_text + ")";
  }
  return text.empty() ? "unknown error" : text;
}

// ---- small owners of FFmpeg objects ----

struct InputCloser {
  void operator()(AVFormatContext* c) const { avformat_close_input(&c); }
};
struct CodecFree {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct FrameFree {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct PacketFree {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct SwsFree {
  void operator()(SwsContext* s) const { sws_freeContext(s); }
};
using PacketPtr = std::unique_ptr<AVPacket, PacketFree>;
using FramePtr = std::unique_ptr<AVFrame, FrameFree>;

PacketPtr new_packet() {
  PacketPtr p(av_packet_alloc());
  if (!p) throw std::bad_alloc();
  return p;
}
FramePtr new_frame() {
  FramePtr f(av_frame_alloc());
  if (!f) throw std::bad_alloc();
  return f;
}

Rational to_rational(AVRational r) {
  return {r.num, r.den};
}
AVRational to_av(Rational r) {
  return {r.num, r.den};
}

std::string seconds_text(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", seconds);
  return buf;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

const char* kind_name(AVMediaType type) {
  switch (type) {
    case AVMEDIA_TYPE_VIDEO:
      return "video";
    case AVMEDIA_TYPE_AUDIO:
      return "audio";
    case AVMEDIA_TYPE_SUBTITLE:
      return "subtitle";
    case AVMEDIA_TYPE_DATA:
      return "data";
    case AVMEDIA_TYPE_ATTACHMENT:
      return "attachment";
    default:
      return "unknown";
  }
}

bool is_yuv(AVPixelFormat format) {
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(format);
  return d && !(d->flags & AV_PIX_FMT_FLAG_RGB) && d->nb_components >= 3;
}

bool is_full_range_yuvj(AVPixelFormat f) {
  return f == AV_PIX_FMT_YUVJ420P || f == AV_PIX_FMT_YUVJ422P || f == AV_PIX_FMT_YUVJ444P ||
         f == AV_PIX_FMT_YUVJ440P || f == AV_PIX_FMT_YUVJ411P;
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

// The YCbCr matrix of a stream (an AVColorSpace value); unmarked ones and values FFmpeg does not
// know follow what players assume: BT.709 from 720 lines.
int sws_matrix(int space, int height) {
  switch (space) {
    case AVCOL_SPC_BT709:
      return SWS_CS_ITU709;
    case AVCOL_SPC_FCC:
      return SWS_CS_FCC;
    case AVCOL_SPC_BT470BG:
    case AVCOL_SPC_SMPTE170M:
      return SWS_CS_ITU601;
    case AVCOL_SPC_SMPTE240M:
      return SWS_CS_SMPTE240M;
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL:
      return SWS_CS_BT2020;
    default:
      return height >= 720 ? SWS_CS_ITU709 : SWS_CS_ITU601;
  }
}

constexpr int kSwsFlags = SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP;

YuvEncoding::Matrix yuv_matrix(int sws_matrix) {
  return sws_matrix == SWS_CS_ITU709   ? YuvEncoding::Matrix::bt709
         : sws_matrix == SWS_CS_BT2020 ? YuvEncoding::Matrix::bt2020
                                       : YuvEncoding::Matrix::bt601;
}

int sws_matrix(YuvEncoding::Matrix matrix) {
  return matrix == YuvEncoding::Matrix::bt709    ? SWS_CS_ITU709
         : matrix == YuvEncoding::Matrix::bt2020 ? SWS_CS_BT2020
                                                 : SWS_CS_ITU601;
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

// One side of a conversion: the pixel format and, for Y'CbCr ones, the matrix (SWS_CS_*) and
// range; for the others FFmpeg's conventions hold (RGB has no range, grey is full range).
struct ScalerSide {
  AVPixelFormat format = AV_PIX_FMT_NONE;
  int matrix = SWS_CS_DEFAULT;
  bool full_range = true;
  bool operator==(const ScalerSide&) const = default;
};

// A swscale context made again when the sides change. The ranges are given before swscale
// initialises it: it chooses a plain copy between planes of one format then, and ignores a range
// given afterwards (sws_setColorspaceDetails; FFmpeg 5.1 copies yuv420p unchanged from limited to
// full range).
class Scaler {
 public:
  Scaler() = default;
  Scaler(const Scaler&) = delete;
  Scaler& operator=(const Scaler&) = delete;
  ~Scaler() { sws_freeContext(sws_); }

  // Converts a `width` x `height` picture; false when swscale cannot convert these formats.
  bool scale(int width, int height, const ScalerSide& from, const std::uint8_t* const src[],
             const int src_stride[], const ScalerSide& to, std::uint8_t* const dst[],
             const int dst_stride[]);

 private:
  SwsContext* sws_ = nullptr;
  int width_ = 0, height_ = 0;
  ScalerSide from_, to_;
};

bool Scaler::scale(int width, int height, const ScalerSide& from, const std::uint8_t* const src[],
                   const int src_stride[], const ScalerSide& to, std::uint8_t* const dst[],
                   const int dst_stride[]) {
  if (!sws_ || width != width_ || height != height_ || from != from_ || to != to_) {
    sws_freeContext(sws_);
    sws_ = sws_alloc_context();
    if (!sws_) throw std::bad_alloc();
    width_ = width;
    height_ = height;
    from_ = from;
    to_ = to;
    av_opt_set_int(sws_, "srcw", width, 0);
    av_opt_set_int(sws_, "srch", height, 0);
    av_opt_set_int(sws_, "src_format", from.format, 0);
    av_opt_set_int(sws_, "dstw", width, 0);
    av_opt_set_int(sws_, "dsth", height, 0);
    av_opt_set_int(sws_, "dst_format", to.format, 0);
    av_opt_set_int(sws_, "sws_flags", kSwsFlags, 0);
    av_opt_set_int(sws_, "src_range", from.full_range, 0);
    av_opt_set_int(sws_, "dst_range", to.full_range, 0);
    if (sws_init_context(sws_, nullptr, nullptr) < 0) {
      sws_freeContext(sws_);
      sws_ = nullptr;
      return false;
    }
    sws_setColorspaceDetails(sws_, sws_getCoefficients(from.matrix), from.full_range,
                             sws_getCoefficients(to.matrix), to.full_range, 0, 1 << 16, 1 << 16);
  }
  sws_scale(sws_, src, src_stride, 0, height, dst, dst_stride);
  return true;
}

// Gives `picture` buffers for a `width` x `height` picture in `format`, unless it has them.
void allocate_picture(AVFrame* picture, AVPixelFormat format, int width, int height) {
  if (picture->data[0] && picture->format == format) return;
  av_frame_unref(picture);
  picture->format = format;
  picture->width = width;
  picture->height = height;
  if (av_frame_get_buffer(picture, 0) < 0) throw std::bad_alloc();
}

// FFmpeg's name for the layout of a plane format's samples.
AVPixelFormat av_format(PixelFormat format) {
  return format == PixelFormat::yuv420p10 ? AV_PIX_FMT_YUV420P10LE : AV_PIX_FMT_YUV420P;
}

// True when pictures in `format` hold the samples of frames in plane format `frame` as they are
// (the yuvj formats differ from theirs in the range they state only).
bool same_samples(AVPixelFormat format, PixelFormat frame) {
  return format == av_format(frame) ||
         (frame == PixelFormat::yuv420p && format == AV_PIX_FMT_YUVJ420P);
}

bool is_video_format(PixelFormat format) {
  return format == PixelFormat::rgba8 || is_planar(format);
}

// The three planes of a picture into a Frame of a plane format of its size, and back.
void copy_planes(const AVFrame& from, Frame& to) {
  for (int p = 0; p < 3; ++p) {
    for (int y = 0; y < to.plane_height(p); ++y) {
      std::memcpy(to.plane_row(p, y),
                  from.data[p] + static_cast<std::ptrdiff_t>(y) * from.linesize[p],
                  to.plane_width(p) * sample_bytes(to.format()));
    }
  }
}
void copy_planes(const Frame& from, AVFrame& to) {
  for (int p = 0; p < 3; ++p) {
    for (int y = 0; y < from.plane_height(p); ++y) {
      std::memcpy(to.data[p] + static_cast<std::ptrdiff_t>(y) * to.linesize[p],
                  from.plane_row(p, y), from.plane_width(p) * sample_bytes(from.format()));
    }
  }
}

std::optional<std::array<std::int32_t, 9>> display_matrix_of(const AVStream* st) {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
#if TANDEM_CODECPAR_SIDE_DATA
  if (const AVPacketSideData* sd =
          av_packet_side_data_get(st->codecpar->coded_side_data, st->codecpar->nb_coded_side_data,
                                  AV_PKT_DATA_DISPLAYMATRIX)) {
    data = sd->data;
    size = sd->size;
  }
#else
  data = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, &size);
#endif
  if (!data || size < sizeof(std::int32_t) * 9) return std::nullopt;
  std::array<std::int32_t, 9> m;
  std::memcpy(m.data(), data, sizeof m);
  return m;
}

void set_display_matrix(AVStream* st, const std::array<std::int32_t, 9>& m) {
#if TANDEM_CODECPAR_SIDE_DATA
  AVPacketSideData* sd =
      av_packet_side_data_new(&st->codecpar->coded_side_data, &st->codecpar->nb_coded_side_data,
                              AV_PKT_DATA_DISPLAYMATRIX, sizeof m, 0);
  std::uint8_t* data = sd ? sd->data : nullptr;
#else
  std::uint8_t* data = av_stream_new_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, sizeof m);
#endif
  if (!data) throw std::bad_alloc();
  std::memcpy(data, m.data(), sizeof m);
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

struct VideoReader::Impl {
  std::string name;
  VideoReaderOptions options;
  LogSink log;
  std::unique_ptr<AVFormatContext, InputCloser> format;
  std::unique_ptr<AVCodecContext, CodecFree> decoder;
  SwsContext* sws = nullptr;  // decoded pictures to RGBA
  Scaler to_planes_scaler;    // decoded pictures, or RGBA ones, to a frame's plane format
  PacketPtr packet = new_packet();
  FramePtr decoded = new_frame();
  FramePtr planes = new_frame();  // what to_planes_scaler gives, before it is copied
  FramePtr rgba = new_frame();    // pictures without a YuvEncoding on their way to planes
  int video = -1;
  AVRational time_base{0, 1};
  std::int64_t frame_step = 1;  // one frame in time_base units, for frames without timestamps
  VideoInfo info;
  std::vector<StreamInfo> streams;
  std::vector<bool> kept;    // per input stream: its packets are queued
  std::mutex pending_mutex;  // take_packets() may run on another thread than read()
  std::deque<StreamPacket> pending;

  std::int64_t origin = 0;  // the stream's first timestamp: --start counts from it
  std::int64_t start_pts = std::numeric_limits<std::int64_t>::min();
  std::int64_t end_pts = std::numeric_limits<std::int64_t>::max();
  std::int64_t returned = 0;  // frames handed out
  std::int64_t passed = 0;    // frames of the range left out as bad
  std::int64_t last_pts = AV_NOPTS_VALUE;
  bool demuxed_all = false;
  bool flushing = false;
  bool finished = false;
  bool truncation_reported = false;
  int failures_in_row = 0;
  std::vector<std::string> errors;

  // Damage is tied to packets, not to the moment FFmpeg says something: each video packet sent
  // to the decoder gets a serial (decode order), which tags what the decoder logs while decoding
  // it (packet_tag) and which the decoder carries to the packet's frame (reordered_opaque, or
  // opaque from FFmpeg 6). Losses are reported in display order. So what is found, and the frame
  // numbers it gets, do not depend on the decoder's threads or how far ahead it runs.
  std::uint64_t reader_number = 0;
  bool frame_threads = false;  // the decoder decodes several frames at once
  std::int64_t sent = 0;       // video packets sent to the decoder
  // Packets sent whose frame has not come out yet: serial -> pts (AV_NOPTS_VALUE if none).
  std::map<std::int64_t, std::int64_t> unshown;
  std::int64_t eof_serial = -1;  // the packet read as the file ended
  // Frames lost before the decoder (a damaged packet, junk in the file): reported in display
  // order, once the frames shown before them are out. Keyed by timestamp.
  struct Loss {
    std::string what;
    bool lost_frame = false;
  };
  std::multimap<std::int64_t, Loss> losses;
  // Serials from which decoded frames may predict from lost data: a frame decoded from such a
  // packet on is left out, unless it is a key frame, which ends the wait.
  std::set<std::int64_t> lost_from;
  std::map<std::int64_t, int> failed;  // serial -> error, packets the decoder failed on
  int unclaimed_failures = 0;          // failures with frame threads, whose packet is unknown
  int unclaimed_code = 0;
  std::int64_t dependents_first = 0;  // frames left out for lost data, as one range
  std::int64_t dependents = 0;
  std::string truncated;  // the demuxer found the file cut short: reported after the last frame

  Impl(const fs::path& path, VideoReaderOptions opts);
  ~Impl();
  void open(const fs::path& path);
  bool read(Frame& frame, std::int64_t& pts);
  bool take_frame(Frame& frame, std::int64_t& pts);
  void feed();
  void convert(Frame& frame);
  void to_rgba(std::uint8_t* dst, int pitch);
  void to_planes(Frame& frame);
  void end_of_range(bool reached_end_of_file);
  void problem(const std::string& what, bool lost_frame, std::int64_t at = AV_NOPTS_VALUE);
  void lose(std::int64_t at, std::string what, bool lost_frame);
  void report_losses(std::int64_t up_to);
  std::int64_t serial_of_decoded();
  void decoder_failed(int code, std::int64_t serial);
  void give_up_on(std::int64_t serial, std::int64_t at);
  void note_dependents();
  double seconds(std::int64_t pts) const { return (pts - origin) * av_q2d(time_base); }
  std::int64_t next_pts() const {
    return last_pts == AV_NOPTS_VALUE ? std::max(origin, start_pts) : last_pts + frame_step;
  }
};

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
  info.yuv_encoding =
      yuv_encoding_of(static_cast<AVPixelFormat>(par->format), stored_value(par->color_space),
                      stored_value(par->color_range), info.height);
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
    throw Error("VideoReader::read: the frame must be rgba8, yuv420p or yuv420p10 " +
                std::to_string(w) + "x" + std::to_string(h) + ", not " +
                std::string(to_string(frame.format())) + " " + std::to_string(frame.width()) + "x" +
                std::to_string(frame.height()));
  }
  if (frame.format() == PixelFormat::rgba8) {
    to_rgba(frame.row(0), static_cast<int>(frame.pitch()));
  } else {
    to_planes(frame);
  }
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
    const bool full =
        stored_value(decoded->color_range) == AVCOL_RANGE_JPEG || is_full_range_yuvj(source);
    sws_setColorspaceDetails(sws,
                             sws_getCoefficients(sws_matrix(stored_value(decoded->colorspace), h)),
                             full, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
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

// ---- VideoWriter ----

namespace {

bool has_format(const AVPixelFormat* list, AVPixelFormat f) {
  for (; list && *list != AV_PIX_FMT_NONE; ++list) {
    if (*list == f) return true;
  }
  return false;
}

std::string format_list(const AVPixelFormat* list) {
  std::string s;
  for (; list && *list != AV_PIX_FMT_NONE; ++list) {
    s += std::string(s.empty() ? "" : ", ") + av_get_pix_fmt_name(*list);
  }
  return s;
}

const AVPixelFormat* encoder_formats(const AVCodec* codec) {
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(61, 13, 100)
  const void* list = nullptr;
  if (avcodec_get_supported_config(nullptr, codec, AV_CODEC_CONFIG_PIX_FORMAT, 0, &list, nullptr) <
      0) {
    return nullptr;
  }
  return static_cast<const AVPixelFormat*>(list);
#else
  return codec->pix_fmts;
#endif
}

std::atomic<unsigned> g_temp_counter{0};

}  // namespace

struct VideoWriter::Impl {
  fs::path path;
  fs::path temp;
  bool to_stdout = false;
  std::string name;
  VideoWriterOptions options;
  LogSink log;
  AVFormatContext* out = nullptr;
  std::unique_ptr<AVCodecContext, CodecFree> encoder;
  AVStream* video_stream = nullptr;
  SwsContext* sws = nullptr;  // RGBA frames to the encoder's pixel format
  Scaler from_planes;  // frames of plane formats whose planes the encoder cannot take as they are
  ScalerSide encoded;         // the encoder's pixel format and colours
  FramePtr picture = new_frame();
  FramePtr planes = new_frame();  // a yuv420p frame's planes, as swscale reads them
  PacketPtr packet = new_packet();
  AVRational input_time_base{0, 1};
  // Subtracted from every timestamp, in input_time_base units: a reader started at T seconds
  // gives a file that starts at 0 (as FFmpeg's -ss before -i does), its streams in step.
  std::int64_t shift = 0;
  AVRational encoder_time_base{0, 1};
  struct Copy {
    AVStream* stream;
  };
  std::unordered_map<int, Copy> copies;  // input stream index -> its copy
  bool header_written = false;
  bool closed = false;
  bool numbered = false;  // timestamps are frame numbers (YUV4MPEG2 has none of its own)
  std::int64_t frames = 0;
  std::int64_t last_pts = AV_NOPTS_VALUE;
  std::int64_t last_encoder_pts = AV_NOPTS_VALUE;
  std::string codec_name;
  std::string pix_fmt_name;
  std::vector<std::string> left_out;
  int width = 0, height = 0;

  Impl(const fs::path& p, const VideoInfo& video, const AVFormatContext* source,
       const std::vector<StreamInfo>* source_streams, int source_video, VideoWriterOptions opts);
  ~Impl() {
    abort();
    disown_log(&log);
  }
  std::string what() const { return "cannot write '" + name + "': "; }
  void drain(bool flush);
  void write_packet(AVPacket* pkt, const char* doing);
  void write(const Frame& frame, std::int64_t pts);
  void write_planes(const Frame& frame);
  void write(StreamPacket p);
  void finish();
  void close_file(bool keep);
  void abort() noexcept;
  void release();
};

VideoWriter::Impl::Impl(const fs::path& p, const VideoInfo& video, const AVFormatContext* source,
                        const std::vector<StreamInfo>* source_streams, int source_video,
                        VideoWriterOptions opts)
    : path(p), options(std::move(opts)) {
  init_ffmpeg_log();
  LogScope scope(&log);
  to_stdout = path == "-";
  name = to_stdout ? "standard output" : path.string();
  try {
    // ---- what can be checked before anything is opened ----
    width = video.width;
    height = video.height;
    if (width <= 0 || height <= 0) throw Error(what() + "the video has no picture size");
    const AVRational rate = to_av(video.frame_rate);
    input_time_base = video.time_base.valid()    ? to_av(video.time_base)
                      : video.frame_rate.valid() ? av_inv_q(rate)
                                                 : AVRational{0, 1};
    if (input_time_base.num <= 0)
      throw Error(what() + "the video needs a frame rate or a time base");

    const AVOutputFormat* container = nullptr;
    if (to_stdout) {
      container = av_guess_format("yuv4mpegpipe", nullptr, nullptr);
    } else {
      std::error_code ec;
      if (fs::is_directory(path, ec)) throw Error(what() + "it is a directory");
      container = av_guess_format(nullptr, path.filename().c_str(), nullptr);
      if (!container || !path.has_extension()) {
        throw Error(what() + "unknown video container '" + path.extension().string() +
                    "' (mp4, mkv, mov, webm, avi, y4m, ...)");
      }
      const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
      if (!fs::exists(dir, ec))
        throw Error(what() + "directory '" + dir.string() + "' does not exist");
      if (!fs::is_directory(dir, ec))
        throw Error(what() + "'" + dir.string() + "' is not a directory");
      if (::access(dir.c_str(), W_OK) != 0) throw Error(what() + std::strerror(errno));
    }
    const std::string container_name = container->name;
    const bool y4m = container_name == "yuv4mpegpipe";

    // The encoder: asked for by name (encoder or codec), else the container's usual one.
    const AVCodec* codec = nullptr;
    if (!options.codec.empty()) {
      codec = avcodec_find_encoder_by_name(options.codec.c_str());
      if (!codec) {
        const AVCodecDescriptor* d = avcodec_descriptor_get_by_name(options.codec.c_str());
        if (!d)
          throw Error(what() + "unknown codec '" + options.codec +
                      "' (ffmpeg -encoders lists them)");
        codec = avcodec_find_encoder(d->id);
        if (!codec) throw Error(what() + "FFmpeg has no encoder for codec '" + options.codec + "'");
      }
      if (codec->type != AVMEDIA_TYPE_VIDEO) {
        throw Error(what() + "'" + options.codec + "' is a " + kind_name(codec->type) +
                    " codec, not a video one");
      }
    } else if (y4m) {
      // Raw pictures; FFmpeg's YUV4MPEG2 muxer takes them wrapped as frames (5.x), or as rawvideo.
      codec = avcodec_find_encoder(container->video_codec);
    } else if (container_name == "mp4" || container_name == "mov" || container_name == "matroska") {
      codec = avcodec_find_encoder_by_name("libx264");
      if (!codec) codec = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
    } else if (container->video_codec != AV_CODEC_ID_NONE) {
      codec = avcodec_find_encoder(container->video_codec);
    }
    if (!codec) throw Error(what() + "no video encoder for the " + container_name + " container");
    codec_name = codec->name;

    // The container must hold the video codec and every copied stream's codec.
    const auto holds = [&](AVCodecID id) {
      if (y4m) return id == AV_CODEC_ID_RAWVIDEO || id == AV_CODEC_ID_WRAPPED_AVFRAME;
      return avformat_query_codec(container, id, FF_COMPLIANCE_NORMAL) != 0;
    };
    if (!holds(codec->id)) {
      throw Error(what() + "the " + container_name + " container cannot hold " +
                  avcodec_get_name(codec->id) + " video (choose another codec or container)");
    }
    std::vector<const AVStream*> to_copy;
    if (source && source_streams && options.copy_streams) {
      for (const StreamInfo& si : *source_streams) {
        if ((si.kind == StreamKind::audio && options.no_audio) ||
            (si.kind == StreamKind::subtitle && options.no_subtitles) ||
            (si.kind == StreamKind::data && options.no_data)) {
          continue;
        }
        const AVStream* in = source->streams[si.index];
        const AVMediaType type = in->codecpar->codec_type;
        // A container with no codec of this kind at all (YUV4MPEG2 has only video) leaves the
        // stream out, as ffmpeg does; one that has others but not this codec is an error.
        const AVCodecID usual = type == AVMEDIA_TYPE_AUDIO      ? container->audio_codec
                                : type == AVMEDIA_TYPE_SUBTITLE ? container->subtitle_codec
                                                                : container->data_codec;
        const int q =
            y4m ? -1
                : avformat_query_codec(container, in->codecpar->codec_id, FF_COMPLIANCE_NORMAL);
        const std::string stream = std::string(kind_name(type)) + " stream #" +
                                   std::to_string(si.index) + " (" +
                                   avcodec_get_name(in->codecpar->codec_id) + ")";
        // Audio and subtitles are content: losing them is an error. A container with no codec of
        // that kind at all (YUV4MPEG2 is video only) and data streams (timecodes, sensor
        // metadata) the container cannot hold are left out, as ffmpeg does, and said so.
        if (q == 0 && type != AVMEDIA_TYPE_DATA) {
          throw Error(what() + "the " + container_name + " container cannot hold the " + stream +
                      " that would be copied (choose another container, or leave the other "
                      "streams out)");
        }
        if (q <= 0 && (usual == AV_CODEC_ID_NONE || type == AVMEDIA_TYPE_DATA)) {
          left_out.push_back(stream + ": the " + container_name + " container cannot hold it");
          continue;
        }
        to_copy.push_back(in);
      }
    }

    // The pixel format the encoder gets.
    const AVPixelFormat* formats = encoder_formats(codec);
    AVPixelFormat pix = AV_PIX_FMT_NONE;
    if (!options.pix_fmt.empty()) {
      pix = av_get_pix_fmt(options.pix_fmt.c_str());
      if (pix == AV_PIX_FMT_NONE)
        throw Error(what() + "unknown pixel format '" + options.pix_fmt + "'");
      if (formats && !has_format(formats, pix)) {
        throw Error(what() + "the " + codec_name + " encoder cannot take pixel format " +
                    options.pix_fmt + " (it takes " + format_list(formats) + ")");
      }
    } else if (y4m) {
      pix = AV_PIX_FMT_YUV444P;
    } else if (!formats) {
      pix = AV_PIX_FMT_RGBA;
    } else {
      const AVCodecDescriptor* d = avcodec_descriptor_get(codec->id);
      // Lossless-only codecs (FFV1, not H.264, which can be either) keep RGBA as it is.
      const bool lossless =
          d && (d->props & AV_CODEC_PROP_LOSSLESS) && !(d->props & AV_CODEC_PROP_LOSSY);
      const bool even = width % 2 == 0 && height % 2 == 0;
      // 4:2:0 video keeps its planes in a lossless encoder that has them (VideoReader gives
      // them to the devices as they are), and its depth where the encoder has 10-bit 4:2:0.
      const AVPixelFormat source = av_get_pix_fmt(video.pixel_format.c_str());
      const bool planes_420 =
          video.yuv_encoding && (source == AV_PIX_FMT_YUV420P || source == AV_PIX_FMT_YUV420P10LE);
      if (lossless && planes_420 && has_format(formats, source)) {
        pix = source;
      } else if (!lossless && video.bit_depth > 8 && has_format(formats, AV_PIX_FMT_YUV420P10LE) &&
                 even) {
        pix = AV_PIX_FMT_YUV420P10LE;
      } else if (!lossless && has_format(formats, AV_PIX_FMT_YUV420P) && even) {
        pix = AV_PIX_FMT_YUV420P;
      } else if (!lossless && has_format(formats, AV_PIX_FMT_YUV444P)) {
        pix = AV_PIX_FMT_YUV444P;
      } else {
        pix = avcodec_find_best_pix_fmt_of_list(formats, AV_PIX_FMT_RGBA, 1, nullptr);
      }
    }
    pix_fmt_name = av_get_pix_fmt_name(pix);

    // ---- the encoder ----
    encoder.reset(avcodec_alloc_context3(codec));
    if (!encoder) throw std::bad_alloc();
    AVCodecContext* enc = encoder.get();
    enc->width = width;
    enc->height = height;
    enc->pix_fmt = pix;
    if (video.sample_aspect_ratio.valid())
      enc->sample_aspect_ratio = to_av(video.sample_aspect_ratio);
    encoder_time_base = input_time_base;
    if (y4m) {
      // YUV4MPEG2 states a frame rate and no timestamps: frames are numbered.
      if (!video.frame_rate.valid()) throw Error(what() + "YUV4MPEG2 needs a frame rate");
      encoder_time_base = av_inv_q(rate);
      numbered = true;
    } else if (encoder_time_base.den > 65535 && video.frame_rate.valid()) {
      encoder_time_base = av_inv_q(rate);  // MPEG-4 part 2 and others cap the denominator
    }
    enc->time_base = encoder_time_base;
    if (video.frame_rate.valid()) enc->framerate = rate;
    if (is_yuv(pix) && !is_full_range_yuvj(pix)) {
      // The input's matrix and range where it states them (the RGBA frames are matrix-free);
      // otherwise what players assume: BT.709 from 720 lines, limited range.
      const int matrix =
          video.color_matrix.empty() ? -1 : av_color_space_from_name(video.color_matrix.c_str());
      const bool hd = height >= 720;
      enc->colorspace = matrix >= 0 && matrix != AVCOL_SPC_RGB ? static_cast<AVColorSpace>(matrix)
                        : hd                                   ? AVCOL_SPC_BT709
                                                               : AVCOL_SPC_SMPTE170M;
      enc->color_range = video.color_range == "pc" ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
    }
    // The frames keep the input's primaries and transfer: the tags say so (HDR10's BT.2020 and
    // PQ included).
    if (!video.color_primaries.empty()) {
      const int v = av_color_primaries_from_name(video.color_primaries.c_str());
      if (v >= 0) enc->color_primaries = static_cast<AVColorPrimaries>(v);
    }
    if (!video.color_transfer.empty()) {
      const int v = av_color_transfer_from_name(video.color_transfer.c_str());
      if (v >= 0) enc->color_trc = static_cast<AVColorTransferCharacteristic>(v);
    }
    if (options.bitrate > 0) enc->bit_rate = options.bitrate;
    if (options.crf < -1) {
      throw Error(what() + "crf " + std::to_string(options.crf) +
                  " is negative (lower is better quality, 0 the best)");
    }
    if (options.crf >= 0) {
      const AVOption* crf = av_opt_find(enc->priv_data, "crf", nullptr, 0, 0);
      if (!crf) {
        throw Error(what() + "the " + codec_name + " encoder has no crf option (give a bit rate)");
      }
      // libx264 and libx265 declare their crf up to FLT_MAX and clamp it to 51 without a word;
      // the VP9 and AV1 encoders take 0..63. Others: what their option declares.
      double lo = std::max(crf->min, 0.0), hi = crf->max;
      if (codec_name == "libx264" || codec_name == "libx264rgb" || codec_name == "libx265") {
        hi = std::min(hi, 51.0);
      }
      if (codec_name == "libvpx-vp9" || codec_name == "libvpx" || codec_name == "libaom-av1" ||
          codec_name == "libsvtav1") {
        hi = std::min(hi, 63.0);
      }
      if (options.crf < lo || options.crf > hi) {
        std::ostringstream range;
        range << lo << ".." << hi;
        throw Error(what() + "crf " + std::to_string(options.crf) + " is out of the " + codec_name +
                    " encoder's range " + range.str());
      }
      av_opt_set_int(enc->priv_data, "crf", options.crf, 0);
    }
    enc->thread_count = options.threads;
    // x265 logs to stderr itself, past FFmpeg's log (which tandem keeps quiet): errors only.
    if (codec_name == "libx265") av_opt_set(enc->priv_data, "x265-params", "log-level=error", 0);
    if (container->flags & AVFMT_GLOBALHEADER) enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    int r = avcodec_open2(enc, codec, nullptr);
    if (r < 0) {
      throw Error(what() + "cannot open the " + codec_name + " encoder for " +
                  std::to_string(width) + "x" + std::to_string(height) + " " + pix_fmt_name + ": " +
                  explain(log, r));
    }
    own_log(enc, &log);

    // ---- the container, written to a hidden file beside the output ----
    std::string url;
    if (to_stdout) {
      url = "pipe:1";
    } else {
      const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
      temp = dir / ("." + path.stem().string() + ".tandem-" + std::to_string(::getpid()) + "-" +
                    std::to_string(g_temp_counter++) + path.extension().string());
      url = "file:" + temp.string();
    }
    r = avformat_alloc_output_context2(&out, container, nullptr, url.c_str());
    if (r < 0 || !out) throw Error(what() + explain(log, r));
    own_log(out, &log);
    video_stream = avformat_new_stream(out, nullptr);
    if (!video_stream) throw std::bad_alloc();
    if ((r = avcodec_parameters_from_context(video_stream->codecpar, enc)) < 0) {
      throw Error(what() + explain(log, r));
    }
    video_stream->time_base = encoder_time_base;
    // HDR10's static metadata (mastering display, content light level) goes with the stream.
    if (source && source_video >= 0) {
      for (const AVPacketSideDataType type :
           {AV_PKT_DATA_MASTERING_DISPLAY_METADATA, AV_PKT_DATA_CONTENT_LIGHT_LEVEL}) {
        std::size_t size = 0;
        const std::uint8_t* data =
            av_stream_get_side_data(source->streams[source_video], type, &size);
        if (!data || size == 0) continue;
        std::uint8_t* copy = av_stream_new_side_data(video_stream, type, size);
        if (!copy) throw std::bad_alloc();
        std::memcpy(copy, data, size);
      }
    }
    if (video.frame_rate.valid()) video_stream->avg_frame_rate = rate;
    std::optional<std::array<std::int32_t, 9>> matrix = video.display_matrix;
    if (!matrix && video.rotation % 360 != 0) {
      matrix.emplace();
      av_display_rotation_set(matrix->data(), video.rotation);  // clockwise, as the reader's
    }
    if (matrix) {
      set_display_matrix(video_stream, *matrix);
      // MP4 and MOV store it; Matroska from FFmpeg 6 on (as a projection pose); others never.
      static const char* holders[] = {"mp4", "mov", "3gp", "3g2", "ipod", "psp", "ismv", "f4v"};
      const bool held = std::any_of(std::begin(holders), std::end(holders),
                                    [&](const char* h) { return container_name == h; }) ||
                        ((container_name == "matroska" || container_name == "webm") &&
                         LIBAVFORMAT_VERSION_MAJOR >= 60);
      std::array<std::int32_t, 9> identity;
      av_display_rotation_set(identity.data(), 0);
      if (!held && *matrix != identity) {
        left_out.push_back("the display rotation (" + std::to_string(video.rotation) +
                           " degrees): the " + container_name + " container cannot store it");
      }
    }
    if (source) {
      av_dict_copy(&out->metadata, source->metadata, 0);
      av_dict_set(&out->metadata, "encoder", nullptr, 0);
      if (source_video >= 0) {
        const AVStream* in = source->streams[source_video];
        for (const char* key : {"language", "title", "handler_name"}) {
          if (const AVDictionaryEntry* e = av_dict_get(in->metadata, key, nullptr, 0)) {
            av_dict_set(&video_stream->metadata, key, e->value, 0);
          }
        }
        video_stream->disposition = in->disposition;
      }
    }
    for (const AVStream* in : to_copy) {
      AVStream* st = avformat_new_stream(out, nullptr);
      if (!st) throw std::bad_alloc();
      if ((r = avcodec_parameters_copy(st->codecpar, in->codecpar)) < 0) {
        throw Error(what() + explain(log, r));
      }
      st->codecpar->codec_tag = 0;  // the output container chooses its own tag
      st->time_base = in->time_base;
      st->disposition = in->disposition;
      av_dict_copy(&st->metadata, in->metadata, 0);
      av_dict_set(&st->metadata, "encoder", nullptr, 0);
      copies[in->index] = Copy{st};
    }

    r = avio_open(&out->pb, url.c_str(), AVIO_FLAG_WRITE);
    if (r < 0) {
      log.take();
      throw Error(what() + av_error(r));
    }
    own_log(out->pb, &log);
    r = avformat_write_header(out, nullptr);
    if (r < 0)
      throw Error(what() + "the " + container_name +
                  " container refused the streams: " + explain(log, r));
    header_written = true;
    sws = sws_getContext(width, height, AV_PIX_FMT_RGBA, width, height, pix, kSwsFlags, nullptr,
                         nullptr, nullptr);
    if (!sws) throw Error(what() + "cannot convert RGBA to " + pix_fmt_name);
    encoded.format = pix;
    if (is_yuv(pix)) {
      encoded.matrix = sws_matrix(enc->colorspace, height);
      encoded.full_range = is_full_range_yuvj(pix) || enc->color_range == AVCOL_RANGE_JPEG;
      sws_setColorspaceDetails(sws, sws_getCoefficients(SWS_CS_DEFAULT), 1,
                               sws_getCoefficients(encoded.matrix), encoded.full_range ? 1 : 0, 0,
                               1 << 16, 1 << 16);
    }
  } catch (...) {
    options.keep_partial = false;  // nothing worth keeping was written
    abort();
    disown_log(&log);
    throw;
  }
}

void VideoWriter::Impl::write_packet(AVPacket* pkt, const char* doing) {
  const int r = av_interleaved_write_frame(out, pkt);
  if (r < 0) throw Error(what() + doing + ": " + explain(log, r));
}

void VideoWriter::Impl::drain(bool flush) {
  AVCodecContext* enc = encoder.get();
  if (flush) avcodec_send_frame(enc, nullptr);
  for (;;) {
    const int r = avcodec_receive_packet(enc, packet.get());
    if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return;
    if (r < 0) throw Error(what() + "the " + codec_name + " encoder failed: " + explain(log, r));
    av_packet_rescale_ts(packet.get(), encoder_time_base, video_stream->time_base);
    packet->stream_index = video_stream->index;
    write_packet(packet.get(), "writing a video packet failed");
  }
}

void VideoWriter::Impl::write(const Frame& frame, std::int64_t pts) {
  if (closed) throw Error(what() + "the writer is closed");
  if (!is_video_format(frame.format()) || frame.width() != width || frame.height() != height) {
    throw Error(what() + "frames must be rgba8, yuv420p or yuv420p10 " + std::to_string(width) +
                "x" + std::to_string(height) + ", not " + std::string(to_string(frame.format())) +
                " " + std::to_string(frame.width()) + "x" + std::to_string(frame.height()));
  }
  if (last_pts != AV_NOPTS_VALUE && pts <= last_pts) {
    throw Error(what() + "frame timestamps must increase (" + std::to_string(pts) + " after " +
                std::to_string(last_pts) + ")");
  }
  LogScope scope(&log);
  std::int64_t t =
      numbered ? frames : av_rescale_q(pts - shift, input_time_base, encoder_time_base);
  if (last_encoder_pts != AV_NOPTS_VALUE && t <= last_encoder_pts) {
    throw Error(what() + "two frames fall on one tick of the time base " +
                std::to_string(encoder_time_base.num) + "/" +
                std::to_string(encoder_time_base.den));
  }
  int r = av_frame_make_writable(picture.get());
  if (!picture->data[0] || r < 0) {
    av_frame_unref(picture.get());
    picture->format = encoder->pix_fmt;
    picture->width = width;
    picture->height = height;
    if ((r = av_frame_get_buffer(picture.get(), 0)) < 0) throw std::bad_alloc();
  }
  if (is_planar(frame.format())) {
    write_planes(frame);
  } else {
    const std::uint8_t* src[4] = {frame.row(0), nullptr, nullptr, nullptr};
    const int src_stride[4] = {static_cast<int>(frame.pitch()), 0, 0, 0};
    sws_scale(sws, src, src_stride, 0, height, picture->data, picture->linesize);
  }
  picture->pts = t;
  picture->color_range = encoder->color_range;
  picture->colorspace = encoder->colorspace;
  picture->color_primaries = encoder->color_primaries;
  picture->color_trc = encoder->color_trc;
  r = avcodec_send_frame(encoder.get(), picture.get());
  if (r < 0) throw Error(what() + "the " + codec_name + " encoder failed: " + explain(log, r));
  drain(false);
  last_pts = pts;
  last_encoder_pts = t;
  ++frames;
}

// A frame of a plane format into the encoder's picture: its planes as they are when the encoder
// takes its samples in the frame's encoding; otherwise converted from it into the encoder's
// format and colours.
void VideoWriter::Impl::write_planes(const Frame& frame) {
  const YuvEncoding& e = frame.yuv_encoding();
  const ScalerSide from{av_format(frame.format()), sws_matrix(e.matrix), e.full_range};
  const bool as_they_are = same_samples(encoded.format, frame.format()) &&
                           encoded.matrix == from.matrix && encoded.full_range == from.full_range;
  if (as_they_are) {
    copy_planes(frame, *picture);
    return;
  }
  // The frame's rows are stored by row pairs, with no one pitch per plane that swscale could read.
  allocate_picture(planes.get(), from.format, width, height);
  copy_planes(frame, *planes);
  if (!from_planes.scale(width, height, from, planes->data, planes->linesize, encoded,
                         picture->data, picture->linesize)) {
    throw Error(what() + "cannot convert " + std::string(to_string(frame.format())) + " to " +
                pix_fmt_name);
  }
}

void VideoWriter::Impl::write(StreamPacket p) {
  if (closed) throw Error(what() + "the writer is closed");
  auto it = copies.find(p.stream());
  if (it == copies.end() || !p.get()) return;
  LogScope scope(&log);
  AVPacket* pkt = p.get();
  if (shift != 0) {
    const std::int64_t by = av_rescale_q(shift, input_time_base, to_av(p.time_base()));
    if (pkt->pts != AV_NOPTS_VALUE) pkt->pts -= by;
    if (pkt->dts != AV_NOPTS_VALUE) pkt->dts -= by;
  }
  av_packet_rescale_ts(pkt, to_av(p.time_base()), it->second.stream->time_base);
  pkt->stream_index = it->second.stream->index;
  pkt->pos = -1;
  write_packet(pkt, "copying a packet failed");
}

// Ends the file: `keep` finishes it (encoder flushed, trailer) and renames it into place;
// otherwise the temporary file is removed. Throws when keeping fails (and then removes it).
void VideoWriter::Impl::close_file(bool keep) {
  if (closed) return;
  closed = true;
  std::error_code ec;
  try {
    if (keep && header_written) {
      drain(true);
      int r = av_write_trailer(out);
      if (r < 0) throw Error(what() + "writing the trailer failed: " + explain(log, r));
      if (out->pb && out->pb->error < 0) throw Error(what() + av_error(out->pb->error));
      r = avio_closep(&out->pb);  // the pipe protocol leaves standard output open
      if (r < 0) throw Error(what() + av_error(r));
      if (!to_stdout) {
        fs::rename(temp, path, ec);
        if (ec) throw Error(what() + ec.message());
      }
    }
  } catch (...) {
    release();
    if (!temp.empty()) fs::remove(temp, ec);
    throw;
  }
  release();
  if (!keep && !temp.empty()) fs::remove(temp, ec);
}

void VideoWriter::Impl::release() {
  if (out) {
    if (out->pb) avio_closep(&out->pb);
    avformat_free_context(out);
    out = nullptr;
  }
  encoder.reset();
  sws_freeContext(sws);
  sws = nullptr;
}

void VideoWriter::Impl::finish() {
  if (closed) throw Error(what() + "the writer is closed");
  LogScope scope(&log);
  close_file(true);
}

void VideoWriter::Impl::abort() noexcept {
  if (closed) return;
  LogScope scope(&log);
  try {
    close_file(options.keep_partial && !to_stdout);
  } catch (...) {
    // abort() never throws; close_file removed what it could not finish.
  }
}

VideoWriter::VideoWriter(const fs::path& path, const VideoInfo& video, VideoWriterOptions options)
    : impl_(std::make_unique<Impl>(path, video, nullptr, nullptr, -1, std::move(options))) {}

VideoWriter::VideoWriter(const fs::path& path, const VideoReader& source,
                         VideoWriterOptions options) {
  const VideoReader::Impl& in = *source.impl_;
  if (options.copy_streams && !in.streams.empty() && !in.options.keep_packets) {
    throw Error("cannot write '" + path.string() + "': copying the streams of '" + in.name +
                "' needs its reader opened with keep_packets");
  }
  impl_ = std::make_unique<Impl>(path, in.info, in.format.get(), &in.streams, in.video,
                                 std::move(options));
  if (in.options.start > 0) impl_->shift = in.start_pts - in.origin;
}

VideoWriter::~VideoWriter() = default;
void VideoWriter::write(const Frame& frame, std::int64_t pts) {
  impl_->write(frame, pts);
}
void VideoWriter::write(std::vector<StreamPacket> packets) {
  for (auto& p : packets) impl_->write(std::move(p));
}
void VideoWriter::write(StreamPacket packet) {
  impl_->write(std::move(packet));
}
void VideoWriter::finish() {
  impl_->finish();
}
void VideoWriter::abort() noexcept {
  impl_->abort();
}
const std::string& VideoWriter::codec() const {
  return impl_->codec_name;
}
const std::string& VideoWriter::pixel_format() const {
  return impl_->pix_fmt_name;
}
int VideoWriter::bit_depth() const {
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(av_get_pix_fmt(impl_->pix_fmt_name.c_str()));
  return d ? d->comp[0].depth : 8;
}
std::int64_t VideoWriter::frames_written() const {
  return impl_->frames;
}
const std::vector<std::string>& VideoWriter::left_out() const {
  return impl_->left_out;
}

bool is_video_path(const fs::path& path) {
  if (path == "-") return true;
  static const char* known[] = {".mp4", ".m4v",  ".mov", ".mkv", ".webm", ".avi",
                                ".y4m", ".nut",  ".mxf", ".ts",  ".m2ts", ".mts",
                                ".mpg", ".mpeg", ".flv", ".ogv", ".wmv",  ".3gp"};
  const std::string ext = lower(path.extension().string());
  return std::any_of(std::begin(known), std::end(known), [&](const char* k) { return ext == k; });
}

}  // namespace tandem
