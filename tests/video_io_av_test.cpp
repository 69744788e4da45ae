// Video files through FFmpeg: reading (frames, timestamps, ranges), lossless round trips with the
// other streams copied packet for packet, audio re-encoded, YUV4MPEG2 through pipes, and every bad
// input or output failing with one clear line and nothing left behind. Test videos are made by the
// ffmpeg program from its lavfi sources (testsrc, sine), so the reader is checked against an
// independent writer.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tandem/error.hpp"
#include "tandem/video_io.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace tandem;
using test::error_of;

namespace {

std::string quote(const fs::path& p) {
  std::string q = "'";
  q += p.string();
  q += '\'';
  return q;
}

// Runs the ffmpeg program quietly; true when it succeeded.
bool ffmpeg(const std::string& args) {
  const std::string cmd =
      std::string(TANDEM_FFMPEG_PROGRAM) + " -nostdin -hide_banner -loglevel error -y " + args;
  const int rc = std::system(cmd.c_str());
  if (rc != 0) ADD_FAILURE() << "failed (" << rc << "): " << cmd;
  return rc == 0;
}

// Standard output of a shell command.
std::string capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

std::string ffprobe() {
  std::string p = TANDEM_FFMPEG_PROGRAM;
  return p.substr(0, p.rfind("ffmpeg")) + "ffprobe";
}

// Per-packet checksums of one kind of stream, copied out by ffmpeg: timestamps, sizes and MD5s.
std::vector<std::string> packet_md5s(const fs::path& file, const std::string& map) {
  const std::string text =
      capture(std::string(TANDEM_FFMPEG_PROGRAM) + " -nostdin -hide_banner -loglevel error -i " +
              quote(file) + " -map 0:" + map + " -c copy -f framemd5 -");
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  }
  return lines;
}

struct Decoded {
  VideoInfo info;
  std::vector<Frame> frames;
  std::vector<std::int64_t> pts;
  std::vector<std::string> errors;
};

Decoded read_all(const fs::path& path, VideoReaderOptions options = {}) {
  VideoReader reader(path, options);
  Decoded d;
  d.info = reader.info();
  Frame frame;
  std::int64_t pts = 0;
  while (reader.read(frame, pts)) {
    d.frames.push_back(std::move(frame));
    frame = Frame();
    d.pts.push_back(pts);
  }
  d.errors = reader.errors();
  EXPECT_EQ(reader.frames_read(), static_cast<std::int64_t>(d.frames.size()));
  return d;
}

// Largest difference of any channel of two RGBA8 frames of one size.
int max_difference(const Frame& a, const Frame& b) {
  int worst = 0;
  for (int y = 0; y < a.height(); ++y) {
    for (int x = 0; x < a.width() * 4; ++x)
      worst = std::max(worst, std::abs(a.row(y)[x] - b.row(y)[x]));
  }
  return worst;
}

double mean_difference(const Frame& a, const Frame& b) {
  double sum = 0;
  for (int y = 0; y < a.height(); ++y) {
    for (int x = 0; x < a.width() * 4; ++x) sum += std::abs(a.row(y)[x] - b.row(y)[x]);
  }
  return sum / (4.0 * a.width() * a.height());
}

bool same_pixels(const Frame& a, const Frame& b) {
  if (a.width() != b.width() || a.height() != b.height()) return false;
  for (int y = 0; y < a.height(); ++y) {
    if (std::memcmp(a.row(y), b.row(y), static_cast<std::size_t>(a.width()) * 4) != 0) return false;
  }
  return true;
}

// A yuv420p frame in `encoding` whose samples are sample(plane, x, y).
Frame planar_frame(int width, int height, YuvEncoding encoding,
                   const std::function<int(int, int, int)>& sample) {
  Frame f(width, height, PixelFormat::yuv420p);
  f.set_yuv_encoding(encoding);
  for (int p = 0; p < 3; ++p) {
    for (int y = 0; y < f.plane_height(p); ++y) {
      for (int x = 0; x < f.plane_width(p); ++x) f.plane_row(p, y)[x] = sample(p, x, y) & 255;
    }
  }
  return f;
}

// Files in a directory, to check that a failed write left nothing (no temporary file either).
std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void overwrite(const fs::path& file, std::size_t at, std::size_t bytes, std::uint32_t seed) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(at));
  for (std::size_t i = 0; i < bytes; ++i) {
    seed = seed * 1664525u + 1013904223u;
    f.put(static_cast<char>(seed >> 24));
  }
}

class VideoIo : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tandem-video-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "out");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // 2 s of testsrc at 25 fps, 320x240, FFV1 (version 3, slice checksums) in Matroska, with a
  // 440 Hz sine as PCM audio and two subtitles: 50 frames with timestamps 0, 40, ... 1960 ms.
  fs::path source() {
    const fs::path srt = dir_ / "subs.srt";
    std::ofstream(srt) << "1\n00:00:00,200 --> 00:00:00,800\nfirst\n\n"
                          "2\n00:00:01,000 --> 00:00:01,500\nsecond\n";
    const fs::path out = dir_ / "source.mkv";
    EXPECT_TRUE(
        ffmpeg("-f lavfi -i testsrc=size=320x240:rate=25 -f lavfi -i "
               "sine=frequency=440:sample_rate=48000 -i " +
               quote(srt) +
               " -map 0:v -map 1:a -map 2:s -t 2 -c:v ffv1 -level 3 -slicecrc 1 "
               "-c:a pcm_s16le -c:s srt -metadata:s:a language=eng " +
               quote(out)));
    return out;
  }

  // 1 s of small testsrc at 25 fps (FFV1) with a 440 Hz sine at 44.1 kHz in stereo as PCM, the
  // way a camera or an editor's export carries its sound.
  fs::path audio_source() {
    const fs::path out = dir_ / "audio-source.mkv";
    EXPECT_TRUE(ffmpeg(
        "-f lavfi -i testsrc=size=64x48:rate=25 -f lavfi -i sine=frequency=440:sample_rate=44100 "
        "-map 0:v -map 1:a -t 1 -ac 2 -c:v ffv1 -c:a pcm_s16le " +
        quote(out)));
    return out;
  }

  fs::path dir_;
};

TEST_F(VideoIo, ReadsFramesSizesAndTimestamps) {
  const fs::path src = source();
  VideoReader reader(src);
  const VideoInfo& info = reader.info();
  EXPECT_EQ(info.width, 320);
  EXPECT_EQ(info.height, 240);
  EXPECT_EQ(info.frame_rate, (Rational{25, 1}));
  EXPECT_EQ(info.time_base, (Rational{1, 1000}));  // Matroska's
  EXPECT_NEAR(info.duration, 2.0, 1e-6);
  EXPECT_EQ(info.codec, "ffv1");
  EXPECT_EQ(info.rotation, 0);
  ASSERT_EQ(reader.streams().size(), 2u);
  EXPECT_EQ(reader.streams()[0].kind, StreamKind::audio);
  EXPECT_EQ(reader.streams()[0].codec, "pcm_s16le");
  EXPECT_EQ(reader.streams()[0].language, "eng");
  EXPECT_EQ(reader.streams()[1].kind, StreamKind::subtitle);
  EXPECT_EQ(reader.streams()[1].codec, "subrip");

  // The pixels against ffmpeg's own decode to RGBA; FFV1 is lossless and its RGB to RGBA is a
  // byte shuffle, so they are equal. The frame has a wide pitch, as one made for the devices.
  const fs::path raw = dir_ / "frames.rgba";
  ASSERT_TRUE(ffmpeg("-i " + quote(src) + " -map 0:v -f rawvideo -pix_fmt rgba " + quote(raw)));
  std::ifstream in(raw, std::ios::binary);
  std::vector<char> expected(320 * 4);
  Frame frame(320, 240, PixelFormat::rgba8, 4096);
  ASSERT_EQ(frame.pitch(), 4096u);
  std::int64_t pts = -1;
  int n = 0;
  while (reader.read(frame, pts)) {
    EXPECT_EQ(pts, n * 40) << "frame " << n;
    for (int y = 0; y < 240; ++y) {
      ASSERT_TRUE(in.read(expected.data(), expected.size()));
      ASSERT_EQ(std::memcmp(frame.row(y), expected.data(), expected.size()), 0)
          << "frame " << n << " row " << y;
    }
    ++n;
  }
  EXPECT_EQ(n, 50);
  EXPECT_FALSE(in.read(expected.data(), 1));  // ffmpeg decoded no more frames than we did
  EXPECT_TRUE(reader.errors().empty());
}

// A 10-bit HDR10-tagged stream (BT.2020, PQ): its depth, colour description and chroma siting
// are read, and a written copy carries them (its frames keep the input's primaries, transfer
// and chroma samples).
TEST_F(VideoIo, ColourDescriptionIsReadAndCarried) {
  const fs::path src = dir_ / "hdr.mkv";
  ASSERT_TRUE(
      ffmpeg("-f lavfi -i testsrc=size=160x120:rate=25 -t 0.4 -pix_fmt yuv420p10le "
             "-color_primaries bt2020 -color_trc smpte2084 -colorspace bt2020nc "
             "-color_range tv -chroma_sample_location topleft -c:v ffv1 " +
             quote(src)));
  const fs::path out = dir_ / "out" / "copy.mkv";
  {
    VideoReader reader(src, {.keep_packets = true});
    const VideoInfo& info = reader.info();
    EXPECT_EQ(info.bit_depth, 10);
    EXPECT_EQ(info.color_primaries, "bt2020");
    EXPECT_EQ(info.color_transfer, "smpte2084");
    EXPECT_EQ(info.color_matrix, "bt2020nc");
    EXPECT_EQ(info.color_range, "tv");
    EXPECT_EQ(info.chroma_location, "topleft");
    VideoWriter writer(out, reader, {.codec = "ffv1", .pix_fmt = "yuv420p"});
    Frame frame;
    std::int64_t pts;
    while (reader.read(frame, pts)) writer.write(frame, pts);
    writer.finish();
  }
  VideoReader copy(out);
  EXPECT_EQ(copy.info().bit_depth, 8);  // the pixel format asked for
  EXPECT_EQ(copy.info().color_primaries, "bt2020");
  EXPECT_EQ(copy.info().color_transfer, "smpte2084");
  EXPECT_EQ(copy.info().color_matrix, "bt2020nc");
  EXPECT_EQ(copy.info().color_range, "tv");
  // 4:2:0 again: its chroma samples sit where they sat.
  EXPECT_EQ(copy.info().chroma_location, "topleft");
  // An 8-bit stream that states nothing: nothing is read, and the writer's defaults apply.
  VideoReader plain(source());
  EXPECT_EQ(plain.info().bit_depth, 8);
  EXPECT_EQ(plain.info().color_transfer, "");
}

// HDR10's static metadata that only the bitstream carries (x265's SEI messages in an MP4 with
// no mdcv or clli box) is read from the first frame, the peak being its MaxCLL, else the
// mastering display's; a written copy states it in its container (FFV1 carries no SEI, so what
// the copy's reader finds is the container's).
TEST_F(VideoIo, HdrMetadataOfTheBitstreamIsReadAndCarried) {
  const std::string master =
      "'G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(40000000,50)'";
  for (const auto& [cll, peak] : {std::pair{":max-cll=1000,400", 1000}, {"", 4000}}) {
    SCOPED_TRACE(peak);
    const fs::path src = dir_ / ("hdr-sei-" + std::to_string(peak) + ".mp4");
    ASSERT_TRUE(ffmpeg("-f lavfi -i testsrc=size=128x72:rate=25 -frames:v 3 -pix_fmt yuv420p10le "
                       "-c:v libx265 -x265-params log-level=error:hdr10=1" + std::string(cll) +
                       ":master-display=" + master +
                       " -color_primaries bt2020 -color_trc smpte2084 -colorspace bt2020nc " +
                       quote(src)));
    const fs::path out = dir_ / "out" / ("hdr-copy-" + std::to_string(peak) + ".mkv");
    {
      VideoReader reader(src, {.keep_packets = true});
      EXPECT_EQ(reader.info().color_transfer, "smpte2084");
      EXPECT_EQ(reader.info().peak_luminance, peak);
      VideoWriter writer(out, reader, {.codec = "ffv1"});
      Frame frame;
      std::int64_t pts;
      while (reader.read(frame, pts)) writer.write(frame, pts);
      writer.finish();
    }
    EXPECT_EQ(VideoReader(out).info().peak_luminance, peak);
  }
  // Written as SDR (what tonemap makes: the command line rewrites the transfer), the copy states
  // no HDR metadata.
  const fs::path sdr = dir_ / "out" / "sdr.mkv";
  {
    VideoReader reader(dir_ / "hdr-sei-1000.mp4", {.keep_packets = true});
    VideoWriterOptions options{.codec = "ffv1"};
    options.color_transfer = "iec61966-2-1";
    VideoWriter writer(sdr, reader, options);
    Frame frame;
    std::int64_t pts;
    while (reader.read(frame, pts)) writer.write(frame, pts);
    writer.finish();
  }
  EXPECT_EQ(VideoReader(sdr).info().color_transfer, "iec61966-2-1");
  EXPECT_EQ(VideoReader(sdr).info().peak_luminance, 0);
}

TEST_F(VideoIo, StartDurationAndFrameLimit) {
  const fs::path src = source();
  const Decoded all = read_all(src);
  ASSERT_EQ(all.frames.size(), 50u);

  // 0.5 s in, 0.4 s long: the frames at 520, 560, ... 880 ms (frames 13 to 22).
  const Decoded part = read_all(src, {.start = 0.5, .duration = 0.4});
  ASSERT_EQ(part.frames.size(), 10u);
  for (std::size_t i = 0; i < part.frames.size(); ++i) {
    EXPECT_EQ(part.pts[i], 520 + 40 * static_cast<std::int64_t>(i));
    EXPECT_TRUE(same_pixels(part.frames[i], all.frames[13 + i])) << "frame " << i;
  }
  const Decoded first = read_all(src, {.start = 1.0, .max_frames = 7});
  ASSERT_EQ(first.frames.size(), 7u);
  EXPECT_EQ(first.pts.front(), 1000);
  EXPECT_TRUE(same_pixels(first.frames.back(), all.frames[31]));

  // Audio packets of the range only.
  VideoReader reader(src, {.start = 1.0, .duration = 0.5, .keep_packets = true});
  Frame frame;
  std::int64_t pts;
  std::vector<StreamPacket> packets;
  while (reader.read(frame, pts)) {
    for (auto& p : reader.take_packets()) packets.push_back(std::move(p));
  }
  for (auto& p : reader.take_packets()) packets.push_back(std::move(p));
  int audio = 0;
  for (const auto& p : packets) {
    const double t = p.pts() * p.time_base().value();
    EXPECT_GE(t, 1.0 - 1e-9);
    EXPECT_LT(t, 1.5);
    audio += p.stream() == 1;
  }
  EXPECT_GT(audio, 5);  // PCM packets come every ~21 ms
}

TEST_F(VideoIo, Ffv1RoundTripIsLosslessAndCopiesStreams) {
  const fs::path src = source();
  const fs::path out = dir_ / "out" / "copy.mkv";
  {
    VideoReader reader(src, {.keep_packets = true});
    VideoWriter writer(out, reader, {.codec = "ffv1"});
    EXPECT_EQ(writer.codec(), "ffv1");
    EXPECT_EQ(writer.pixel_format(), "bgra");  // RGBA kept exactly
    Frame frame;
    std::int64_t pts;
    while (reader.read(frame, pts)) {
      writer.write(frame, pts);
      writer.write(reader.take_packets());
    }
    writer.write(reader.take_packets());
    EXPECT_FALSE(fs::exists(out));  // written beside it until finished
    writer.finish();
    EXPECT_EQ(writer.frames_written(), 50);
  }
  EXPECT_EQ(listing(dir_ / "out"), std::vector<std::string>{"copy.mkv"});

  const Decoded a = read_all(src);
  const Decoded b = read_all(out);
  EXPECT_EQ(b.info.time_base, a.info.time_base);
  EXPECT_EQ(b.info.frame_rate, a.info.frame_rate);
  ASSERT_EQ(b.frames.size(), a.frames.size());
  EXPECT_EQ(b.pts, a.pts);
  for (std::size_t i = 0; i < a.frames.size(); ++i) {
    ASSERT_TRUE(same_pixels(a.frames[i], b.frames[i])) << "frame " << i;
  }
  // Audio and subtitle packets byte for byte, with their timestamps (ffmpeg's framemd5).
  const auto audio_in = packet_md5s(src, "a"), audio_out = packet_md5s(out, "a");
  EXPECT_GT(audio_in.size(), 50u);
  EXPECT_EQ(audio_out, audio_in);
  const auto subs_in = packet_md5s(src, "s"), subs_out = packet_md5s(out, "s");
  EXPECT_EQ(subs_in.size(), 2u);
  EXPECT_EQ(subs_out, subs_in);
  VideoReader check(out);
  ASSERT_EQ(check.streams().size(), 2u);
  EXPECT_EQ(check.streams()[0].language, "eng");
}

TEST_F(VideoIo, DefaultLossyCodecKeepsTimestamps) {
  const fs::path src = source();
  const fs::path out = dir_ / "out" / "lossy.mp4";
  const Decoded a = read_all(src);
  {
    VideoReader reader(src);
    VideoWriter writer(out, reader.info());
    EXPECT_TRUE(writer.codec() == "libx264" || writer.codec() == "mpeg4") << writer.codec();
    EXPECT_EQ(writer.pixel_format(), "yuv420p");
    for (std::size_t i = 0; i < a.frames.size(); ++i) writer.write(a.frames[i], a.pts[i]);
    writer.finish();
  }
  const Decoded b = read_all(out);
  ASSERT_EQ(b.frames.size(), 50u);
  EXPECT_EQ(b.info.frame_rate, (Rational{25, 1}));
  for (std::size_t i = 0; i < b.frames.size(); ++i) {
    // The same instants, whatever time base the MP4 muxer chose.
    EXPECT_EQ(b.pts[i] * b.info.time_base.num * a.info.time_base.den,
              a.pts[i] * a.info.time_base.num * b.info.time_base.den)
        << "frame " << i;
  }
  // Lossy, so a bound: each frame's mean error through 4:2:0 at the encoder's default quality,
  // measured 2.0 levels with libx264 and 3.5 with mpeg4 on testsrc's sharp colour edges. Swapped
  // channels or a studio/full range mix-up would cost tens of levels on its colour bars.
  for (std::size_t i = 0; i < b.frames.size(); ++i) {
    EXPECT_LT(mean_difference(b.frames[i], a.frames[i]), 5.0) << "frame " << i;
  }
}

// Every frame and packet of `src` through a writer to `out`.
void transcode(const fs::path& src, const fs::path& out, VideoWriterOptions options,
               VideoReaderOptions read = {}) {
  read.keep_packets = true;
  VideoReader reader(src, read);
  VideoWriter writer(out, reader, std::move(options));
  Frame frame;
  std::int64_t pts;
  while (reader.read(frame, pts)) {
    writer.write(frame, pts);
    writer.write(reader.take_packets());
  }
  writer.write(reader.take_packets());
  writer.finish();
}

bool has_encoder(const std::string& name) {
  return capture(std::string(TANDEM_FFMPEG_PROGRAM) + " -hide_banner -encoders")
             .find(" " + name + " ") != std::string::npos;
}

// The first audio stream of `file` decoded by the ffmpeg program into interleaved s16 samples.
std::string decoded_audio(const fs::path& file) {
  return capture(std::string(TANDEM_FFMPEG_PROGRAM) + " -nostdin -hide_banner -loglevel error -i " +
                 quote(file) + " -map 0:a:0 -f s16le -");
}

// A field of the first audio stream as ffprobe states it, such as codec_name or start_time.
std::string audio_field(const fs::path& file, const std::string& field) {
  std::string v =
      capture(ffprobe() + " -v error -select_streams a:0 -show_entries stream=" + field +
              " -of csv=p=0 " + quote(file));
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  return v;
}

TEST_F(VideoIo, AudioReencodedIntoAac) {
  if (!has_encoder("aac")) GTEST_SKIP() << "FFmpeg has no aac encoder";
  const fs::path src = audio_source();
  const fs::path out = dir_ / "out" / "aac.mp4";
  // PCM has no place in MP4: re-encoded, it is no error.
  transcode(src, out, {.codec = "mpeg4", .audio_codec = "aac"});
  const std::string streams = " -v error -select_streams a -show_entries stream=codec_name ";
  EXPECT_EQ(capture(ffprobe() + streams + "-of csv=p=0 " + quote(out)), "aac\n");
  EXPECT_EQ(audio_field(out, "sample_rate"), "44100");
  EXPECT_EQ(audio_field(out, "channels"), "2");
  const double frame = 1024.0 / 44100;  // one AAC frame
  const double bytes_per_second = 44100.0 * 2 * 2;
  const double in_seconds = decoded_audio(src).size() / bytes_per_second;
  const double out_seconds = decoded_audio(out).size() / bytes_per_second;
  EXPECT_NEAR(in_seconds, 1.0, 0.05);
  EXPECT_NEAR(out_seconds, in_seconds, 0.1);
  EXPECT_NEAR(std::stod(audio_field(out, "start_time")), std::stod(audio_field(src, "start_time")),
              frame);

  // From --start 0.5 the audio starts at 0 with the video, half a second of it.
  const fs::path late = dir_ / "out" / "late.mp4";
  transcode(src, late, {.codec = "mpeg4", .audio_codec = "aac"}, {.start = 0.5});
  EXPECT_NEAR(std::stod(audio_field(late, "start_time")), 0.0, frame);
  EXPECT_NEAR(decoded_audio(late).size() / bytes_per_second, 0.5, 0.1);
}

TEST_F(VideoIo, AudioReencodedIntoFlacLosslessly) {
  if (!has_encoder("flac")) GTEST_SKIP() << "FFmpeg has no flac encoder";
  const fs::path src = audio_source();
  const fs::path out = dir_ / "out" / "flac.mkv";
  transcode(src, out, {.codec = "ffv1", .audio_codec = "flac"});
  EXPECT_EQ(audio_field(out, "codec_name"), "flac");
  const std::string in = decoded_audio(src), written = decoded_audio(out);
  EXPECT_EQ(in.size(), 44100u * 2 * 2);
  EXPECT_TRUE(written == in) << written.size() << " bytes of samples, " << in.size() << " before";
}

TEST_F(VideoIo, BadAudioCodecsLeaveNothing) {
  const fs::path src = audio_source();
  VideoReader reader(src, {.keep_packets = true});
  const fs::path out = dir_ / "out";
  const auto refused = [&](const fs::path& path, const std::string& audio_codec) {
    return error_of([&] { VideoWriter w(path, reader, {.audio_codec = audio_codec}); });
  };
  const std::string unknown = refused(out / "a.mkv", "nonsense");
  EXPECT_EQ(unknown.rfind("cannot write '" + (out / "a.mkv").string() +
                              "': no audio encoder 'nonsense' (FFmpeg has ",
                          0),
            0u)
      << unknown;
  EXPECT_EQ(refused(out / "a.mkv", "mpeg4"), "cannot write '" + (out / "a.mkv").string() +
                                                 "': 'mpeg4' is a video encoder, not an audio one");
  EXPECT_EQ(refused(out / "a.mp4", "pcm_s16le"),
            "cannot write '" + (out / "a.mp4").string() +
                "': the mp4 container cannot hold pcm_s16le audio (choose another audio codec or "
                "container)");
  EXPECT_TRUE(listing(out).empty());
}

TEST_F(VideoIo, OddSizeAndRotation) {
  // An odd size cannot be 4:2:0, so the lossy default takes 4:4:4; rotation travels in the
  // display matrix, and a copy keeps it.
  VideoInfo info;
  info.width = 33;
  info.height = 17;
  info.frame_rate = {30, 1};
  info.rotation = 90;
  const fs::path first = dir_ / "out" / "rotated.mp4";
  Frame frame(33, 17, PixelFormat::rgba8);
  {
    VideoWriter writer(first, info, {.codec = "mpeg4"});
    EXPECT_EQ(writer.pixel_format(), "yuv420p");  // MPEG-4 part 2 has no 4:4:4; odd sizes round up
    for (int i = 0; i < 5; ++i) writer.write(frame, i);
    writer.finish();
  }
  EXPECT_NE(capture(ffprobe() + " -v error -show_streams " + quote(first)).find("rotation=-90"),
            std::string::npos);  // ffprobe's counter-clockwise angle
  VideoReader reader(first);
  EXPECT_EQ(reader.info().rotation, 90);
  ASSERT_TRUE(reader.info().display_matrix.has_value());
  const fs::path second = dir_ / "out" / "copy.mov";
  {
    VideoWriter writer(second, reader);
    if (writer.codec() == "libx264") {
      EXPECT_EQ(writer.pixel_format(), "yuv444p");
    }
    std::int64_t pts;
    while (reader.read(frame, pts)) writer.write(frame, pts);
    writer.finish();
  }
  VideoReader copy(second);
  EXPECT_EQ(copy.info().rotation, 90);
  EXPECT_EQ(copy.info().display_matrix, reader.info().display_matrix);

  // Matroska keeps the rotation from FFmpeg 6 on; where it cannot, the writer says so.
  const fs::path mkv = dir_ / "out" / "rotated.mkv";
  std::vector<std::string> left_out;
  {
    VideoWriter writer(mkv, info, {.codec = "ffv1"});
    left_out = writer.left_out();
    writer.write(frame, 0);
    writer.finish();
  }
  if (VideoReader(mkv).info().rotation == 90) {
    EXPECT_TRUE(left_out.empty());
  } else {
    ASSERT_EQ(left_out.size(), 1u);
    EXPECT_EQ(left_out[0],
              "the display rotation (90 degrees): the matroska container cannot store it");
  }
}

// yuv420p frames of an odd size (chroma planes round up) through a lossless codec, sample for
// sample both ways, with the encoding the file is tagged with.
TEST_F(VideoIo, PlanesRoundTripLosslessly) {
  VideoInfo info;
  info.width = 33;
  info.height = 17;
  info.frame_rate = {25, 1};
  info.color_matrix = "bt709";
  info.color_range = "tv";
  const YuvEncoding bt709{YuvEncoding::Matrix::bt709, false};
  const fs::path out = dir_ / "out" / "planes.mkv";
  std::vector<Frame> written;
  {
    VideoWriter writer(out, info, {.codec = "ffv1", .pix_fmt = "yuv420p"});
    EXPECT_EQ(writer.pixel_format(), "yuv420p");
    for (int i = 0; i < 5; ++i) {
      written.push_back(planar_frame(33, 17, bt709, [i](int p, int x, int y) {
        return x * (7 + 2 * p) + y * 13 + i * 31 + p * 85;
      }));
      writer.write(written.back(), i);
    }
    writer.finish();
  }
  VideoReader reader(out);
  EXPECT_EQ(reader.info().pixel_format, "yuv420p");
  ASSERT_TRUE(reader.info().yuv_encoding.has_value());
  EXPECT_EQ(*reader.info().yuv_encoding, bt709);
  Frame frame(33, 17, PixelFormat::yuv420p, 4096);  // a wide pitch, as one made for the devices
  std::int64_t pts;
  int n = 0;
  while (reader.read(frame, pts)) {
    ASSERT_LT(n, 5);
    EXPECT_EQ(frame.yuv_encoding(), bt709);
    EXPECT_EQ(test::max_difference(frame, written[n]), 0) << "frame " << n;
    ++n;
  }
  EXPECT_EQ(n, 5);
}

// The matrix and range the file states, or the yuvj formats imply, reach the frames read.
TEST_F(VideoIo, PlanesTakeTheStatedEncoding) {
  VideoInfo info;
  info.width = 34;
  info.height = 18;
  info.frame_rate = {25, 1};
  info.color_matrix = "bt2020nc";
  info.color_range = "pc";
  const YuvEncoding bt2020_full{YuvEncoding::Matrix::bt2020, true};
  const fs::path out = dir_ / "out" / "bt2020.mkv";
  const Frame written =
      planar_frame(34, 18, bt2020_full, [](int p, int x, int y) { return x * 5 + y * 3 + p * 50; });
  {
    VideoWriter writer(out, info, {.codec = "ffv1", .pix_fmt = "yuv420p"});
    for (int i = 0; i < 2; ++i) writer.write(written, i);
    writer.finish();
  }
  VideoReader reader(out);
  EXPECT_EQ(reader.info().color_matrix, "bt2020nc");
  EXPECT_EQ(reader.info().color_range, "pc");
  EXPECT_EQ(reader.info().yuv_encoding, bt2020_full);
  Frame frame(34, 18, PixelFormat::yuv420p);
  std::int64_t pts;
  ASSERT_TRUE(reader.read(frame, pts));
  EXPECT_EQ(frame.yuv_encoding(), bt2020_full);
  EXPECT_EQ(test::max_difference(frame, written), 0);  // the encoder's colours: copied as they are

  // Motion JPEG's full-range yuvj420p, BT.601.
  const fs::path jpeg = dir_ / "jpeg.mkv";
  ASSERT_TRUE(ffmpeg("-f lavfi -i testsrc=size=64x48:rate=25 -t 0.2 -pix_fmt yuvj420p -c:v mjpeg " +
                     quote(jpeg)));
  VideoReader j(jpeg);
  const YuvEncoding bt601_full{YuvEncoding::Matrix::bt601, true};
  EXPECT_EQ(j.info().yuv_encoding, bt601_full);
  Frame planes(64, 48, PixelFormat::yuv420p);
  ASSERT_TRUE(j.read(planes, pts));
  EXPECT_EQ(planes.yuv_encoding(), bt601_full);

  // An unstated matrix is BT.709 from 720 lines, else BT.601, limited range.
  const fs::path hd = dir_ / "hd.mkv";
  ASSERT_TRUE(ffmpeg("-f lavfi -i color=size=16x720:rate=25 -t 0.04 -pix_fmt yuv420p -c:v ffv1 " +
                     quote(hd)));
  EXPECT_EQ(VideoReader(hd).info().yuv_encoding, (YuvEncoding{YuvEncoding::Matrix::bt709, false}));
}

// 10-bit 4:2:0 is resampled to 8 bits in its own encoding: close to ffmpeg's own conversion.
TEST_F(VideoIo, DeeperPlanesKeepTheirEncoding) {
  const fs::path src = dir_ / "deep.mkv";
  ASSERT_TRUE(
      ffmpeg("-f lavfi -i testsrc=size=34x18:rate=25 -t 0.12 -pix_fmt yuv420p10le "
             "-colorspace bt2020nc -color_range tv -c:v ffv1 " +
             quote(src)));
  const fs::path raw = dir_ / "frames.yuv";
  ASSERT_TRUE(ffmpeg("-i " + quote(src) + " -f rawvideo -pix_fmt yuv420p " + quote(raw)));
  std::ifstream in(raw, std::ios::binary);
  VideoReader reader(src);
  const YuvEncoding bt2020{YuvEncoding::Matrix::bt2020, false};
  EXPECT_EQ(reader.info().yuv_encoding, bt2020);
  Frame frame(34, 18, PixelFormat::yuv420p);
  std::int64_t pts;
  int n = 0;
  while (reader.read(frame, pts)) {
    EXPECT_EQ(frame.yuv_encoding(), bt2020);
    Frame expected(34, 18, PixelFormat::yuv420p);
    for (int p = 0; p < 3; ++p) {
      for (int y = 0; y < expected.plane_height(p); ++y) {
        ASSERT_TRUE(
            in.read(reinterpret_cast<char*>(expected.plane_row(p, y)), expected.plane_width(p)));
      }
    }
    // Rounding and dithering from 10 bits differ by a code at most.
    EXPECT_LE(test::max_difference(frame, expected), 1) << "frame " << n;
    ++n;
  }
  EXPECT_EQ(n, 3);
}

// An RGB-coded stream has no Y'CbCr encoding; read as planes it is the RGBA read converted with
// BT.601 (fewer than 720 lines), limited range.
TEST_F(VideoIo, RgbSourceReadsIntoPlanes) {
  VideoInfo info;
  info.width = 33;
  info.height = 17;
  info.frame_rate = {25, 1};
  const fs::path out = dir_ / "out" / "rgb.mkv";
  const std::uint8_t palette[6][3] = {{255, 0, 0},    {0, 255, 0},  {0, 0, 255},
                                      {200, 100, 50}, {30, 60, 90}, {128, 128, 128}};
  {
    VideoWriter writer(out, info, {.codec = "ffv1"});
    ASSERT_EQ(writer.pixel_format(), "bgra");
    Frame frame(33, 17, PixelFormat::rgba8);
    for (int i = 0; i < 5; ++i) {
      // Bars 16 pixels wide, so that chroma samples away from their edges see one colour.
      for (int y = 0; y < 17; ++y) {
        for (int x = 0; x < 33; ++x) {
          std::memcpy(frame.row(y) + 4 * x, palette[(x / 16 + i) % 6], 3);
          frame.row(y)[4 * x + 3] = 255;
        }
      }
      writer.write(frame, i);
    }
    writer.finish();
  }
  const Decoded rgba = read_all(out);
  VideoReader reader(out);
  EXPECT_FALSE(reader.info().yuv_encoding.has_value());
  Frame frame(33, 17, PixelFormat::yuv420p);
  std::int64_t pts;
  std::size_t n = 0;
  for (; reader.read(frame, pts); ++n) {
    ASSERT_LT(n, rgba.frames.size());
    EXPECT_EQ(frame.yuv_encoding(), (YuvEncoding{YuvEncoding::Matrix::bt601, false}));
    const Frame& a = rgba.frames[n];
    const auto rgb = [&](int x, int y, int c) {
      return static_cast<double>(a.row(std::clamp(y, 0, 16))[4 * std::clamp(x, 0, 32) + c]);
    };
    for (int y = 0; y < 17; ++y) {
      for (int x = 0; x < 33; ++x) {
        const double luma =
            16 + (65.481 * rgb(x, y, 0) + 128.553 * rgb(x, y, 1) + 24.966 * rgb(x, y, 2)) / 255;
        EXPECT_NEAR(frame.plane_row(0, y)[x], luma, 2) << "frame " << n << " at " << x << "," << y;
      }
    }
    // Chroma where the bicubic filter's reach (four pixels each way) sees one colour.
    for (int cy = 0; cy < frame.plane_height(1); ++cy) {
      for (int cx = 0; cx < frame.plane_width(1); ++cx) {
        bool uniform = true;
        for (int dy = -3; dy <= 4; ++dy) {
          for (int dx = -3; dx <= 4; ++dx) {
            for (int c = 0; c < 3; ++c)
              uniform &= rgb(2 * cx + dx, 2 * cy + dy, c) == rgb(2 * cx, 2 * cy, c);
          }
        }
        if (!uniform) continue;
        const double r = rgb(2 * cx, 2 * cy, 0), g = rgb(2 * cx, 2 * cy, 1),
                     b = rgb(2 * cx, 2 * cy, 2);
        EXPECT_NEAR(frame.plane_row(1, cy)[cx], 128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255,
                    2)
            << "frame " << n << " Cb at " << cx << "," << cy;
        EXPECT_NEAR(frame.plane_row(2, cy)[cx], 128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255,
                    2)
            << "frame " << n << " Cr at " << cx << "," << cy;
      }
    }
  }
  EXPECT_EQ(n, 5u);
}

// Planes in another encoding than the encoder's are converted into its colours (its range, here)
// and to RGB for an RGB encoder.
TEST_F(VideoIo, WriterConvertsPlanesIntoTheEncodersColours) {
  VideoInfo info;
  info.width = 16;
  info.height = 8;
  info.frame_rate = {25, 1};
  info.color_matrix = "bt709";
  info.color_range = "tv";
  const Frame full = planar_frame(16, 8, {YuvEncoding::Matrix::bt709, true}, [](int p, int, int) {
    return p == 0 ? 200 : p == 1 ? 60 : 220;
  });
  const fs::path limited = dir_ / "out" / "limited.mkv";
  {
    VideoWriter writer(limited, info, {.codec = "ffv1", .pix_fmt = "yuv420p"});
    writer.write(full, 0);
    writer.finish();
  }
  Frame frame(16, 8, PixelFormat::yuv420p);
  std::int64_t pts;
  VideoReader reader(limited);
  ASSERT_TRUE(reader.read(frame, pts));
  EXPECT_EQ(frame.yuv_encoding(), (YuvEncoding{YuvEncoding::Matrix::bt709, false}));
  // Y' 16 + 219/255 of the full code, Cb and Cr 128 + 224/255 of the distance from 128.
  for (int p = 0; p < 3; ++p) {
    const double expected =
        p == 0 ? 16 + 200 * 219.0 / 255 : 128 + (p == 1 ? -68 : 92) * 224.0 / 255;
    for (int y = 0; y < frame.plane_height(p); ++y) {
      for (int x = 0; x < frame.plane_width(p); ++x)
        EXPECT_NEAR(frame.plane_row(p, y)[x], expected, 1) << "plane " << p;
    }
  }

  // BT.709 limited-range codes to RGB (an RGB encoder), against the standard's formula.
  const Frame coded = planar_frame(16, 8, {YuvEncoding::Matrix::bt709, false}, [](int p, int, int) {
    return p == 0 ? 120 : p == 1 ? 140 : 110;
  });
  const fs::path rgb = dir_ / "out" / "rgb.mkv";
  {
    VideoWriter writer(rgb, info, {.codec = "ffv1", .pix_fmt = "bgr0"});
    writer.write(coded, 0);
    writer.finish();
  }
  const Decoded d = read_all(rgb);
  ASSERT_EQ(d.frames.size(), 1u);
  const double luma = 1.164384 * (120 - 16), cb = 140 - 128, cr = 110 - 128;
  const double expected[3] = {luma + 1.792741 * cr, luma - 0.213249 * cb - 0.532909 * cr,
                              luma + 2.112402 * cb};
  for (int y = 0; y < 8; ++y) {
    for (int x = 0; x < 16; ++x) {
      for (int c = 0; c < 3; ++c) EXPECT_NEAR(d.frames[0].row(y)[4 * x + c], expected[c], 2);
    }
  }
}

// Frames of another size are refused, by the reader and by the writer; float RGBA frames are
// taken by both (video deeper than 8 bits without a plane format of tandem's goes as them).
TEST_F(VideoIo, PlaneFramesOfAnotherSizeAreRefused) {
  VideoInfo info;
  info.width = 33;
  info.height = 17;
  info.frame_rate = {25, 1};
  const fs::path out = dir_ / "out" / "small.mkv";
  {
    VideoWriter writer(out, info, {.codec = "ffv1", .pix_fmt = "yuv420p"});
    EXPECT_EQ(
        error_of([&] { writer.write(Frame(32, 17, PixelFormat::yuv420p), 0); }),
        "cannot write '" + out.string() +
            "': frames must be rgba8, rgba32f or of a plane format, 33x17, not yuv420p 32x17");
    writer.write(Frame(33, 17, PixelFormat::yuv420p), 0);
    writer.write(Frame(33, 17, PixelFormat::rgba32f), 1);
    writer.finish();
  }
  VideoReader reader(out);
  std::int64_t pts;
  Frame wrong(33, 18, PixelFormat::yuv420p);
  EXPECT_EQ(error_of([&] { reader.read(wrong, pts); }),
            "VideoReader::read: the frame must be rgba8, rgba32f or of a plane format, 33x17, not "
            "yuv420p 33x18");
  // Both frames read as floats: the second was written from floats of 0, black, opaque.
  VideoReader again(out);
  Frame deep(33, 17, PixelFormat::rgba32f);
  int frames = 0;
  while (again.read(deep, pts)) ++frames;
  EXPECT_EQ(frames, 2);
  EXPECT_NEAR(deep.row_as<float>(8)[4 * 16], 0.0f, 1e-3f);
  EXPECT_EQ(deep.row_as<float>(8)[4 * 16 + 3], 1.0f);
}

// Runs `body` with standard input (fd 0) or output (fd 1) connected to `command` through a pipe.
void with_pipe(const std::string& command, int fd, const std::function<void()>& body) {
  std::fflush(stdout);
  FILE* p = popen(command.c_str(), fd == 0 ? "r" : "w");
  ASSERT_NE(p, nullptr);
  const int saved = ::dup(fd);
  ::dup2(::fileno(p), fd);
  std::string failure;
  try {
    body();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  std::fflush(stdout);
  ::dup2(saved, fd);
  ::close(saved);
  const int status = pclose(p);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
  EXPECT_EQ(failure, "");
}

TEST_F(VideoIo, Y4mThroughPipes) {
  const std::string make = std::string(TANDEM_FFMPEG_PROGRAM) +
                           " -nostdin -hide_banner -loglevel error -f lavfi -i "
                           "testsrc=size=160x120:rate=25 -t 1 -pix_fmt yuv444p -f yuv4mpegpipe ";
  const fs::path file = dir_ / "file.y4m";
  ASSERT_EQ(std::system((make + "-y " + quote(file)).c_str()), 0);
  const Decoded from_file = read_all(file);
  ASSERT_EQ(from_file.frames.size(), 25u);

  Decoded piped;
  with_pipe(make + "-", 0, [&] { piped = read_all("-"); });
  EXPECT_EQ(piped.info.container, "yuv4mpegpipe");
  EXPECT_EQ(piped.info.frame_rate, (Rational{25, 1}));
  ASSERT_EQ(piped.frames.size(), 25u);
  for (std::size_t i = 0; i < piped.frames.size(); ++i) {
    EXPECT_EQ(piped.pts[i], static_cast<std::int64_t>(i));  // time base 1/25
    EXPECT_TRUE(same_pixels(piped.frames[i], from_file.frames[i])) << "frame " << i;
  }

  // Out through standard output into ffmpeg, which stores it losslessly.
  const fs::path stored = dir_ / "stored.mkv";
  with_pipe(std::string(TANDEM_FFMPEG_PROGRAM) +
                " -nostdin -hide_banner -loglevel error -y -f yuv4mpegpipe -i - -c:v ffv1 " +
                quote(stored),
            1, [&] {
              VideoWriter writer("-", from_file.info);
              // Raw pictures: FFmpeg 5's muxer takes them as wrapped_avframe, later ones also as
              // rawvideo.
              EXPECT_TRUE(writer.codec() == "wrapped_avframe" || writer.codec() == "rawvideo");
              EXPECT_EQ(writer.pixel_format(), "yuv444p");
              for (std::size_t i = 0; i < from_file.frames.size(); ++i) {
                writer.write(from_file.frames[i], from_file.pts[i]);
              }
              writer.finish();
            });
  const Decoded back = read_all(stored);
  ASSERT_EQ(back.frames.size(), 25u);
  for (std::size_t i = 0; i < back.frames.size(); ++i) {
    // RGBA -> 8-bit 4:4:4 BT.601 studio range -> RGBA: the YCbCr steps are 255/219 and 255/224
    // of an RGB step and Cb weighs 1.772 into blue, so rounding moves a channel by at most
    // 0.58 + 1.01 < 2 levels; these frames came from YCbCr in the first place, so most are exact.
    EXPECT_LE(max_difference(back.frames[i], from_file.frames[i]), 2) << "frame " << i;
  }
}

// Byte offsets of a file's video packets, from ffprobe.
std::vector<std::size_t> video_packet_offsets(const fs::path& file,
                                              std::vector<std::size_t>* sizes = nullptr) {
  const std::string csv = capture(ffprobe() +
                                  " -v error -select_streams v -show_entries "
                                  "packet=pos,size -of csv=p=0 " +
                                  quote(file));
  std::vector<std::size_t> offsets;
  std::istringstream in(csv);
  for (std::string line; std::getline(in, line);) {
    std::size_t size = 0, pos = 0;
    if (std::sscanf(line.c_str(), "%zu,%zu", &size, &pos) == 2) {
      offsets.push_back(pos);
      if (sizes) sizes->push_back(size);
    }
  }
  return offsets;
}

TEST_F(VideoIo, Y4mFileLeavesOtherStreamsOut) {
  // YUV4MPEG2 holds one video stream: audio and subtitles are left out, and said so.
  const fs::path src = source();
  const fs::path out = dir_ / "out" / "video.y4m";
  VideoReader reader(src, {.keep_packets = true});
  {
    VideoWriter writer(out, reader);
    EXPECT_EQ(writer.left_out(),
              (std::vector<std::string>{
                  "audio stream #1 (pcm_s16le): the yuv4mpegpipe container cannot hold it",
                  "subtitle stream #2 (subrip): the yuv4mpegpipe container cannot hold it"}));
    Frame frame;
    std::int64_t pts;
    while (reader.read(frame, pts)) {
      writer.write(frame, pts);
      writer.write(reader.take_packets());
    }
    writer.finish();
  }
  const Decoded back = read_all(out);
  EXPECT_EQ(back.frames.size(), 50u);
  EXPECT_EQ(back.info.frame_rate, (Rational{25, 1}));
}

TEST_F(VideoIo, TruncatedFile) {
  // Matroska cut in half: the demuxer finds the file ends inside its segment.
  const fs::path src = source();
  const fs::path cut = dir_ / "cut.mkv";
  fs::copy_file(src, cut);
  fs::resize_file(cut, fs::file_size(src) / 2);
  const std::string stop = error_of([&] { read_all(cut); });
  EXPECT_EQ(stop.rfind("cannot decode '" + cut.string() + "' at frame ", 0), 0u) << stop;
  EXPECT_NE(stop.find("): the file is truncated ("), std::string::npos) << stop;

  const Decoded skip = read_all(cut, {.on_error = OnDecodeError::skip});
  EXPECT_GT(skip.frames.size(), 15u);
  EXPECT_LT(skip.frames.size(), 35u);
  ASSERT_FALSE(skip.errors.empty());
  EXPECT_NE(skip.errors[0].find("the file is truncated"), std::string::npos) << skip.errors[0];

  // MP4 with its index first, cut exactly between two frames: every packet read is whole, and
  // only the length the file states shows that half of it is missing.
  const fs::path mp4 = dir_ / "fast.mp4";
  ASSERT_TRUE(
      ffmpeg("-f lavfi -i testsrc=size=160x120:rate=25 -t 2 -c:v mpeg4 -movflags "
             "+faststart " +
             quote(mp4)));
  const std::vector<std::size_t> offsets = video_packet_offsets(mp4);
  ASSERT_EQ(offsets.size(), 50u);
  fs::resize_file(mp4, offsets[25]);
  EXPECT_EQ(error_of([&] { read_all(mp4); }),
            "cannot decode '" + mp4.string() +
                "' at frame 25 (1.00 s): the file is truncated (it says the video lasts 2.00 s)");
  EXPECT_EQ(read_all(mp4, {.on_error = OnDecodeError::skip}).frames.size(), 25u);

  // MP4 with its index at the end cannot even be opened when cut.
  const fs::path slow = dir_ / "slow.mp4";
  ASSERT_TRUE(ffmpeg("-f lavfi -i testsrc=size=160x120:rate=25 -t 2 -c:v mpeg4 " + quote(slow)));
  fs::resize_file(slow, fs::file_size(slow) / 2);
  EXPECT_EQ(error_of([&] { VideoReader r(slow); }),
            "cannot read '" + slow.string() +
                "': not a media file FFmpeg can read, or it is truncated or corrupt");
}

TEST_F(VideoIo, CorruptMiddle) {
  const fs::path src = source();
  const Decoded all = read_all(src);
  std::map<std::int64_t, const Frame*> by_pts;
  for (std::size_t i = 0; i < all.frames.size(); ++i) by_pts[all.pts[i]] = &all.frames[i];

  // 4 KiB of junk over the middle of the file: it hits block headers, so Matroska has to
  // resynchronise and frames are lost.
  const fs::path bad = dir_ / "bad.mkv";
  fs::copy_file(src, bad);
  overwrite(bad, fs::file_size(bad) / 2, 4096, 7);
  const std::string stop = error_of([&] { read_all(bad); });
  EXPECT_EQ(stop.rfind("cannot decode '" + bad.string() + "' at frame ", 0), 0u) << stop;
  const int at =
      std::atoi(stop.c_str() + std::strlen("cannot decode '' at frame ") + bad.string().size());
  EXPECT_GT(at, 10) << stop;
  EXPECT_LT(at, 40) << stop;

  // Skipping: everything around the damage still comes out, each frame equal to the original
  // frame of its timestamp.
  const Decoded skip = read_all(bad, {.on_error = OnDecodeError::skip});
  EXPECT_FALSE(skip.errors.empty());
  EXPECT_GT(skip.frames.size(), static_cast<std::size_t>(at));
  EXPECT_LT(skip.frames.size(), 50u);
  EXPECT_EQ(skip.pts.back(), 1960);
  for (std::size_t i = 0; i < skip.frames.size(); ++i) {
    ASSERT_TRUE(by_pts.count(skip.pts[i])) << skip.pts[i];
    EXPECT_TRUE(same_pixels(skip.frames[i], *by_pts[skip.pts[i]])) << "pts " << skip.pts[i];
  }
}

TEST_F(VideoIo, CorruptFrame) {
  // Junk inside one frame's compressed data: the container is intact, the FFV1 slice checksum
  // catches it, and the error names that frame.
  const fs::path src = source();
  std::vector<std::size_t> sizes;
  const std::vector<std::size_t> offsets = video_packet_offsets(src, &sizes);
  ASSERT_EQ(offsets.size(), 50u);
  const fs::path bad = dir_ / "bad.mkv";
  fs::copy_file(src, bad);
  overwrite(bad, offsets[30] + sizes[30] / 2, 64, 11);

  const std::string stop = error_of([&] { read_all(bad); });
  EXPECT_EQ(stop, "cannot decode '" + bad.string() +
                      "' at frame 30 (1.20 s): the frame is damaged (the decoder reported errors)");

  // Skipping: frame 30 is left out, and so are the frames after it up to the next key frame
  // (FFV1 carries its coder state from frame to frame between key frames); everything else is
  // the original frame of its timestamp.
  const Decoded all = read_all(src);
  const Decoded skip = read_all(bad, {.on_error = OnDecodeError::skip});
  ASSERT_GE(skip.errors.size(), 1u);
  EXPECT_NE(skip.errors[0].find("at frame 30 "), std::string::npos) << skip.errors[0];
  ASSERT_GE(skip.frames.size(), 31u);
  for (std::size_t i = 0; i < 30; ++i) EXPECT_EQ(skip.pts[i], all.pts[i]);
  EXPECT_GT(skip.pts[30], 1200);
  EXPECT_EQ(skip.pts.back(), 1960);
  std::map<std::int64_t, const Frame*> by_pts;
  for (std::size_t i = 0; i < all.frames.size(); ++i) by_pts[all.pts[i]] = &all.frames[i];
  for (std::size_t i = 0; i < skip.frames.size(); ++i) {
    EXPECT_TRUE(same_pixels(skip.frames[i], *by_pts.at(skip.pts[i]))) << "pts " << skip.pts[i];
  }
  if (skip.frames.size() < 49u) {
    ASSERT_EQ(skip.errors.size(), 2u);
    EXPECT_NE(skip.errors[1].find("left out frames 31 to "), std::string::npos) << skip.errors[1];
  }
}

// Frame numbers a skipping reader left out: "at frame N" lines and "left out frames A to B".
std::vector<std::int64_t> left_out_numbers(const std::vector<std::string>& errors) {
  std::vector<std::int64_t> numbers;
  for (const std::string& e : errors) {
    long long a = 0, b = 0;
    if (const auto at = e.find("' at frame "); at != std::string::npos) {
      if (std::sscanf(e.c_str() + at, "' at frame %lld", &a) == 1) numbers.push_back(a);
    } else if (const auto range = e.find("left out frames "); range != std::string::npos) {
      if (std::sscanf(e.c_str() + range, "left out frames %lld to %lld", &a, &b) == 2) {
        for (long long n = a; n <= b; ++n) numbers.push_back(n);
      }
    } else if (const auto one = e.find("left out frame "); one != std::string::npos) {
      if (std::sscanf(e.c_str() + one, "left out frame %lld", &a) == 1) numbers.push_back(a);
    }
  }
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

TEST_F(VideoIo, DamagedFramesAreTheSameWithAnyThreads) {
  // Junk inside three frames of a stream with B-frames, decoded with and without frame threads:
  // FFmpeg decodes several frames at once on frame threads and logs from them at any time, and
  // it may hand out a frame before its decode_error_flags are set. The damage found must not
  // depend on that: the same frames are left out, numbered the same, in every run.
  std::vector<std::string> codecs = {"mpeg4 -bf 2"};
  if (capture(std::string(TANDEM_FFMPEG_PROGRAM) + " -hide_banner -encoders").find(" libx264 ") !=
      std::string::npos) {
    codecs.push_back("libx264 -bf 3");
  }
  for (const std::string& codec : codecs) {
    SCOPED_TRACE(codec);
    const fs::path src = dir_ / "clean.mkv";
    ASSERT_TRUE(ffmpeg("-f lavfi -i testsrc=size=320x240:rate=25 -t 4 -g 25 -c:v " + codec + " " +
                       quote(src)));
    std::vector<std::size_t> sizes;
    const std::vector<std::size_t> offsets = video_packet_offsets(src, &sizes);
    ASSERT_EQ(offsets.size(), 100u);
    const fs::path bad = dir_ / "bad.mkv";
    fs::copy_file(src, bad, fs::copy_options::overwrite_existing);
    for (const std::size_t packet : {30, 31, 60}) {
      overwrite(bad, offsets[packet] + sizes[packet] / 2,
                std::min<std::size_t>(48, sizes[packet] / 3), static_cast<std::uint32_t>(packet));
    }

    const Decoded clean = read_all(src, {.threads = 1});
    ASSERT_EQ(clean.frames.size(), 100u);
    std::map<std::int64_t, const Frame*> by_pts;
    for (std::size_t i = 0; i < clean.frames.size(); ++i) by_pts[clean.pts[i]] = &clean.frames[i];

    const Decoded first = read_all(bad, {.on_error = OnDecodeError::skip, .threads = 1});
    const std::vector<std::int64_t> left_out = left_out_numbers(first.errors);
    ASSERT_FALSE(left_out.empty());
    EXPECT_GE(left_out.front(), 25);  // the first key frame after the damage ends the wait
    EXPECT_LE(left_out.back(), 75);
    EXPECT_EQ(first.frames.size() + left_out.size(), 100u);
    // What is handed out is the clean file's frame of its timestamp, pixel for pixel.
    for (std::size_t i = 0; i < first.frames.size(); ++i) {
      ASSERT_TRUE(by_pts.count(first.pts[i])) << first.pts[i];
      EXPECT_TRUE(same_pixels(first.frames[i], *by_pts[first.pts[i]])) << "pts " << first.pts[i];
    }

    // One thread, two, three, four, eight and FFmpeg's choice, three times each: the same frames
    // and the same frames left out every time; the same lines for the same threads.
    for (const int threads : {1, 2, 3, 4, 8, 0}) {
      std::vector<std::string> errors_before;
      for (int run = 0; run < 3; ++run) {
        SCOPED_TRACE("threads " + std::to_string(threads) + ", run " + std::to_string(run));
        const Decoded d = read_all(bad, {.on_error = OnDecodeError::skip, .threads = threads});
        EXPECT_EQ(d.pts, first.pts);
        EXPECT_EQ(left_out_numbers(d.errors), left_out);
        if (run > 0) {
          EXPECT_EQ(d.errors, errors_before);
        }
        errors_before = d.errors;
        // Stopping names the first frame left out.
        const std::string stop = error_of([&] { read_all(bad, {.threads = threads}); });
        EXPECT_EQ(stop.rfind("cannot decode '" + bad.string() + "' at frame " +
                                 std::to_string(left_out.front()) + " (",
                             0),
                  0u)
            << stop;
      }
    }
  }
}

TEST_F(VideoIo, BadInputs) {
  const fs::path missing = dir_ / "missing.mkv";
  EXPECT_EQ(error_of([&] { VideoReader r(missing); }),
            "cannot read '" + missing.string() + "': no such file");
  const fs::path empty = dir_ / "empty.mp4";
  std::ofstream(empty).close();
  EXPECT_EQ(error_of([&] { VideoReader r(empty); }),
            "cannot read '" + empty.string() + "': the file is empty");
  const fs::path text = dir_ / "text.mkv";
  std::ofstream(text) << "not a video at all\n";
  EXPECT_EQ(error_of([&] { VideoReader r(text); }),
            "cannot read '" + text.string() +
                "': not a media file FFmpeg can read, or it is truncated or corrupt");
  const fs::path audio = dir_ / "audio.mka";
  ASSERT_TRUE(ffmpeg("-f lavfi -i sine -t 0.5 -c:a pcm_s16le " + quote(audio)));
  EXPECT_EQ(
      error_of([&] { VideoReader r(audio); }),
      "cannot read '" + audio.string() + "': it has no video stream (it has audio (pcm_s16le))");
}

TEST_F(VideoIo, BadOutputsLeaveNothing) {
  const fs::path src = source();
  VideoReader reader(src, {.keep_packets = true});
  const fs::path out = dir_ / "out";
  const auto refused = [&](const fs::path& path, VideoWriterOptions options) {
    return error_of([&] { VideoWriter w(path, reader, options); });
  };
  EXPECT_EQ(refused(out / "a.mp4", {.codec = "ffv1", .copy_streams = false}),
            "cannot write '" + (out / "a.mp4").string() +
                "': the mp4 container cannot hold ffv1 video (choose another codec or container)");
  EXPECT_EQ(refused(out / "a.mkv", {.codec = "subrip"}),
            "cannot write '" + (out / "a.mkv").string() +
                "': 'subrip' is a subtitle codec, not a video one");
  EXPECT_EQ(refused(out / "a.mkv", {.codec = "nonsense"}),
            "cannot write '" + (out / "a.mkv").string() +
                "': unknown codec 'nonsense' (ffmpeg -encoders lists them)");
  // PCM audio has no place in MP4, and the writer says so before writing anything.
  EXPECT_EQ(refused(out / "a.mp4", {.codec = "mpeg4"}),
            "cannot write '" + (out / "a.mp4").string() +
                "': the mp4 container cannot hold the audio stream #1 (pcm_s16le) that would be "
                "copied (choose another container, or leave the other streams out)");
  const std::string pix = refused(out / "a.mkv", {.codec = "ffv1", .pix_fmt = "nv12"});
  EXPECT_EQ(pix.rfind("cannot write '" + (out / "a.mkv").string() +
                          "': the ffv1 encoder cannot take pixel format nv12 (it takes yuv420p, ",
                      0),
            0u)
      << pix;
  EXPECT_EQ(refused(out / "a.mkv", {.pix_fmt = "bogus"}),
            "cannot write '" + (out / "a.mkv").string() + "': unknown pixel format 'bogus'");
  EXPECT_EQ(refused(out / "a.xyz", {}), "cannot write '" + (out / "a.xyz").string() +
                                            "': unknown video container '.xyz' (mp4, mkv, mov, "
                                            "webm, avi, y4m, ...)");
  EXPECT_EQ(refused(out / "missing" / "a.mkv", {}),
            "cannot write '" + (out / "missing" / "a.mkv").string() + "': directory '" +
                (out / "missing").string() + "' does not exist");
  std::ofstream(dir_ / "file").close();
  EXPECT_EQ(refused(dir_ / "file" / "a.mkv", {}),
            "cannot write '" + (dir_ / "file" / "a.mkv").string() + "': '" +
                (dir_ / "file").string() + "' is not a directory");
  EXPECT_EQ(refused(out, {}), "cannot write '" + out.string() + "': it is a directory");
  EXPECT_TRUE(listing(out).empty());

  // A writer for a reader that does not keep its packets cannot copy its streams.
  VideoReader plain(src);
  EXPECT_NE(error_of([&] { VideoWriter w(out / "a.mkv", plain); }).find("keep_packets"),
            std::string::npos);
  EXPECT_TRUE(listing(out).empty());
}

TEST_F(VideoIo, AbortRemovesOrKeepsPartial) {
  const fs::path src = source();
  const Decoded all = read_all(src);
  const fs::path out = dir_ / "out" / "partial.mkv";
  for (const bool keep : {false, true}) {
    SCOPED_TRACE(keep ? "keep_partial" : "abort");
    VideoReader reader(src, {.keep_packets = true});
    {
      VideoWriter writer(out, reader, {.codec = "ffv1", .keep_partial = keep});
      Frame frame;
      std::int64_t pts;
      for (int i = 0; i < 10 && reader.read(frame, pts); ++i) {
        writer.write(frame, pts);
        writer.write(reader.take_packets());
      }
      EXPECT_EQ(listing(dir_ / "out").size(), 1u);  // the temporary file
      EXPECT_FALSE(fs::exists(out));
      // Destroyed without finish(): a failed run.
    }
    if (!keep) {
      EXPECT_TRUE(listing(dir_ / "out").empty());
      continue;
    }
    EXPECT_EQ(listing(dir_ / "out"), std::vector<std::string>{"partial.mkv"});
    const Decoded part = read_all(out);  // playable: ends cleanly, no truncation reported
    ASSERT_EQ(part.frames.size(), 10u);
    for (std::size_t i = 0; i < part.frames.size(); ++i) {
      EXPECT_EQ(part.pts[i], all.pts[i]);
      EXPECT_TRUE(same_pixels(part.frames[i], all.frames[i])) << "frame " << i;
    }
    EXPECT_GT(packet_md5s(out, "a").size(), 10u);
  }
}

TEST_F(VideoIo, NamesThatLookLikeProtocolsAreFiles) {
  // "concat:" and "pipe:" are FFmpeg protocols; relative file names with them stay file names.
  const fs::path src = source();
  const fs::path cwd = fs::current_path();
  fs::current_path(dir_);
  fs::copy_file(src, "concat:clip.mkv");
  std::int64_t frames = 0;
  std::string failure;
  try {
    VideoReader reader("concat:clip.mkv");
    VideoWriter writer("pipe:1.mkv", reader.info(), {.codec = "ffv1"});
    Frame frame;
    std::int64_t pts;
    while (reader.read(frame, pts)) writer.write(frame, pts);
    writer.finish();
    frames = read_all("pipe:1.mkv").frames.size();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  fs::current_path(cwd);
  EXPECT_EQ(failure, "");
  EXPECT_EQ(frames, 50);
}

TEST(VideoPaths, Recognised) {
  EXPECT_TRUE(is_video_path("a.mp4"));
  EXPECT_TRUE(is_video_path("a.MKV"));
  EXPECT_TRUE(is_video_path("-"));
  EXPECT_TRUE(is_video_path("clip.y4m"));
  EXPECT_FALSE(is_video_path("a.png"));
  EXPECT_FALSE(is_video_path("a"));
}

}  // namespace
