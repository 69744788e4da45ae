// The command line's video runs (run.hpp): a video into a video, and a video's frames into
// images, with their progress on stderr.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "run.hpp"
#include "tandem/video_io.hpp"
#include "tandem/video_pipeline.hpp"

namespace fs = std::filesystem;

namespace tandem::cli {
namespace {

class Progress {
 public:
  Progress(const std::string& mode, std::int64_t total)
      : json_(mode == "json"), bar_(mode == "auto" && ::isatty(STDERR_FILENO)), total_(total) {}

  void update(std::int64_t frames, const std::vector<double>& fractions,
              const tandem::DeviceSet& devices, bool last = false) {
    if (!json_ && !bar_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!last && now - shown_ < std::chrono::milliseconds(json_ ? 500 : 100)) return;
    shown_ = now;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    const double fps = seconds > 0 ? frames / seconds : 0;
    const double eta = total_ > 0 && fps > 0 ? (total_ - frames) / fps : -1;
    std::string split;
    for (std::size_t d = 0; d < fractions.size(); ++d) {
      char part[48];
      std::snprintf(part, sizeof part, "%s%s %.0f%%", d ? ", " : "", devices[d].info().id.c_str(),
                    100 * fractions[d]);
      split += part;
    }
    if (json_) {
      // fps to 0.01, the ETA to 0.1 s and the split to 1e-4; ordered_json keeps this order.
      auto rounded = [](double v, double per_unit) { return std::round(v * per_unit) / per_unit; };
      nlohmann::ordered_json line = {{"frame", frames},
                                     {"total", total_},
                                     {"fps", rounded(fps, 100)},
                                     {"eta_s", rounded(eta, 10)},
                                     {"split", nlohmann::ordered_json::array()},
                                     {"devices", nlohmann::ordered_json::array()}};
      for (std::size_t d = 0; d < fractions.size(); ++d) {
        line["split"].push_back(rounded(fractions[d], 10000));
        line["devices"].push_back(devices[d].info().id);
      }
      std::fprintf(stderr, "%s\n", line.dump().c_str());
      return;
    }
    char line[256];
    if (total_ > 0) {
      const int width = 24;
      const int done = static_cast<int>(width * std::min<double>(1.0, double(frames) / total_));
      std::snprintf(line, sizeof line, "\r[%.*s%*s] %lld/%lld  %.1f fps  ETA %.0f s  split %s",
                    done, "########################", width - done, "",
                    static_cast<long long>(frames), static_cast<long long>(total_), fps,
                    std::max(eta, 0.0), split.c_str());
    } else {
      std::snprintf(line, sizeof line, "\rframe %lld  %.1f fps  split %s",
                    static_cast<long long>(frames), fps, split.c_str());
    }
    std::fprintf(stderr, "%s\033[K%s", line, last ? "\n" : "");
  }

 private:
  bool json_, bar_;
  std::int64_t total_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point shown_{};
};

// The graph of a video run, checked with the video options before any work.
tandem::Graph video_graph(const RunOptions& o) {
  if (o.on_error != "stop" && o.on_error != "skip") {
    throw tandem::Error("--on-error must be stop or skip, not '" + o.on_error + "'");
  }
  if (o.progress != "auto" && o.progress != "json" && o.progress != "none") {
    throw tandem::Error("--progress must be auto, json or none, not '" + o.progress + "'");
  }
  tandem::Graph graph = tandem::Graph::parse(o.graph);
  graph.validate(tandem::PixelFormat::rgba8);
  return graph;
}

// What a video run reads.
tandem::VideoReaderOptions reader_options(const RunOptions& o) {
  tandem::VideoReaderOptions ro;
  ro.start = o.start;
  ro.duration = o.duration;
  ro.max_frames = o.frames;
  ro.on_error = o.on_error == "skip" ? tandem::OnDecodeError::skip : tandem::OnDecodeError::stop;
  return ro;
}

// A deeper input is not cut to 8 bits without a word: where its frames go to the devices as
// 8-bit RGBA (all but 4:2:0 of 10 bits into a 4:2:0 encoder), or what is written is 8-bit
// (`written_bits`: images, or the encoder's pixel format).
void warn_about_depth(const tandem::VideoReader& reader, tandem::PixelFormat on_devices,
                      int written_bits) {
  const tandem::VideoInfo& info = reader.info();
  if (info.bit_depth <= 8) return;
  const bool deep_on_devices =
      on_devices == tandem::PixelFormat::rgba32f ||
      (tandem::is_planar(on_devices) && tandem::sample_bits(on_devices) > 8);
  if (deep_on_devices && written_bits > 8) return;
  std::fprintf(stderr,
               "tandem: warning: '%s' is %d-bit video (%s); %s, so only 8 bits of each "
               "component reach the output\n",
               reader.name().c_str(), info.bit_depth, info.pixel_format.c_str(),
               written_bits <= 8 ? "the output's pixel format is 8-bit"
                                 : "tandem processes it in 8 bits here");
}

// tonemap on HDR video: a tonemap node that leaves its transfer, primaries or peak at the
// default takes the input's (PQ or HLG, BT.2020, HDR10's stated peak), and says so; the frames
// it makes are SDR sRGB in BT.709, as the output's tags then say.
void adapt_to_hdr(tandem::Graph& graph, const tandem::VideoReader& reader,
                  tandem::VideoWriterOptions& wo) {
  const tandem::VideoInfo& info = reader.info();
  const std::string transfer = info.color_transfer == "smpte2084"      ? "pq"
                               : info.color_transfer == "arib-std-b67" ? "hlg"
                                                                       : "";
  bool tonemaps = false;
  for (std::size_t n = 0; n < graph.nodes().size(); ++n) {
    const tandem::GraphNode& node = graph.nodes()[n];
    if (node.spec->name != "tonemap") continue;
    tonemaps = true;
    if (transfer.empty()) continue;
    std::string took;
    if (node.params.integer("transfer") == 0) {
      graph.set_param(n, "transfer", transfer);
      took += "transfer=" + transfer;
    }
    if (node.params.integer("primaries") == 0 && info.color_primaries == "bt2020") {
      graph.set_param(n, "primaries", "bt2020");
      took += std::string(took.empty() ? "" : ":") + "primaries=bt2020";
    }
    if (node.params["peak"] == 0 && info.peak_luminance > 0) {
      const std::string peak =
          std::to_string(static_cast<int>(std::lround(std::min(info.peak_luminance, 10000.0))));
      graph.set_param(n, "peak", peak);
      took += std::string(took.empty() ? "" : ":") + "peak=" + peak;
    }
    if (!took.empty()) {
      std::fprintf(stderr, "tandem: '%s' is HDR video (%s): tonemap takes %s from its tags\n",
                   reader.name().c_str(), info.color_transfer.c_str(), took.c_str());
    }
  }
  if (tonemaps) {
    wo.color_primaries = "bt709";
    wo.color_transfer = "iec61966-2-1";
    wo.color_matrix = "bt709";
    // SDR from HDR: 8 bits by default, as SDR players take it (10-bit H.264 plays in few).
    if (!transfer.empty()) wo.default_bit_depth = 8;
  }
}

}  // namespace

int run_video(const RunOptions& o, tandem::AtomicFile* report, const SegmentRun* part) {
  tandem::Graph graph = video_graph(o);  // the graph before the output, as for images
  std::error_code ec;
  if (o.output != "-" && fs::exists(o.output, ec) && !o.overwrite) {
    throw tandem::Error("output '" + o.output + "' already exists (use -y to overwrite it)");
  }
  std::optional<tandem::KeyFrameIndex> own_index;
  std::optional<SegmentRun> own_part;
  if (!part && !o.segment.empty()) {
    const auto [k, n] = tandem::parse_segment(o.segment);
    if (o.start > 0 || o.duration > 0 || o.frames > 0) {
      throw tandem::Error("--segment cuts the whole video: it takes no --start, --duration or "
                          "--frames");
    }
    if (o.input == "-") throw tandem::Error("--segment needs an input file, not standard input");
    own_index = tandem::index_key_frames(o.input);
    own_part.emplace();
    own_part->index = &*own_index;
    own_part->segment = tandem::cut_segments(*own_index, n)[k];
    part = &*own_part;
  }
  tandem::VideoReaderOptions ro = reader_options(o);
  ro.keep_packets = true;
  tandem::VideoReader reader(o.input, ro);

  tandem::VideoWriterOptions wo;
  adapt_to_hdr(graph, reader, wo);
  tandem::DeviceSet devices = tandem::DeviceSet::open(o.devices);
  tandem::Pipeline pipeline(devices, std::move(graph), pipeline_options(o));
  std::optional<tandem::VideoSegment> segment;
  if (part) {
    // A segment is read from the key frame its warm-up starts at, to the next segment.
    segment = part->segment;
    tandem::add_warm_up(*segment, *part->index, pipeline.warm_up_frames());
    ro.from_pts = segment->decode_from_pts;
    ro.to_pts = segment->to_pts;
    ro.keep_packets = false;
    reader = tandem::VideoReader(o.input, ro);
    if (!part->on_frames && !reader.streams().empty()) {
      std::fprintf(stderr,
                   "tandem: segment %d/%d holds the video alone; tandem concat --streams-from "
                   "'%s' takes the input's %zu other streams\n",
                   segment->index, segment->count, o.input.c_str(), reader.streams().size());
    }
  }
  const tandem::VideoInfo& info = reader.info();

  const tandem::Size size = pipeline.output_size({info.width, info.height});
  wo.width = size.width;
  wo.height = size.height;
  wo.codec = o.codec;
  wo.crf = o.crf;
  wo.bitrate = o.bitrate;
  wo.pix_fmt = o.pix_fmt;
  wo.keep_partial = o.keep_partial;
  wo.copy_streams = !o.no_copy && !part;
  wo.no_audio = o.no_audio || o.audio == "none";
  if (o.audio != "none") wo.audio_codec = o.audio;
  wo.no_subtitles = o.no_subtitles;
  wo.no_data = o.no_data;
  wo.streams = o.streams;
  tandem::VideoWriter writer(o.output, reader, wo);
  for (const auto& what : writer.left_out()) {
    std::fprintf(stderr, "tandem: not written: %s\n", what.c_str());
  }
  // HDR made SDR in 8 bits by default is what was asked for, not a loss to warn of.
  if (wo.default_bit_depth != 8 || !o.pix_fmt.empty()) {
    warn_about_depth(reader, tandem::device_format(reader, writer), writer.bit_depth());
  }

  std::int64_t total = info.frame_count;
  if (total <= 0 && info.duration > 0 && info.frame_rate.valid()) {
    total = static_cast<std::int64_t>(info.duration * info.frame_rate.value() + 0.5);
  }
  if (o.frames > 0) total = total > 0 ? std::min(total, o.frames) : o.frames;
  if (o.duration > 0 && info.frame_rate.valid()) {
    const auto by_time = static_cast<std::int64_t>(o.duration * info.frame_rate.value() + 0.5);
    total = total > 0 ? std::min(total, by_time) : by_time;
  }
  if (segment) total = segment->frames;
  Progress progress(part && part->on_frames ? "none" : o.progress, total);
  std::int64_t encoded = 0;
  std::vector<double> last_split;

  tandem::VideoRunOptions run;
  run.stop = &g_interrupted;
  run.segment = segment ? &*segment : nullptr;
  run.on_frame = [&](const tandem::VideoFrameInfo& frame) {
    encoded = frame.index + 1;
    last_split = frame.split;
    progress.update(encoded, last_split, devices);
    if (part && part->on_frames) part->on_frames(encoded);
  };
  tandem::VideoRunStats stats;
  try {
    stats = tandem::process_video(reader, pipeline, writer, run);
  } catch (...) {
    writer.abort();
    throw;
  }
  progress.update(encoded, last_split, devices, true);
  for (const auto& e : reader.errors()) std::fprintf(stderr, "tandem: skipped: %s\n", e.c_str());
  if (g_interrupted) {
    writer.abort();
    if (part && part->on_frames) return StopOnSignals::exit_code();  // tandem-mpi says it
    std::fprintf(stderr, "tandem: interrupted by %s after %lld frames; %s\n",
                 StopOnSignals::name().c_str(), static_cast<long long>(encoded),
                 o.keep_partial ? ("kept a playable partial file at " + o.output).c_str()
                                : "nothing was left at the output");
    return StopOnSignals::exit_code();
  }
  writer.finish();
  const double wall_ms = run_ms();
  if (report) {
    // The run report with the video's stage times added. The frames' own time, from the first
    // decoded to the last encoded, leaves out opening the devices and the encoder's flush.
    auto json = report_json(o, pipeline, wall_ms);
    json["video"] = {{"frames", stats.frames},
                     {"wall_ms", wall_ms},
                     {"frames_ms", stats.wall_ms},
                     {"decode_ms", stats.decode_ms},
                     {"submit_ms", stats.submit_ms},
                     {"wait_ms", stats.wait_ms},
                     {"encode_ms", stats.encode_ms},
                     {"device_format", std::string(tandem::to_string(stats.format))},
                     {"filters_on_planes", pipeline.on_planes()},
                     {"frame_bytes_to_devices", stats.frame_bytes_in},
                     {"frame_bytes_from_devices", stats.frame_bytes_out}};
    if (segment) {
      json["segment"] = {{"index", segment->index},
                         {"count", segment->count},
                         {"first_frame", segment->first_frame},
                         {"frames", segment->frames},
                         {"warm_up_frames", segment->first_frame - segment->decode_first_frame}};
    }
    finish_report(*report, json, o.output);
  }
  if (part && part->on_frames) return 0;
  char rate[64];
  std::snprintf(rate, sizeof rate, ", %.1f fps", wall_ms > 0 ? encoded / (wall_ms / 1000) : 0.0);
  print_summary(pipeline.report(),
                o.output + " (" + std::to_string(encoded) + " frames, " + writer.codec() + ")",
                wall_ms);
  std::fprintf(stderr,
               "  %lld frames%s; host time per stage (the stages overlap): decode %.1f ms, "
               "submit %.1f ms, wait for the devices %.1f ms, encode %.1f ms\n",
               static_cast<long long>(encoded), rate, stats.decode_ms, stats.submit_ms,
               stats.wait_ms, stats.encode_ms);
  std::fprintf(stderr, "  frames go to the devices as %s: %.2f MB each to them, %.2f MB back%s\n",
               std::string(tandem::to_string(stats.format)).c_str(), stats.frame_bytes_in / 1e6,
               stats.frame_bytes_out / 1e6,
               pipeline.on_planes() ? "; the filters work on its planes" : "");
  return 0;
}

// A video's frames to images: every frame to a numbered name ("f%03d.png": f001.png, f002.png,
// ..., numbered from 1 as FFmpeg's image2 does), or the first frame of the range to a plain
// name. Each image is written atomically by tandem's image writer; on an error or a signal the
// images of this run are removed again, unless --keep-partial.
int run_video_to_images(const RunOptions& o, tandem::AtomicFile* report) {
  if (!o.segment.empty()) {
    throw tandem::Error("--segment writes a part of a video, for tandem concat: give it a video "
                        "output (.mkv, .mp4, ...), not '" + o.output + "'");
  }
  const bool sequence = tandem::is_image_sequence(o.output);
  if (!sequence && o.frames > 1) {
    throw tandem::Error("'" + o.output + "' holds one image; for " + std::to_string(o.frames) +
                        " frames give a numbered name such as " +
                        fs::path(o.output).stem().string() + "%03d" +
                        fs::path(o.output).extension().string());
  }
  const fs::path first = sequence ? tandem::image_sequence_path(o.output, 1) : fs::path(o.output);
  tandem::Graph graph = video_graph(o);
  std::error_code ec;
  if (fs::exists(first, ec) && !o.overwrite) {
    throw tandem::Error("output '" + first.string() + "' already exists (use -y to overwrite it)");
  }
  { const tandem::AtomicFile writable(first); }  // an unwritable place fails before any work
  tandem::VideoReaderOptions ro = reader_options(o);
  if (!sequence) ro.max_frames = 1;
  tandem::VideoReader reader(o.input, ro);
  warn_about_depth(reader, tandem::PixelFormat::rgba8, 8);  // images are 8-bit
  tandem::DeviceSet devices = tandem::DeviceSet::open(o.devices);
  tandem::Pipeline pipeline(devices, std::move(graph), pipeline_options(o));

  const tandem::VideoInfo& info = reader.info();
  std::int64_t total = sequence ? info.frame_count : 1;
  if (sequence && o.frames > 0) total = total > 0 ? std::min(total, o.frames) : o.frames;
  Progress progress(o.progress, total);
  std::vector<fs::path> written;
  auto remove_written = [&] {
    if (o.keep_partial) return;
    for (const fs::path& p : written) fs::remove(p, ec);
  };
  tandem::Frame frame = pipeline.make_frame(info.width, info.height, tandem::PixelFormat::rgba8);
  tandem::Frame output;
  std::int64_t pts = 0;
  try {
    std::int64_t first_pts = 0;
    while (!g_interrupted && reader.read(frame, pts)) {
      // Its time from the first frame's, for filters that follow it (fade).
      const std::int64_t index = static_cast<std::int64_t>(written.size());
      if (index == 0) first_pts = pts;
      pipeline.wait(
          pipeline.submit(frame, output, tandem::frame_time(info, index, pts, first_pts)));
      written.push_back(sequence ? tandem::image_sequence_path(
                                       o.output, static_cast<std::int64_t>(written.size()) + 1)
                                 : first);
      tandem::write_image(written.back(), output);
      progress.update(static_cast<std::int64_t>(written.size()),
                      pipeline.report().split_trace.back(), devices);
    }
  } catch (...) {
    remove_written();
    throw;
  }
  if (g_interrupted) {
    remove_written();
    std::fprintf(stderr, "tandem: interrupted by %s after %zu images; %s\n",
                 StopOnSignals::name().c_str(), written.size(),
                 o.keep_partial ? "they were kept" : "none was left");
    return StopOnSignals::exit_code();
  }
  if (written.empty()) throw tandem::Error("'" + o.input + "' has no frame in the range asked for");
  if (!pipeline.report().split_trace.empty()) {
    progress.update(static_cast<std::int64_t>(written.size()), pipeline.report().split_trace.back(),
                    devices, true);
  }
  for (const auto& e : reader.errors()) std::fprintf(stderr, "tandem: skipped: %s\n", e.c_str());
  const double wall_ms = run_ms();
  if (report) finish_report(*report, report_json(o, pipeline, wall_ms), o.output);
  char at[32];
  std::snprintf(at, sizeof at, "%g", o.start);
  print_summary(pipeline.report(),
                sequence ? std::to_string(written.size()) + " images, " + written.front().string() +
                               " to " + written.back().string()
                         : o.output + " (the frame at " + at + " s)",
                wall_ms);
  return 0;
}

}  // namespace tandem::cli
