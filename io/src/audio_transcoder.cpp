// AudioTranscoder: an input audio stream decoded, resampled, regrouped and encoded again
// (audio_transcoder.hpp).
#include "audio_transcoder.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <utility>

extern "C" {
#include <libavutil/channel_layout.h>
#include <libavutil/samplefmt.h>
}

#include "tandem/error.hpp"

namespace tandem::detail {

namespace {

bool has_format(const AVSampleFormat* list, AVSampleFormat f) {
  for (; list && *list != AV_SAMPLE_FMT_NONE; ++list) {
    if (*list == f) return true;
  }
  return false;
}

// A few audio encoders this FFmpeg has, for the message about one it has not.
std::string some_audio_encoders() {
  std::string names;
  for (const char* name :
       {"aac", "libopus", "libvorbis", "flac", "alac", "libmp3lame", "ac3", "pcm_s16le"}) {
    const AVCodec* c = avcodec_find_encoder_by_name(name);
    if (c && c->type == AVMEDIA_TYPE_AUDIO) names += std::string(names.empty() ? "" : ", ") + name;
  }
  return names.empty() ? "none" : names + ", ...";
}

// The layout of a stream or frame; one of unspecified order gets the usual one of its channels.
AVChannelLayout layout_of(const AVChannelLayout& given) {
  AVChannelLayout layout{};
  if (given.order == AV_CHANNEL_ORDER_UNSPEC) {
    av_channel_layout_default(&layout, given.nb_channels);
  } else if (av_channel_layout_copy(&layout, &given) < 0) {
    throw std::bad_alloc();
  }
  return layout;
}

std::string describe(AVSampleFormat format, int rate, const AVChannelLayout& layout) {
  char channels[64] = "?";
  av_channel_layout_describe(&layout, channels, sizeof channels);
  const char* f = av_get_sample_fmt_name(format);
  return std::to_string(rate) + " Hz " + channels + " " + (f ? f : "?");
}

// Gives `frame` buffers for `count` samples in the encoder's format, rate and layout.
void allocate_samples(AVFrame* frame, const AVCodecContext& encoder, int count) {
  av_frame_unref(frame);
  frame->format = encoder.sample_fmt;
  frame->sample_rate = encoder.sample_rate;
  frame->nb_samples = count;
  if (av_channel_layout_copy(&frame->ch_layout, &encoder.ch_layout) < 0 ||
      av_frame_get_buffer(frame, 0) < 0) {
    throw std::bad_alloc();
  }
}

}  // namespace

const AVCodec* find_audio_encoder(const std::string& name, const AVOutputFormat* container,
                                  const std::string& what) {
  const AVCodec* codec = avcodec_find_encoder_by_name(name.c_str());
  if (!codec) {
    if (const AVCodecDescriptor* d = avcodec_descriptor_get_by_name(name.c_str())) {
      codec = avcodec_find_encoder(d->id);
    }
  }
  if (!codec) {
    throw Error(what + "no audio encoder '" + name + "' (FFmpeg has " + some_audio_encoders() +
                "; ffmpeg -encoders lists them)");
  }
  if (codec->type != AVMEDIA_TYPE_AUDIO) {
    throw Error(what + "'" + name + "' is a " + kind_name(codec->type) +
                " encoder, not an audio one");
  }
  // A container that holds no audio at all (YUV4MPEG2) leaves the audio out, as when copying.
  if (container->audio_codec != AV_CODEC_ID_NONE &&
      avformat_query_codec(container, codec->id, FF_COMPLIANCE_NORMAL) == 0) {
    throw Error(what + "the " + container->name + " container cannot hold " +
                avcodec_get_name(codec->id) + " audio (choose another audio codec or container)");
  }
  return codec;
}

AudioTranscoder::AudioTranscoder(const AVStream* in, const AVCodec* codec,
                                 const AVFormatContext* output, AVStream* out, LogSink& log,
                                 std::string what, PacketSink sink)
    : in_(in), out_(out), log_(log), what_(std::move(what)), sink_(std::move(sink)) {
  const AVCodec* source_codec = avcodec_find_decoder(in->codecpar->codec_id);
  if (!source_codec)
    throw Error(what_ + "FFmpeg has no decoder for the " + stream_name() + " to re-encode");
  decoder_.reset(avcodec_alloc_context3(source_codec));
  if (!decoder_) throw std::bad_alloc();
  AVCodecContext* dec = decoder_.get();
  int r = avcodec_parameters_to_context(dec, in->codecpar);
  if (r < 0) throw Error(what_ + explain(log_, r));
  dec->pkt_timebase = in->time_base;
  if ((r = avcodec_open2(dec, source_codec, nullptr)) < 0) {
    throw Error(what_ + "cannot open the " + source_codec->name + " decoder for the " +
                stream_name() + ": " + explain(log_, r));
  }
  own_log(dec, &log_);
  if (dec->sample_rate <= 0 || dec->ch_layout.nb_channels <= 0) {
    throw Error(what_ + "the " + stream_name() + " states no sample rate or channels");
  }

  encoder_.reset(avcodec_alloc_context3(codec));
  if (!encoder_) throw std::bad_alloc();
  AVCodecContext* enc = encoder_.get();
  // The source's sample format, else its planar or packed twin (s16 and s16p hold the same
  // samples), else the encoder's first.
  const AVSampleFormat* formats = encoder_sample_formats(codec);
  const AVSampleFormat source_format =
      dec->sample_fmt != AV_SAMPLE_FMT_NONE ? dec->sample_fmt : AV_SAMPLE_FMT_FLTP;
  enc->sample_fmt = source_format;
  if (formats && !has_format(formats, source_format)) {
    const AVSampleFormat planar = av_get_planar_sample_fmt(source_format);
    const AVSampleFormat packed = av_get_packed_sample_fmt(source_format);
    enc->sample_fmt = has_format(formats, planar)   ? planar
                      : has_format(formats, packed) ? packed
                                                    : formats[0];
  }
  // The source's rate, else the nearest the encoder takes (Opus: 48 kHz for 44.1 kHz).
  enc->sample_rate = dec->sample_rate;
  if (const int* rates = encoder_sample_rates(codec); rates && *rates) {
    int nearest = *rates;
    for (; *rates; ++rates) {
      if (std::abs(*rates - dec->sample_rate) < std::abs(nearest - dec->sample_rate))
        nearest = *rates;
    }
    enc->sample_rate = nearest;
  }
  // The source's layout, else the encoder's first of the nearest number of channels, fewer
  // before more (5.1 into an MP3 encoder becomes stereo, not mono).
  AVChannelLayout source_layout = layout_of(dec->ch_layout);
  const AVChannelLayout* layout = &source_layout;
  if (const AVChannelLayout* layouts = encoder_channel_layouts(codec);
      layouts && layouts->nb_channels) {
    const int channels = source_layout.nb_channels;
    const auto distance = [&](const AVChannelLayout* l) {
      return l->nb_channels <= channels ? 2 * (channels - l->nb_channels)
                                        : 2 * (l->nb_channels - channels) + 1;
    };
    layout = layouts;
    for (const AVChannelLayout* l = layouts; l->nb_channels; ++l) {
      if (av_channel_layout_compare(l, &source_layout) == 0) {
        layout = l;
        break;
      }
      if (distance(l) < distance(layout)) layout = l;
    }
  }
  r = av_channel_layout_copy(&enc->ch_layout, layout);
  av_channel_layout_uninit(&source_layout);
  if (r < 0) throw std::bad_alloc();
  enc->time_base = {1, enc->sample_rate};
  if (output->oformat->flags & AVFMT_GLOBALHEADER) enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  if ((r = avcodec_open2(enc, codec, nullptr)) < 0) {
    throw Error(what_ + "cannot open the " + codec->name + " encoder for the " + stream_name() +
                " as " + describe(enc->sample_fmt, enc->sample_rate, enc->ch_layout) + ": " +
                explain(log_, r));
  }
  own_log(enc, &log_);
  // Encoders of a fixed frame size take frames of exactly that size, the last one excepted.
  frame_size_ = codec->capabilities & AV_CODEC_CAP_VARIABLE_FRAME_SIZE ? 0 : enc->frame_size;
  fifo_.reset(av_audio_fifo_alloc(enc->sample_fmt, enc->ch_layout.nb_channels,
                                  std::max(frame_size_, 1024)));
  if (!fifo_) throw std::bad_alloc();

  if ((r = avcodec_parameters_from_context(out->codecpar, enc)) < 0)
    throw Error(what_ + explain(log_, r));
  out->time_base = enc->time_base;  // the muxer may choose another when it writes its header
}

AudioTranscoder::~AudioTranscoder() {
  av_channel_layout_uninit(&from_layout_);
}

std::string AudioTranscoder::stream_name() const {
  return "audio stream #" + std::to_string(in_->index) + " (" +
         avcodec_get_name(in_->codecpar->codec_id) + ")";
}

void AudioTranscoder::send(AVPacket* packet, AVRational time_base) {
  if (finished_) return;
  av_packet_rescale_ts(packet, time_base, decoder_->pkt_timebase);
  if (first_packet_pts_ == AV_NOPTS_VALUE && packet->pts != AV_NOPTS_VALUE) {
    first_packet_pts_ = av_rescale_q(packet->pts, decoder_->pkt_timebase, encoder_->time_base);
  }
  decode(packet);
}

void AudioTranscoder::decode(const AVPacket* packet) {
  AVCodecContext* dec = decoder_.get();
  int r = avcodec_send_packet(dec, packet);
  if (r < 0 && r != AVERROR_EOF) {
    throw Error(what_ + "the " + dec->codec->name + " decoder failed on the " + stream_name() +
                ": " + explain(log_, r));
  }
  for (;;) {
    r = avcodec_receive_frame(dec, decoded_.get());
    if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return;
    if (r < 0) {
      throw Error(what_ + "the " + dec->codec->name + " decoder failed on the " + stream_name() +
                  ": " + explain(log_, r));
    }
    queue(decoded_.get());
    av_frame_unref(decoded_.get());
    encode(false);
  }
}

void AudioTranscoder::queue(const AVFrame* frame) {
  AVCodecContext* enc = encoder_.get();
  if (next_pts_ == AV_NOPTS_VALUE) {
    // The decoder's timestamp takes the samples it skips (an AAC source's priming) into account.
    const std::int64_t t = frame->best_effort_timestamp;
    next_pts_ = t != AV_NOPTS_VALUE ? av_rescale_q(t, decoder_->pkt_timebase, enc->time_base)
                : first_packet_pts_ != AV_NOPTS_VALUE ? first_packet_pts_
                                                      : 0;
  }
  AVChannelLayout layout = layout_of(frame->ch_layout);
  const auto format = static_cast<AVSampleFormat>(frame->format);
  const bool same_layout = av_channel_layout_compare(&layout, &enc->ch_layout) == 0;
  if (format == enc->sample_fmt && frame->sample_rate == enc->sample_rate && same_layout) {
    av_channel_layout_uninit(&layout);
    if (av_audio_fifo_write(fifo_.get(), reinterpret_cast<void**>(frame->extended_data),
                            frame->nb_samples) < frame->nb_samples) {
      throw std::bad_alloc();
    }
    return;
  }
  if (!resampler_ || format != from_format_ || frame->sample_rate != from_rate_ ||
      av_channel_layout_compare(&layout, &from_layout_) != 0) {
    // A stream that changes its samples midway loses what the old resampler still held.
    SwrContext* swr = nullptr;
    int r = swr_alloc_set_opts2(&swr, &enc->ch_layout, enc->sample_fmt, enc->sample_rate, &layout,
                                format, frame->sample_rate, 0, nullptr);
    resampler_.reset(swr);
    if (r >= 0) r = swr_init(swr);
    if (r < 0) {
      const std::string from = describe(format, frame->sample_rate, layout);
      av_channel_layout_uninit(&layout);
      throw Error(what_ + "cannot convert the " + stream_name() + " from " + from + " to " +
                  describe(enc->sample_fmt, enc->sample_rate, enc->ch_layout) + ": " + av_error(r));
    }
    from_format_ = format;
    from_rate_ = frame->sample_rate;
    av_channel_layout_uninit(&from_layout_);
    from_layout_ = layout;  // owned from here on
  } else {
    av_channel_layout_uninit(&layout);
  }
  convert(const_cast<const std::uint8_t**>(frame->extended_data), frame->nb_samples);
}

int AudioTranscoder::convert(const std::uint8_t** samples, int count) {
  AVCodecContext* enc = encoder_.get();
  const int room = swr_get_out_samples(resampler_.get(), count);
  if (room <= 0) return 0;
  allocate_samples(converted_.get(), *enc, room);
  const int got =
      swr_convert(resampler_.get(), converted_->extended_data, room, samples, samples ? count : 0);
  if (got < 0) {
    throw Error(what_ + "converting the samples of the " + stream_name() +
                " failed: " + av_error(got));
  }
  if (av_audio_fifo_write(fifo_.get(), reinterpret_cast<void**>(converted_->extended_data), got) <
      got) {
    throw std::bad_alloc();
  }
  return got;
}

void AudioTranscoder::encode(bool last) {
  AVCodecContext* enc = encoder_.get();
  for (;;) {
    const int queued = av_audio_fifo_size(fifo_.get());
    if (queued == 0 || (frame_size_ > 0 && queued < frame_size_ && !last)) return;
    const int count = frame_size_ > 0 ? std::min(frame_size_, queued) : queued;
    allocate_samples(chunk_.get(), *enc, count);
    av_audio_fifo_read(fifo_.get(), reinterpret_cast<void**>(chunk_->extended_data), count);
    chunk_->pts = next_pts_;
    next_pts_ += count;
    const int r = avcodec_send_frame(enc, chunk_.get());
    if (r < 0) {
      throw Error(what_ + "the " + enc->codec->name + " encoder failed on the " + stream_name() +
                  ": " + explain(log_, r));
    }
    drain(false);
  }
}

void AudioTranscoder::drain(bool flush) {
  AVCodecContext* enc = encoder_.get();
  if (flush) avcodec_send_frame(enc, nullptr);
  for (;;) {
    const int r = avcodec_receive_packet(enc, packet_.get());
    if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return;
    if (r < 0) {
      throw Error(what_ + "the " + enc->codec->name + " encoder failed on the " + stream_name() +
                  ": " + explain(log_, r));
    }
    av_packet_rescale_ts(packet_.get(), enc->time_base, out_->time_base);
    packet_->stream_index = out_->index;
    sink_(packet_.get());
    av_packet_unref(packet_.get());
  }
}

void AudioTranscoder::finish() {
  if (finished_) return;
  finished_ = true;
  decode(nullptr);
  if (resampler_) {
    while (convert(nullptr, 0) > 0) {
    }
  }
  encode(true);
  drain(true);
}

}  // namespace tandem::detail
