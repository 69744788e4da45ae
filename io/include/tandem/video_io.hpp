#pragma once
// Video files in and out of tandem frames, through FFmpeg's libraries: a VideoReader decodes the
// video stream of a file into RGBA8 frames, or into frames of a plane format (yuv420p,
// yuv422p10, yuv444p12, ...) that keep the decoder's Y'CbCr planes (VideoInfo::yuv_encoding says
// when they can), a VideoWriter encodes either into a
// new file, and the input's other streams (audio, subtitles, data) travel from one to the other
// packet for packet, unchanged, or with the audio re-encoded (VideoWriterOptions::audio_codec):
//
//   VideoReader reader("in.mkv", {.keep_packets = true});
//   VideoWriter writer("out.mkv", reader, {.codec = "ffv1"});
//   const VideoInfo& info = reader.info();
//   Frame frame = pipeline.make_frame(info.width, info.height, PixelFormat::rgba8);
//   std::int64_t pts;
//   while (reader.read(frame, pts)) {
//     ... filter frame ...
//     writer.write(frame, pts);
//     writer.write(reader.take_packets());
//   }
//   writer.write(reader.take_packets());
//   writer.finish();
//
// FFmpeg's own log is silenced (set TANDEM_FFMPEG_LOG=error|warning|info|verbose|debug to see it);
// what it says about a failure ends up in the Error thrown.
#include <array>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tandem/frame.hpp"

struct AVPacket;

namespace tandem {

/// A rational number, the way FFmpeg keeps frame rates and time bases.
struct Rational {
  int num = 0;
  int den = 1;
  double value() const { return den ? static_cast<double>(num) / den : 0.0; }
  bool valid() const { return num > 0 && den > 0; }
  bool operator==(const Rational&) const = default;
};

/// What a VideoReader does with a frame it cannot decode.
enum class OnDecodeError {
  stop,  ///< throw Error naming the frame
  skip,  ///< leave the frame out, note it in VideoReader::errors(), and go on
};

struct VideoReaderOptions {
  /// Seconds from the start of the file: seek to the key frame before it, then return the frames
  /// whose timestamp is at or after it.
  double start = 0;
  /// Seconds of video to read from `start`; 0 reads to the end.
  double duration = 0;
  /// A range by the video's own timestamps (VideoInfo::time_base units), as a VideoSegment
  /// gives it, instead of start and duration: seek to the key frame at or before `from_pts`,
  /// return the frames with from_pts <= pts < to_pts. A VideoWriter keeps their timestamps as
  /// they are. The defaults leave the range open.
  std::int64_t from_pts = -std::numeric_limits<std::int64_t>::max();
  std::int64_t to_pts = std::numeric_limits<std::int64_t>::max();
  /// Return at most this many frames; 0 for no limit.
  std::int64_t max_frames = 0;
  OnDecodeError on_error = OnDecodeError::stop;
  /// Queue the packets of the other streams (streams()) for take_packets(); a VideoWriter that
  /// copies them needs this. Off, they are read and dropped.
  bool keep_packets = false;
  /// Decoder threads; 0 lets FFmpeg choose.
  int threads = 0;
};

/// The video stream of a file.
struct VideoInfo {
  int width = 0;
  int height = 0;
  /// Nominal frames per second; {0, 1} when the file does not say.
  Rational frame_rate;
  /// Seconds per unit of the timestamps read() returns and VideoWriter::write() takes.
  Rational time_base;
  /// Width of a pixel over its height (anamorphic video is not 1:1); VideoWriter keeps it.
  Rational sample_aspect_ratio{1, 1};
  /// Seconds of the video stream as the file states it; 0 when unknown.
  double duration = 0;
  /// Frames in the stream as the file states it; 0 when unknown.
  std::int64_t frame_count = 0;
  /// Degrees a player turns the picture clockwise for display (0, 90, 180 or 270 in practice),
  /// from the display matrix.
  int rotation = 0;
  /// The display matrix as stored (rotation and flips), when the file has one; VideoWriter writes
  /// it back as it is.
  std::optional<std::array<std::int32_t, 9>> display_matrix;
  std::string codec;         ///< "h264", "ffv1", ...
  std::string pixel_format;  ///< the decoder's, e.g. "yuv420p"
  std::string container;     ///< FFmpeg's demuxer name, e.g. "matroska,webm"
  /// Bits per component of the decoder's pixel format (8, 10, 12). read() keeps them in plane
  /// frames of that depth (yuv420p10, yuv422p12, ...) and in rgba32f; rgba8 frames have 8.
  int bit_depth = 8;
  /// The colour description the stream states, in FFmpeg's names; empty where it states none.
  /// VideoWriter writes them back (RGBA frames keep the input's primaries and transfer).
  std::string color_primaries;  ///< "bt709", "bt2020", ...
  std::string color_transfer;   ///< "bt709", "smpte2084" (PQ), "arib-std-b67" (HLG), ...
  std::string color_matrix;     ///< "bt709", "bt2020nc", "smpte170m", ...
  std::string color_range;      ///< "tv" (limited) or "pc" (full)
  /// Where subsampled chroma samples sit ("left", "center", "topleft", ...), where the stream
  /// says; VideoWriter writes it back where the output keeps the subsampling.
  std::string chroma_location;
  /// The brightest light of the content in nits, as HDR10's static metadata in the container
  /// states it (MaxCLL, else the mastering display's peak); 0 when it states neither.
  double peak_luminance = 0;
  /// How the decoder's Y'CbCr codes stand for colours, when a YuvEncoding can say it: the
  /// pixel format is a Y'CbCr one and the matrix BT.601 (smpte170m, bt470bg), BT.709, BT.2020
  /// (bt2020nc) or unstated (then BT.709 from 720 lines, else BT.601, as the RGBA conversion
  /// assumes); full range for "pc" and the yuvj formats. Empty for RGB and grey pictures and for
  /// other matrices (fcc, smpte240m, ycgco, bt2020c, ...): read RGBA8 frames from those.
  std::optional<YuvEncoding> yuv_encoding;
};

enum class StreamKind { audio, subtitle, data };

/// A stream of the input besides the video, whose packets a VideoWriter copies unchanged.
struct StreamInfo {
  int index = 0;  ///< the stream's index in the input file
  StreamKind kind = StreamKind::data;
  std::string codec;     ///< "aac", "pcm_s16le", "subrip", ...
  std::string language;  ///< "" when the file does not say
};

/// One compressed packet of a non-video stream, owned; move-only.
class StreamPacket {
 public:
  StreamPacket() = default;
  StreamPacket(AVPacket* packet, int stream, Rational time_base);  // takes ownership
  StreamPacket(StreamPacket&& other) noexcept;
  StreamPacket& operator=(StreamPacket&& other) noexcept;
  ~StreamPacket();

  /// Index of its stream in the input file (StreamInfo::index).
  int stream() const { return stream_; }
  /// Timestamp in time_base() units; INT64_MIN when the packet has none.
  std::int64_t pts() const;
  Rational time_base() const { return time_base_; }
  /// The compressed bytes.
  const std::uint8_t* data() const;
  std::size_t size() const;
  AVPacket* get() const { return packet_; }

 private:
  AVPacket* packet_ = nullptr;
  int stream_ = -1;
  Rational time_base_;
};

/// Decodes the video stream of a file into RGBA8, rgba32f or plane frames.
class VideoReader {
 public:
  /// Opens `path`, or "-" for a YUV4MPEG2 (.y4m) stream on standard input. Throws Error with one
  /// line naming the file and the problem: missing, empty, not a media file, truncated, corrupt,
  /// no video stream, no decoder.
  explicit VideoReader(const std::filesystem::path& path, VideoReaderOptions options = {});
  ~VideoReader();
  VideoReader(VideoReader&&) noexcept;
  VideoReader& operator=(VideoReader&&) noexcept;

  const VideoInfo& info() const;
  /// The other streams (audio, subtitles, data; attachments and cover art are left out), in
  /// file order.
  const std::vector<StreamInfo>& streams() const;

  /// Decodes the next frame into `frame` and its timestamp, in info().time_base units, into
  /// `pts` (as in the file; strictly increasing, a repeated one nudged by a tick). The frame is
  /// rgba8, rgba32f or of a plane format, of info()'s size (an empty one is allocated as rgba8),
  /// and may be one made for the devices: rows are written where frame.row() and
  /// frame.plane_row() say. RGBA is converted with swscale. A plane frame gets the decoder's
  /// planes as they are when they are its layout and depth, else rearranged or resampled by
  /// swscale in the picture's own encoding (NV12 and P010 to yuv420p and yuv420p10 exactly); its yuv_encoding() is the picture's (info().yuv_encoding, unless the stream
  /// changes it). Pictures without one (RGB, grey, other matrices) are converted as for RGBA8,
  /// then into BT.709 from 720 lines, else BT.601, limited range, as VideoWriter converts RGBA8.
  /// Returns false at the end of the stream or of the requested range.
  /// A frame that cannot be decoded throws Error("... at frame N (T s): ...") with N counted from
  /// 0 in display order from the start of the range, or with on_error = skip is left out. A file
  /// that ends before the length it states (truncated) is an error too.
  bool read(Frame& frame, std::int64_t& pts);

  /// Packets of the other streams demuxed so far, in file order, when options.keep_packets is
  /// set: those outside the requested time range are dropped. May be called from another thread
  /// while read() runs (a decode stage ahead of an encode stage); nothing else may.
  std::vector<StreamPacket> take_packets();

  /// Frames returned by read() so far.
  std::int64_t frames_read() const;
  /// One line per problem passed over with on_error = skip.
  const std::vector<std::string>& errors() const;
  /// The name the messages use: the path, or "standard input".
  const std::string& name() const;

 private:
  friend class VideoWriter;  // copies the input's streams (codec parameters, metadata)
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct VideoWriterOptions {
  /// An encoder ("libx264", "ffv1", "mpeg4") or a codec ("h264"). Empty chooses by container:
  /// libx264 for .mp4, .mov and .mkv (mpeg4 when FFmpeg lacks libx264), raw pictures for .y4m
  /// (wrapped_avframe, which FFmpeg 5's muxer requires), and FFmpeg's default for the others.
  std::string codec;
  /// Constant-quality factor for encoders that have one (libx264: 0..51, lower is better);
  /// -1 keeps the encoder's default. Outside the encoder's range, or for an encoder without one,
  /// the writer refuses it.
  int crf = -1;
  /// The pictures' size; 0 keeps the source's (Pipeline::output_size() gives a graph's that
  /// scales, crops, pads or transposes).
  int width = 0, height = 0;
  /// Target bits per second; 0 keeps the encoder's default.
  std::int64_t bitrate = 0;
  /// The encoder's pixel format ("yuv420p", "yuv444p", "bgra", ...). Empty chooses: the
  /// source's own Y'CbCr format where the encoder has it (as FFmpeg does: yuv422p, yuv420p10le,
  /// yuv444p12le, ...), in lossless codecs unless deeper than default_bit_depth, in lossy ones
  /// where it is 8-bit or both are deeper, and where the size holds whole chroma samples; else
  /// for lossless codecs the least lossy format from RGBA (ffv1 keeps RGBA exactly); yuv444p for
  /// .y4m; for the others yuv420p10le for a source deeper than 8 bits where the encoder has it,
  /// else yuv420p (yuv444p when the size is odd). "Deeper than 8 bits" with default_bit_depth.
  std::string pix_fmt;
  /// The source's depth as the default pixel format sees it (0: the source's own): tandem gives
  /// 8 where tonemap makes SDR video of HDR, which SDR players take as 8-bit 4:2:0.
  int default_bit_depth = 0;
  /// When the writer is aborted (abort(), or destroyed before finish()), finish what was written
  /// as a playable file at the output path instead of removing it.
  bool keep_partial = false;
  /// A writer made from a VideoReader copies its streams(); false writes the video alone.
  bool copy_streams = true;
  /// Kinds of the reader's streams left out of the copy (FFmpeg's -an, -sn, -dn).
  bool no_audio = false, no_subtitles = false, no_data = false;
  /// The colour description written, in FFmpeg's names ("bt709", "iec61966-2-1", ...), where
  /// the frames' differs from the source's (tonemap makes SDR sRGB of HDR); empty keeps the
  /// source's. HDR10's static metadata is copied only while the transfer written is PQ or HLG.
  std::string color_primaries, color_transfer, color_matrix;
  /// The reader's streams to copy, by their index in the input file (StreamInfo::index, as
  /// FFmpeg's -map 0:N counts); empty copies them all, less the kinds left out above. An index
  /// that is not one of the reader's streams() (the video stream included) is an error.
  std::vector<int> streams;
  /// What the copied audio streams become: empty or "copy" copies their packets unchanged; an
  /// encoder or codec ("aac", "libopus", "flac", "pcm_s16le", "libmp3lame", ...) re-encodes each
  /// (FFmpeg's -c:a), keeping its sample rate and channel layout where the encoder takes them
  /// (else the encoder's nearest rate and number of channels) and its timestamps. An
  /// unknown encoder, one that is not audio, or one whose codec the container cannot hold is an
  /// error; a source codec the container cannot hold is not, since it is re-encoded.
  std::string audio_codec;
  /// Encoder threads; 0 lets FFmpeg choose.
  int threads = 0;
};

/// Encodes RGBA8, rgba32f or plane frames into a new file whose container is named by the extension, and
/// copies other streams' packets into it. The file is written to a hidden temporary file beside the
/// output and renamed into place by finish(), so a failed run never leaves a half-written file.
class VideoWriter {
 public:
  /// A new file at `path` ("-" writes YUV4MPEG2 to standard output) with one video stream of
  /// `video`'s width, height, frame_rate, time_base (timestamps given to write() are in it;
  /// {0,1} means 1/frame_rate) and display_matrix, else rotation. Everything that can be checked
  /// is checked before anything is written: unknown container, unknown encoder, a codec or copied
  /// stream the container cannot hold (avformat_query_codec), a pixel format the encoder lacks,
  /// an output directory that does not exist or cannot be written.
  VideoWriter(const std::filesystem::path& path, const VideoInfo& video,
              VideoWriterOptions options = {});
  /// As above with `source`'s video stream, copying its other streams (metadata, language,
  /// dispositions) when options.copy_streams; the source must keep its packets then. An audio or
  /// subtitle stream the container cannot hold is an error, unless options.audio_codec re-encodes
  /// the audio (left_out() lists the rest). A source
  /// started at T seconds (VideoReaderOptions::start) gives a file whose timestamps, frames and
  /// copied packets alike, are T seconds earlier: it starts where the input's stream started.
  VideoWriter(const std::filesystem::path& path, const VideoReader& source,
              VideoWriterOptions options = {});
  /// Aborts when neither finish() nor abort() was called.
  ~VideoWriter();
  VideoWriter(const VideoWriter&) = delete;
  VideoWriter& operator=(const VideoWriter&) = delete;

  /// Encodes a frame of the video's size, rgba8, rgba32f or of a plane format, with timestamp
  /// `pts` (time_base units); pts must increase from frame to frame. A plane frame's planes go to
  /// the encoder as they are when it takes their layout and depth (yuv420p or yuvj420p, yuv422p10le, ...)
  /// in the frame's yuv_encoding(); otherwise swscale converts
  /// them from that encoding into the encoder's pixel format and colours, those an RGBA8 frame
  /// would get. The colour tags written do not depend on the frames.
  void write(const Frame& frame, std::int64_t pts);
  /// Copies packets of the source's other streams unchanged, or re-encodes audio ones with
  /// options.audio_codec (packets of streams not copied are dropped), interleaved with the video
  /// by timestamp.
  void write(std::vector<StreamPacket> packets);
  void write(StreamPacket packet);

  /// Flushes the encoders (audio ones too), writes the container's trailer and renames the file
  /// into place.
  void finish();
  /// Stops writing: removes the temporary file, or with keep_partial finishes what was written
  /// as a playable file at the output path. Never throws.
  void abort() noexcept;

  /// The encoder used ("libx264") and its pixel format ("yuv420p").
  const std::string& codec() const;
  const std::string& pixel_format() const;
  /// Bits per component of that pixel format (8, 10, ...).
  int bit_depth() const;
  std::int64_t frames_written() const;
  /// One line per thing of the source the container has no place for, so it is not written:
  /// data streams it cannot hold, audio or subtitles where it holds none at all (YUV4MPEG2), a
  /// display rotation it cannot store (FFmpeg 5 stores it in MP4 and MOV only).
  const std::vector<std::string>& left_out() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// True when `path` names a video file by its extension (.mp4, .mkv, .mov, .webm, .avi, .y4m,
/// ...) or is "-".
bool is_video_path(const std::filesystem::path& path);

}  // namespace tandem
