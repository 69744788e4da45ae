#pragma once
// What VideoReader and VideoWriter share of FFmpeg: its log, error text, owners of its objects, and
// pixel formats, colours and planes between its pictures and Frames.
#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libswscale/swscale.h>
}

#include "tandem/video_io.hpp"

namespace tandem::detail {

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

std::mutex& log_mutex();

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

void* make(std::uint64_t reader, std::int64_t serial);
// Readers by number, for the log callback.
std::unordered_map<std::uint64_t, LogSink*>& owners();  // under log_mutex()
extern std::atomic<std::uint64_t> g_next_reader;
}  // namespace packet_tag

void init_ffmpeg_log();
void own_log(const void* context, LogSink* sink);
void disown_log(LogSink* sink);

// Sends this thread's unattributed FFmpeg errors to `sink` for the scope.
class LogScope {
 public:
  explicit LogScope(LogSink* sink);
  ~LogScope();
  LogScope(const LogScope&) = delete;
  LogScope& operator=(const LogScope&) = delete;

 private:
  LogSink* previous_;
};

std::string av_error(int code);

// A hidden file beside `output`, unique to this process and call, that a writer fills and
// renames into place: ".NAME.tandem-PID-N.EXT" (the extension keeps the container FFmpeg
// guesses from it).
std::filesystem::path temporary_beside(const std::filesystem::path& output);

// What FFmpeg said about a failure: its logged lines, else the error code's text.
std::string explain(LogSink& log, int code = 0);

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
using PacketPtr = std::unique_ptr<AVPacket, PacketFree>;
using FramePtr = std::unique_ptr<AVFrame, FrameFree>;

PacketPtr new_packet();
FramePtr new_frame();

// A stream's side data of one type, owned (HDR10's static metadata travels from a reader's
// stream, or its first frame, to a writer's).
struct SideData {
  AVPacketSideDataType type;
  std::vector<std::uint8_t> bytes;
};

Rational to_rational(AVRational r);
AVRational to_av(Rational r);

const char* kind_name(AVMediaType type);

bool is_yuv(AVPixelFormat format);
bool is_full_range_yuvj(AVPixelFormat f);

// The YCbCr matrix of a stream (an AVColorSpace value); unmarked ones and values FFmpeg does not
// know follow what players assume: BT.709 from 720 lines.
int sws_matrix(int space, int height);

constexpr int kSwsFlags = SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP;

YuvEncoding::Matrix yuv_matrix(int sws_matrix);
int sws_matrix(YuvEncoding::Matrix matrix);

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

// Gives `picture` buffers for a `width` x `height` picture in `format`, unless it has them.
void allocate_picture(AVFrame* picture, AVPixelFormat format, int width, int height);

// FFmpeg's name for the layout of a plane format's samples.
AVPixelFormat av_format(PixelFormat format);

// True when pictures in `format` hold the samples of frames in plane format `frame` as they are
// (the yuvj formats differ from theirs in the range they state only).
bool same_samples(AVPixelFormat format, PixelFormat frame);
// The plane format holding the samples of Y'CbCr pictures of `format` (planar, semi-planar like
// NV12 and P010, either byte order), rearranged where not as they are; none for the others
// (RGB, grey, alpha, layouts tandem has no plane format of).
std::optional<PixelFormat> plane_format_of(AVPixelFormat format);

bool is_video_format(PixelFormat format);

// A planar float R'G'B' picture (AV_PIX_FMT_GBRPF32LE) into an rgba32f frame of its size, opaque;
// and back, alpha left out: how video deeper than 8 bits that has no plane format of tandem's
// (4:2:2, 4:4:4, 12 bits, RGB) keeps its depth through swscale.
void gbrpf32_to_rgba(const AVFrame& from, Frame& to);
void rgba_to_gbrpf32(const Frame& from, AVFrame& to);

// The three planes of a picture into a Frame of a plane format of its size, and back.
void copy_planes(const AVFrame& from, Frame& to);
void copy_planes(const Frame& from, AVFrame& to);

std::optional<std::array<std::int32_t, 9>> display_matrix_of(const AVStream* st);
void set_display_matrix(AVStream* st, const std::array<std::int32_t, 9>& m);

// What an encoder takes, as FFmpeg lists it (terminated as FFmpeg terminates each list); null
// where it takes anything.
const AVPixelFormat* encoder_pixel_formats(const AVCodec* codec);
const AVSampleFormat* encoder_sample_formats(const AVCodec* codec);
const int* encoder_sample_rates(const AVCodec* codec);
const AVChannelLayout* encoder_channel_layouts(const AVCodec* codec);

}  // namespace tandem::detail
