#pragma once
// AudioTranscoder: an input audio stream re-encoded on its way into the output file, for
// VideoWriterOptions::audio_codec. Its packets are decoded, converted by libswresample to what
// the encoder takes, regrouped into the encoder's frame size and encoded.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/audio_fifo.h>
#include <libswresample/swresample.h>
}

#include "av_support.hpp"

namespace tandem::detail {

// The encoder `name` (an encoder or a codec, as FFmpeg's -c:a takes), checked for a writer to
// `container` before anything is written. Throws Error starting with `what` when FFmpeg has no
// such encoder, when it is no audio encoder, or when the container cannot hold its codec.
const AVCodec* find_audio_encoder(const std::string& name, const AVOutputFormat* container,
                                  const std::string& what);

class AudioTranscoder {
 public:
  // Where encoded packets go, in the output stream's time base with its index set.
  using PacketSink = std::function<void(AVPacket*)>;

  // Opens a decoder for `in` and `encoder` for the output stream `out` (whose codec parameters it
  // fills; the muxer's header is not written yet). The source's sample rate and channel layout
  // are kept where the encoder takes them, else its nearest rate and its layout of the nearest
  // number of channels. Throws Error starting with `what`.
  AudioTranscoder(const AVStream* in, const AVCodec* encoder, const AVFormatContext* output,
                  AVStream* out, LogSink& log, std::string what, PacketSink sink);
  ~AudioTranscoder();
  AudioTranscoder(const AudioTranscoder&) = delete;
  AudioTranscoder& operator=(const AudioTranscoder&) = delete;

  // One packet of the input stream, timestamps in `time_base` (the writer's shift applied).
  void send(AVPacket* packet, AVRational time_base);
  // Drains the decoder, the resampler and the sample queue, and flushes the encoder.
  void finish();

 private:
  void decode(const AVPacket* packet);
  void queue(const AVFrame* decoded);
  // Resamples `count` samples (none to drain the resampler) into the queue; returns how many
  // came out.
  int convert(const std::uint8_t** samples, int count);
  void encode(bool last);
  void drain(bool flush);
  std::string stream_name() const;

  const AVStream* in_;
  AVStream* out_;
  LogSink& log_;
  std::string what_;
  PacketSink sink_;
  std::unique_ptr<AVCodecContext, CodecFree> decoder_;
  std::unique_ptr<AVCodecContext, CodecFree> encoder_;
  struct ResamplerFree {
    void operator()(SwrContext* s) const { swr_free(&s); }
  };
  struct FifoFree {
    void operator()(AVAudioFifo* f) const { av_audio_fifo_free(f); }
  };
  // Only while the decoded samples differ from the encoder's.
  std::unique_ptr<SwrContext, ResamplerFree> resampler_;
  // What the resampler converts from; a stream that changes it midway gets a new one.
  AVSampleFormat from_format_ = AV_SAMPLE_FMT_NONE;
  int from_rate_ = 0;
  AVChannelLayout from_layout_{};
  // Converted samples waiting for a whole encoder frame.
  std::unique_ptr<AVAudioFifo, FifoFree> fifo_;
  int frame_size_ = 0;  // samples per encoder frame; 0 takes any number
  FramePtr decoded_ = new_frame();
  FramePtr converted_ = new_frame();
  FramePtr chunk_ = new_frame();
  PacketPtr packet_ = new_packet();
  // Encoder timestamps count samples from the first decoded frame's, so that the output starts
  // where the input did and has no gaps the resampler or the regrouping would make.
  std::int64_t next_pts_ = AV_NOPTS_VALUE;
  std::int64_t first_packet_pts_ = AV_NOPTS_VALUE;  // encoder units, when frames have none
  bool finished_ = false;
};

}  // namespace tandem::detail
