// What VideoReader and VideoWriter share of FFmpeg (av_support.hpp).
#include "av_support.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include <tbb/parallel_for.h>

extern "C" {
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
}

// FFmpeg 6.1 moved stream side data (the display matrix) into the codec parameters.
#define TANDEM_CODECPAR_SIDE_DATA (LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 31, 102))

namespace tandem::detail {

// ---- FFmpeg's log: silenced, its error lines kept for the Error a reader or writer throws ----

std::mutex& log_mutex() {
  static std::mutex m;
  return m;
}

namespace {

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

}  // namespace

namespace packet_tag {

void* make(std::uint64_t reader, std::int64_t serial) {
  return reinterpret_cast<void*>(
      static_cast<std::uintptr_t>(kMarker | (reader & kReaderMask) << kSerialBits |
                                  (static_cast<std::uint64_t>(serial) & kSerialMask)));
}
std::unordered_map<std::uint64_t, LogSink*>& owners() {
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

namespace {

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

}  // namespace

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

LogScope::LogScope(LogSink* sink) : previous_(t_log_sink) {
  t_log_sink = sink;
}
LogScope::~LogScope() {
  t_log_sink = previous_;
}

std::filesystem::path temporary_beside(const std::filesystem::path& output) {
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path dir =
      output.has_parent_path() ? output.parent_path() : std::filesystem::path(".");
  return dir / ("." + output.stem().string() + ".tandem-" + std::to_string(::getpid()) + "-" +
                std::to_string(counter++) + output.extension().string());
}

std::string av_error(int code) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, buf, sizeof buf);
  return buf;
}

std::string explain(LogSink& log, int code) {
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

void allocate_picture(AVFrame* picture, AVPixelFormat format, int width, int height) {
  if (picture->data[0] && picture->format == format) return;
  av_frame_unref(picture);
  picture->format = format;
  picture->width = width;
  picture->height = height;
  if (av_frame_get_buffer(picture, 0) < 0) throw std::bad_alloc();
}

AVPixelFormat av_format(PixelFormat format) {
  switch (format) {
    case PixelFormat::yuv420p10:
      return AV_PIX_FMT_YUV420P10LE;
    case PixelFormat::yuv420p12:
      return AV_PIX_FMT_YUV420P12LE;
    case PixelFormat::yuv422p:
      return AV_PIX_FMT_YUV422P;
    case PixelFormat::yuv422p10:
      return AV_PIX_FMT_YUV422P10LE;
    case PixelFormat::yuv422p12:
      return AV_PIX_FMT_YUV422P12LE;
    case PixelFormat::yuv444p:
      return AV_PIX_FMT_YUV444P;
    case PixelFormat::yuv444p10:
      return AV_PIX_FMT_YUV444P10LE;
    case PixelFormat::yuv444p12:
      return AV_PIX_FMT_YUV444P12LE;
    default:
      return AV_PIX_FMT_YUV420P;
  }
}

bool same_samples(AVPixelFormat format, PixelFormat frame) {
  return format == av_format(frame) ||
         (frame == PixelFormat::yuv420p && format == AV_PIX_FMT_YUVJ420P) ||
         (frame == PixelFormat::yuv422p && format == AV_PIX_FMT_YUVJ422P) ||
         (frame == PixelFormat::yuv444p && format == AV_PIX_FMT_YUVJ444P);
}

std::optional<PixelFormat> plane_format_of(AVPixelFormat format) {
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(format);
  if (!d || !is_yuv(format) || (d->flags & (AV_PIX_FMT_FLAG_ALPHA | AV_PIX_FMT_FLAG_PAL)) ||
      d->nb_components != 3) {
    return std::nullopt;
  }
  return plane_format(d->log2_chroma_w, d->log2_chroma_h, d->comp[0].depth);
}

bool is_video_format(PixelFormat format) {
  return format == PixelFormat::rgba8 || format == PixelFormat::rgba32f || is_planar(format);
}

void gbrpf32_to_rgba(const AVFrame& from, Frame& to) {
  tbb::parallel_for(0, to.height(), [&](int y) {
    auto plane = [&](int p) {
      return reinterpret_cast<const float*>(from.data[p] + y * from.linesize[p]);
    };
    const float *g = plane(0), *b = plane(1), *r = plane(2);
    float* dst = to.row_as<float>(y);
    for (int x = 0; x < to.width(); ++x) {
      dst[4 * x] = r[x];
      dst[4 * x + 1] = g[x];
      dst[4 * x + 2] = b[x];
      dst[4 * x + 3] = 1.0f;
    }
  });
}

void rgba_to_gbrpf32(const Frame& from, AVFrame& to) {
  tbb::parallel_for(0, from.height(), [&](int y) {
    auto plane = [&](int p) { return reinterpret_cast<float*>(to.data[p] + y * to.linesize[p]); };
    float *g = plane(0), *b = plane(1), *r = plane(2);
    const float* src = from.row_as<float>(y);
    for (int x = 0; x < from.width(); ++x) {
      r[x] = src[4 * x];
      g[x] = src[4 * x + 1];
      b[x] = src[4 * x + 2];
    }
  });
}

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

// FFmpeg 7.1 moved the encoders' lists behind avcodec_get_supported_config.
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(61, 13, 100)
namespace {
template <typename T>
const T* supported(const AVCodec* codec, AVCodecConfig config) {
  const void* list = nullptr;
  if (avcodec_get_supported_config(nullptr, codec, config, 0, &list, nullptr) < 0) return nullptr;
  return static_cast<const T*>(list);
}
}  // namespace

const AVPixelFormat* encoder_pixel_formats(const AVCodec* codec) {
  return supported<AVPixelFormat>(codec, AV_CODEC_CONFIG_PIX_FORMAT);
}
const AVSampleFormat* encoder_sample_formats(const AVCodec* codec) {
  return supported<AVSampleFormat>(codec, AV_CODEC_CONFIG_SAMPLE_FORMAT);
}
const int* encoder_sample_rates(const AVCodec* codec) {
  return supported<int>(codec, AV_CODEC_CONFIG_SAMPLE_RATE);
}
const AVChannelLayout* encoder_channel_layouts(const AVCodec* codec) {
  return supported<AVChannelLayout>(codec, AV_CODEC_CONFIG_CHANNEL_LAYOUT);
}
#else
const AVPixelFormat* encoder_pixel_formats(const AVCodec* codec) {
  return codec->pix_fmts;
}
const AVSampleFormat* encoder_sample_formats(const AVCodec* codec) {
  return codec->sample_fmts;
}
const int* encoder_sample_rates(const AVCodec* codec) {
  return codec->supported_samplerates;
}
const AVChannelLayout* encoder_channel_layouts(const AVCodec* codec) {
  return codec->ch_layouts;
}
#endif

}  // namespace tandem::detail
