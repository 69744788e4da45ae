#pragma once
// VideoReader's state (video_reader.cpp), here for VideoWriter, which copies the streams of the
// reader it is given.
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "av_support.hpp"
#include "tandem/video_io.hpp"

namespace tandem {

struct VideoReader::Impl {
  std::string name;
  VideoReaderOptions options;
  detail::LogSink log;
  std::unique_ptr<AVFormatContext, detail::InputCloser> format;
  std::unique_ptr<AVCodecContext, detail::CodecFree> decoder;
  SwsContext* sws = nullptr;        // decoded pictures to RGBA
  detail::Scaler to_planes_scaler;  // decoded pictures, or RGBA ones, to a frame's plane format
  detail::Scaler to_float_scaler;   // decoded pictures to planar float R'G'B' (rgba32f frames)
  detail::PacketPtr packet = detail::new_packet();
  detail::FramePtr decoded = detail::new_frame();
  // What to_planes_scaler gives, before it is copied.
  detail::FramePtr planes = detail::new_frame();
  // Pictures without a YuvEncoding on their way to planes.
  detail::FramePtr rgba = detail::new_frame();
  int video = -1;
  AVRational time_base{0, 1};
  std::int64_t frame_step = 1;  // one frame in time_base units, for frames without timestamps
  VideoInfo info;
  // HDR10's static metadata (mastering display, content light level): the container's, else
  // the first frame's; what a writer copying this video writes with it.
  std::vector<detail::SideData> hdr_metadata;
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

  Impl(const std::filesystem::path& path, VideoReaderOptions opts);
  ~Impl();
  void open(const std::filesystem::path& path);
  bool read(Frame& frame, std::int64_t& pts);
  bool take_frame(Frame& frame, std::int64_t& pts);
  void feed();
  void convert(Frame& frame);
  void to_rgba(std::uint8_t* dst, int pitch);
  void to_float_rgba(Frame& frame);
  detail::ScalerSide decoded_side() const;
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

}  // namespace tandem
