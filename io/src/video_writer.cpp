// VideoWriter: frames encoded into a file, the input's other streams copied beside them (audio
// re-encoded on request); and is_video_path.
#include "tandem/video_io.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <new>
#include <sstream>
#include <unordered_map>
#include <utility>

extern "C" {
#include <libavutil/display.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
}

#include "audio_transcoder.hpp"
#include "av_support.hpp"
#include "tandem/error.hpp"
#include "video_reader_impl.hpp"

namespace tandem {

using detail::allocate_picture;
using detail::AudioTranscoder;
using detail::av_error;
using detail::av_format;
using detail::CodecFree;
using detail::copy_planes;
using detail::disown_log;
using detail::encoder_pixel_formats;
using detail::explain;
using detail::FramePtr;
using detail::init_ffmpeg_log;
using detail::is_full_range_yuvj;
using detail::is_video_format;
using detail::is_yuv;
using detail::kind_name;
using detail::kSwsFlags;
using detail::LogScope;
using detail::LogSink;
using detail::new_frame;
using detail::new_packet;
using detail::own_log;
using detail::PacketPtr;
using detail::same_samples;
using detail::Scaler;
using detail::ScalerSide;
using detail::set_display_matrix;
using detail::sws_matrix;
using detail::to_av;

namespace {

namespace fs = std::filesystem;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

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

}  // namespace

// ---- VideoWriter ----

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
  // frames of plane formats whose planes the encoder cannot take as they are, and rgba32f ones
  Scaler from_planes;
  ScalerSide encoded;  // the encoder's pixel format and colours
  FramePtr picture = new_frame();
  // a plane frame's planes, or an rgba32f frame's float R'G'B', as swscale reads them
  FramePtr planes = new_frame();
  PacketPtr packet = new_packet();
  AVRational input_time_base{0, 1};
  // Subtracted from every timestamp, in input_time_base units: a reader started at T seconds
  // gives a file that starts at 0 (as FFmpeg's -ss before -i does), its streams in step.
  std::int64_t shift = 0;
  AVRational encoder_time_base{0, 1};
  struct Copy {
    AVStream* stream = nullptr;
    std::unique_ptr<AudioTranscoder> transcoder;  // audio re-encoded (options.audio_codec)
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
       const std::vector<StreamInfo>* source_streams, int source_video,
       const std::vector<detail::SideData>* hdr_metadata, VideoWriterOptions opts);
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
                        const std::vector<detail::SideData>* hdr_metadata, VideoWriterOptions opts)
    : path(p), options(std::move(opts)) {
  init_ffmpeg_log();
  LogScope scope(&log);
  to_stdout = path == "-";
  name = to_stdout ? "standard output" : path.string();
  try {
    // ---- what can be checked before anything is opened ----
    width = options.width > 0 ? options.width : video.width;
    height = options.height > 0 ? options.height : video.height;
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
    // The audio encoder, checked now although only a source's audio streams use it.
    const AVCodec* audio_codec = nullptr;
    if (!options.audio_codec.empty() && options.audio_codec != "copy") {
      audio_codec = detail::find_audio_encoder(options.audio_codec, container, what());
    }

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
      for (int index : options.streams) {
        const bool known = std::any_of(source_streams->begin(), source_streams->end(),
                                       [&](const StreamInfo& si) { return si.index == index; });
        if (known) continue;
        std::string have;
        for (const StreamInfo& si : *source_streams) {
          have += (have.empty() ? "" : ", ") + std::to_string(si.index) + " (" +
                  kind_name(si.kind == StreamKind::audio      ? AVMEDIA_TYPE_AUDIO
                            : si.kind == StreamKind::subtitle ? AVMEDIA_TYPE_SUBTITLE
                                                              : AVMEDIA_TYPE_DATA) +
                  " " + si.codec + ")";
        }
        throw Error(what() + "the input has no stream #" + std::to_string(index) +
                    " to copy besides its video (" +
                    (have.empty() ? std::string("it has none") : "it has " + have) + ")");
      }
      for (const StreamInfo& si : *source_streams) {
        if ((si.kind == StreamKind::audio && options.no_audio) ||
            (si.kind == StreamKind::subtitle && options.no_subtitles) ||
            (si.kind == StreamKind::data && options.no_data)) {
          continue;
        }
        if (!options.streams.empty() && std::find(options.streams.begin(), options.streams.end(),
                                                  si.index) == options.streams.end()) {
          continue;
        }
        const AVStream* in = source->streams[si.index];
        const AVMediaType type = in->codecpar->codec_type;
        const bool reencoded = type == AVMEDIA_TYPE_AUDIO && audio_codec;
        // A container with no codec of this kind at all (YUV4MPEG2 has only video) leaves the
        // stream out, as ffmpeg does; one that has others but not this codec is an error.
        const AVCodecID usual = type == AVMEDIA_TYPE_AUDIO      ? container->audio_codec
                                : type == AVMEDIA_TYPE_SUBTITLE ? container->subtitle_codec
                                                                : container->data_codec;
        const AVCodecID written = reencoded ? audio_codec->id : in->codecpar->codec_id;
        const int q = y4m ? -1 : avformat_query_codec(container, written, FF_COMPLIANCE_NORMAL);
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
    const AVPixelFormat* formats = encoder_pixel_formats(codec);
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
      // Y'CbCr video keeps its pixel format where the encoder takes it, as FFmpeg's default
      // does (VideoReader gives its planes to the devices as they are): in a lossless encoder
      // unless deeper than the depth asked for, in a lossy one where it is 8-bit or both are
      // deeper, and where the size is whole chroma samples.
      const AVPixelFormat decoded = av_get_pix_fmt(video.pixel_format.c_str());
      const std::optional<PixelFormat> planes =
          video.yuv_encoding ? detail::plane_format_of(decoded) : std::nullopt;
      // NV12 and P010 as the planar 4:2:0 the devices had, where the encoder lacks them.
      const AVPixelFormat source =
          planes && !has_format(formats, decoded) ? av_format(*planes) : decoded;
      const AVPixFmtDescriptor* sd = av_pix_fmt_desc_get(source);
      const int depth = options.default_bit_depth > 0 ? options.default_bit_depth : video.bit_depth;
      const bool whole_chroma = sd && width % (1 << sd->log2_chroma_w) == 0 &&
                                height % (1 << sd->log2_chroma_h) == 0;
      const bool keep = lossless ? video.bit_depth <= depth
                                 : whole_chroma && (video.bit_depth == 8 || depth > 8);
      if (planes && keep && has_format(formats, source)) {
        pix = source;
      } else if (!lossless && depth > 8 && has_format(formats, AV_PIX_FMT_YUV420P10LE) && even) {
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
    // The colour description: the options' where they give one (checked), else the source's.
    auto tag = [&](const std::string& given, const std::string& source, const char* kind,
                   int (*from_name)(const char*)) {
      if (!given.empty() && from_name(given.c_str()) < 0) {
        throw Error(what() + "unknown colour " + kind + " '" + given + "'");
      }
      return given.empty() ? source : given;
    };
    const std::string primaries_name = tag(options.color_primaries, video.color_primaries,
                                           "primaries", av_color_primaries_from_name);
    const std::string transfer_name =
        tag(options.color_transfer, video.color_transfer, "transfer", av_color_transfer_from_name);
    const std::string matrix_name =
        tag(options.color_matrix, video.color_matrix, "matrix", av_color_space_from_name);
    if (is_yuv(pix) && !is_full_range_yuvj(pix)) {
      // The input's matrix and range where it states them (the RGBA frames are matrix-free);
      // otherwise what players assume: BT.709 from 720 lines, limited range.
      const int matrix = matrix_name.empty() ? -1 : av_color_space_from_name(matrix_name.c_str());
      const bool hd = height >= 720;
      enc->colorspace = matrix >= 0 && matrix != AVCOL_SPC_RGB ? static_cast<AVColorSpace>(matrix)
                        : hd                                   ? AVCOL_SPC_BT709
                                                               : AVCOL_SPC_SMPTE170M;
      enc->color_range = video.color_range == "pc" ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
    }
    // The frames keep the input's primaries and transfer: the tags say so (HDR10's BT.2020 and
    // PQ included).
    if (!primaries_name.empty()) {
      const int v = av_color_primaries_from_name(primaries_name.c_str());
      if (v >= 0) enc->color_primaries = static_cast<AVColorPrimaries>(v);
    }
    if (!transfer_name.empty()) {
      const int v = av_color_transfer_from_name(transfer_name.c_str());
      if (v >= 0) enc->color_trc = static_cast<AVColorTransferCharacteristic>(v);
    }
    // Chroma siting: a frame no filter changes keeps its chroma samples (the devices take each
    // for the pixels it covers and give back their mean), so it keeps their siting where the
    // output keeps the input's subsampling.
    const AVPixFmtDescriptor* in_layout = av_pix_fmt_desc_get(av_get_pix_fmt(video.pixel_format.c_str()));
    const AVPixFmtDescriptor* out_layout = av_pix_fmt_desc_get(pix);
    const int siting = av_chroma_location_from_name(video.chroma_location.c_str());
    if (siting > 0 && is_yuv(pix) && in_layout && out_layout &&
        in_layout->log2_chroma_w == out_layout->log2_chroma_w &&
        in_layout->log2_chroma_h == out_layout->log2_chroma_h) {
      enc->chroma_sample_location = static_cast<AVChromaLocation>(siting);
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
      temp = detail::temporary_beside(path);
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
    // HDR10's static metadata (mastering display, content light level) goes with the stream,
    // while the frames are still HDR.
    const bool hdr = options.color_transfer.empty() || options.color_transfer == "smpte2084" ||
                     options.color_transfer == "arib-std-b67";
    if (hdr_metadata && hdr) {
      for (const detail::SideData& d : *hdr_metadata) {
        std::uint8_t* copy = av_stream_new_side_data(video_stream, d.type, d.bytes.size());
        if (!copy) throw std::bad_alloc();
        std::memcpy(copy, d.bytes.data(), d.bytes.size());
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
      Copy& copy = copies[in->index];
      copy.stream = st;
      if (audio_codec && in->codecpar->codec_type == AVMEDIA_TYPE_AUDIO) {
        copy.transcoder = std::make_unique<AudioTranscoder>(
            in, audio_codec, out, st, log, what(),
            [this](AVPacket* pkt) { write_packet(pkt, "writing an audio packet failed"); });
      } else {
        if ((r = avcodec_parameters_copy(st->codecpar, in->codecpar)) < 0) {
          throw Error(what() + explain(log, r));
        }
        st->codecpar->codec_tag = 0;  // the output container chooses its own tag
        st->time_base = in->time_base;
      }
      st->disposition = in->disposition;
      av_dict_copy(&st->metadata, in->metadata, 0);
      av_dict_set(&st->metadata, "encoder", nullptr, 0);
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
    throw Error(what() + "frames must be rgba8, rgba32f or of a plane format, " +
                std::to_string(width) + "x" + std::to_string(height) + ", not " +
                std::string(to_string(frame.format())) + " " + std::to_string(frame.width()) + "x" +
                std::to_string(frame.height()));
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
  } else if (frame.format() == PixelFormat::rgba32f) {
    // Into swscale as planar float R'G'B' (see VideoReader::Impl::to_float_rgba()).
    allocate_picture(planes.get(), AV_PIX_FMT_GBRPF32LE, width, height);
    detail::rgba_to_gbrpf32(frame, *planes);
    if (!from_planes.scale(width, height, {AV_PIX_FMT_GBRPF32LE}, planes->data, planes->linesize,
                           encoded, picture->data, picture->linesize)) {
      throw Error(what() + "cannot convert float RGB to " + pix_fmt_name);
    }
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
  if (it->second.transcoder) {
    it->second.transcoder->send(pkt, to_av(p.time_base()));
    return;
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
      for (auto& [index, copy] : copies) {
        if (copy.transcoder) copy.transcoder->finish();
      }
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
  copies.clear();  // the transcoders' codecs
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
    : impl_(std::make_unique<Impl>(path, video, nullptr, nullptr, -1, nullptr,
                                   std::move(options))) {}

VideoWriter::VideoWriter(const fs::path& path, const VideoReader& source,
                         VideoWriterOptions options) {
  const VideoReader::Impl& in = *source.impl_;
  if (options.copy_streams && !in.streams.empty() && !in.options.keep_packets) {
    throw Error("cannot write '" + path.string() + "': copying the streams of '" + in.name +
                "' needs its reader opened with keep_packets");
  }
  impl_ = std::make_unique<Impl>(path, in.info, in.format.get(), &in.streams, in.video,
                                 &in.hdr_metadata, std::move(options));
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
