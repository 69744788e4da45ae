// tandem: runs a filter graph on images, every frame split across the machine's OpenCL devices.
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "tandem/image_io.hpp"
#include "tandem/tandem.hpp"

#ifdef TANDEM_HAVE_VIDEO
#include "tandem/video_io.hpp"
#include "tandem/video_pipeline.hpp"
#endif

namespace fs = std::filesystem;

namespace {

std::string human_bytes(std::uint64_t bytes) {
  char buf[32];
  if (bytes >= (1ull << 30)) {
    std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / double(1ull << 30));
  } else {
    std::snprintf(buf, sizeof buf, "%.0f MiB", bytes / double(1ull << 20));
  }
  return buf;
}

int list_devices() {
  for (const auto& d : tandem::enumerate_devices()) {
    std::printf("%-5s %-4s %-50s %-30s %3u CU  %9s  align %zu B\n", d.id.c_str(),
                std::string(tandem::to_string(d.type)).c_str(), d.name.c_str(),
                d.platform.c_str(), d.compute_units, human_bytes(d.global_memory).c_str(),
                d.base_address_alignment);
  }
  return 0;
}

int list_filters() {
  for (const tandem::FilterSpec* f : tandem::FilterRegistry::instance().all()) {
    std::printf("%s", f->name.c_str());
    if (f->inputs != 1 || f->outputs != 1) {
      std::printf("  (%d input%s, %d output%s)", f->inputs, f->inputs == 1 ? "" : "s",
                  f->outputs, f->outputs == 1 ? "" : "s");
    }
    std::printf("\n    %s\n", f->help.c_str());
    for (const auto& p : f->params) {
      std::printf("    %-10s %s [%s]\n", p.name.c_str(), p.help.c_str(),
                  p.describe_range().c_str());
    }
  }
  return 0;
}

struct RunOptions {
  std::string input;
  std::string output;
  std::string graph;
  std::string devices = "all";
  std::string split = "auto";
  std::string report;
  std::string cl_options;
  std::uint64_t max_pixels = tandem::kDefaultMaxImagePixels;
  bool overwrite = false;
  bool no_fuse = false;
  bool no_planes = false;
  // Video
  std::string codec;
  int crf = -1;
  std::int64_t bitrate = 0;
  std::string pix_fmt;
  std::int64_t frames = 0;
  double start = 0;
  double duration = 0;
  std::string on_error = "stop";
  std::string progress = "auto";
  bool keep_partial = false;
  bool no_copy = false;
  bool no_audio = false, no_subtitles = false, no_data = false;
  std::string audio = "copy";  // copy, none, or an encoder that re-encodes the audio
  std::vector<int> streams;
};

// Ctrl-C, SIGTERM (kill, timeout) and SIGHUP (a closed terminal) stop a run cleanly: the frames
// on the devices finish, the output is removed (or kept playable with --keep-partial), temporary
// files go, and the exit code is 128 + the signal's number.
std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};

class StopOnSignals {
 public:
  StopOnSignals() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) {
      previous_[i] = std::signal(kSignals[i], [](int sig) {
        g_signal = sig;
        g_interrupted = true;
      });
    }
  }
  ~StopOnSignals() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) std::signal(kSignals[i], previous_[i]);
  }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

  // "SIGTERM" for the signal that stopped the run.
  static std::string name() {
    switch (g_signal.load()) {
      case SIGINT:
        return "SIGINT (Ctrl-C)";
      case SIGTERM:
        return "SIGTERM";
      case SIGHUP:
        return "SIGHUP";
      default:
        return "signal " + std::to_string(g_signal.load());
    }
  }
  static int exit_code() { return 128 + g_signal.load(); }

 private:
  static constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};
  std::array<void (*)(int), 3> previous_{};
};

// When the run began: the one wall time a run states (its summary and its report) is from here
// to its output in place.
std::chrono::steady_clock::time_point g_run_start;

double run_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g_run_start)
      .count();
}

void print_summary(const tandem::RunReport& report, const std::string& what, double wall_ms) {
  std::fprintf(stderr, "tandem: wrote %s in %.1f ms\n", what.c_str(), wall_ms);
  for (const auto& d : report.devices) {
    std::fprintf(stderr,
                 "  %-5s %-40s share %5.1f%%  busy %8.2f ms (upload %.2f, kernels %.2f, "
                 "download %.2f)%s\n",
                 d.id.c_str(), d.name.c_str(), 100 * d.share, d.busy_ms, d.upload_ms, d.kernel_ms,
                 d.download_ms, d.failed ? "  (failed)" : "");
  }
}

// The run report: what ran (input, output, graph, the devices asked for) and the pipeline's
// report, whose "wall_ms" becomes the run's (`wall_ms`, as the summary states it) and its own
// time with frames on the devices "devices_wall_ms".
nlohmann::ordered_json report_json(const RunOptions& o, const tandem::Pipeline& pipeline,
                                   double wall_ms) {
  const auto devices = nlohmann::ordered_json::parse(pipeline.report().to_json());
  nlohmann::ordered_json j = {
      {"input", o.input},         {"output", o.output},          {"graph", o.graph},
      {"device_spec", o.devices}, {"passes", pipeline.passes()}, {"wall_ms", wall_ms}};
  for (const auto& [key, value] : devices.items()) {
    j[key == "wall_ms" ? "devices_wall_ms" : key] = value;
  }
  return j;
}

// The report goes into place once the output is (the report's file was made at the start, so an
// unwritable place fails before any work); should writing it fail (a full disk), the output is
// removed: a run leaves both or neither.
void finish_report(tandem::AtomicFile& report, const nlohmann::ordered_json& json,
                   const std::string& output) {
  try {
    report.write(json.dump(2) + "\n");
    report.commit();
  } catch (...) {
    std::error_code ec;
    if (output != "-") fs::remove(output, ec);
    throw;
  }
}

// The pipeline settings the command line chose (and its extra OpenCL build options).
tandem::PipelineOptions pipeline_options(const RunOptions& o) {
  if (!o.cl_options.empty()) tandem::ProgramCache::global().set_extra_options(o.cl_options);
  tandem::PipelineOptions options;
  options.split = o.split;
  options.fuse = !o.no_fuse;
  options.planes = !o.no_planes;
  return options;
}

#ifdef TANDEM_HAVE_VIDEO
int run_video(const RunOptions& o, tandem::AtomicFile* report);
int run_video_to_images(const RunOptions& o, tandem::AtomicFile* report);
#endif

int run(const RunOptions& o) {
  g_run_start = std::chrono::steady_clock::now();
  if (o.input.empty() || o.output.empty() || o.graph.empty()) {
    throw tandem::Error("-i INPUT, -o OUTPUT and -f GRAPH are all needed (see tandem --help)");
  }
  // Created now, so that a report that cannot be written fails the run before any work (and
  // removed again by its destructor when the run fails).
  std::optional<tandem::AtomicFile> report;
  if (!o.report.empty()) report.emplace(o.report);
#ifdef TANDEM_HAVE_VIDEO
  const bool video_in = tandem::is_video_path(o.input) && !tandem::is_image_path(o.input);
  if (video_in && tandem::is_image_path(o.output)) {
    return run_video_to_images(o, report ? &*report : nullptr);
  }
  if (tandem::is_video_path(o.output) || video_in) return run_video(o, report ? &*report : nullptr);
#endif
  if (!tandem::is_image_path(o.output)) {
    throw tandem::Error("cannot write '" + o.output +
                        "': unknown image format (png, jpg, tif, bmp, hdr, exr)");
  }
  std::error_code ec;
  if (fs::exists(o.output, ec) && !o.overwrite) {
    throw tandem::Error("output '" + o.output + "' already exists (use -y to overwrite it)");
  }
  // Everything that can be checked before the work starts is checked first.
  tandem::Graph graph = tandem::Graph::parse(o.graph);
  tandem::Frame input = tandem::read_image(o.input, tandem::kMinRowAlignment, o.max_pixels);
  graph.validate(input.format());

  tandem::DeviceSet devices = tandem::DeviceSet::open(o.devices);
  tandem::Pipeline pipeline(devices, std::move(graph), pipeline_options(o));

  tandem::Frame frame = pipeline.make_frame(input.width(), input.height(), input.format());
  for (int y = 0; y < input.height(); ++y) {
    std::copy_n(input.row(y), input.width() * tandem::bytes_per_pixel(input.format()), frame.row(y));
  }
  tandem::Frame output;
  pipeline.process(frame, output);
  if (g_interrupted) {
    std::fprintf(stderr, "tandem: interrupted by %s; nothing was written\n",
                 StopOnSignals::name().c_str());
    return StopOnSignals::exit_code();
  }
  tandem::write_image(o.output, output);
  const double wall_ms = run_ms();
  if (report) finish_report(*report, report_json(o, pipeline, wall_ms), o.output);

  print_summary(pipeline.report(),
                o.output + " (" + std::to_string(output.width()) + "x" +
                    std::to_string(output.height()) + ")",
                wall_ms);
  return 0;
}

#ifdef TANDEM_HAVE_VIDEO
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
      std::snprintf(part, sizeof part, "%s%s %.0f%%", d ? ", " : "",
                    devices[d].info().id.c_str(), 100 * fractions[d]);
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
  const bool deep_on_devices = on_devices == tandem::PixelFormat::rgba32f ||
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

int run_video(const RunOptions& o, tandem::AtomicFile* report) {
  std::error_code ec;
  if (o.output != "-" && fs::exists(o.output, ec) && !o.overwrite) {
    throw tandem::Error("output '" + o.output + "' already exists (use -y to overwrite it)");
  }
  tandem::Graph graph = video_graph(o);
  tandem::VideoReaderOptions ro = reader_options(o);
  ro.keep_packets = true;
  tandem::VideoReader reader(o.input, ro);
  const tandem::VideoInfo& info = reader.info();

  tandem::VideoWriterOptions wo;
  adapt_to_hdr(graph, reader, wo);
  tandem::DeviceSet devices = tandem::DeviceSet::open(o.devices);
  tandem::Pipeline pipeline(devices, std::move(graph), pipeline_options(o));

  wo.codec = o.codec;
  wo.crf = o.crf;
  wo.bitrate = o.bitrate;
  wo.pix_fmt = o.pix_fmt;
  wo.keep_partial = o.keep_partial;
  wo.copy_streams = !o.no_copy;
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
  Progress progress(o.progress, total);
  std::int64_t encoded = 0;
  std::vector<double> last_split;

  tandem::VideoRunOptions run;
  run.stop = &g_interrupted;
  run.on_frame = [&](const tandem::VideoFrameInfo& frame) {
    encoded = frame.index + 1;
    last_split = frame.split;
    progress.update(encoded, last_split, devices);
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
    finish_report(*report, json, o.output);
  }
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
  const bool sequence = tandem::is_image_sequence(o.output);
  if (!sequence && o.frames > 1) {
    throw tandem::Error("'" + o.output + "' holds one image; for " + std::to_string(o.frames) +
                        " frames give a numbered name such as " +
                        fs::path(o.output).stem().string() + "%03d" +
                        fs::path(o.output).extension().string());
  }
  const fs::path first = sequence ? tandem::image_sequence_path(o.output, 1) : fs::path(o.output);
  std::error_code ec;
  if (fs::exists(first, ec) && !o.overwrite) {
    throw tandem::Error("output '" + first.string() + "' already exists (use -y to overwrite it)");
  }
  { const tandem::AtomicFile writable(first); }  // an unwritable place fails before any work
  tandem::Graph graph = video_graph(o);
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
    while (!g_interrupted && reader.read(frame, pts)) {
      pipeline.process(frame, output);
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
#endif

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "tandem: runs image filters on OpenCL, every frame split across all selected devices "
      "(CPU and GPU together) in proportion to their speed.\n\n"
      "  tandem -i in.png -o out.png -f \"saturation=1.4\"\n"
      "  tandem -i in.hdr -o out.png -f \"tonemap=op=reinhard:key=0.18\" --devices gpu\n"
      "  tandem devices          list OpenCL devices and their ids\n"
      "  tandem filters          list filters and their options\n\n"
      "Graphs use FFmpeg's filtergraph syntax: filters separated by ',', options key=value "
      "separated by ':', the first option may be given by value alone.",
      "tandem"};
  app.set_version_flag("--version", tandem::version());
  RunOptions o;
  app.add_option("-i,--input", o.input, "Input image (PNG, JPEG, TIFF, BMP, Radiance .hdr, OpenEXR)");
  app.add_option("-o,--output", o.output, "Output image; its extension chooses the format");
  app.add_option("-f,--filter", o.graph, "Filter graph, e.g. \"gaussian=sigma=2,saturation=1.3\"");
  app.add_flag("-y,--overwrite", o.overwrite, "Overwrite the output if it exists");
  app.add_option("--devices", o.devices,
                 "Devices: all, cpu, gpu, ids such as 0.1,1.0, or name substrings")
      ->capture_default_str();
  app.add_option("--split", o.split,
                 "How devices share the work: auto (bands of each image; whole frames per "
                 "device for video), frames, bands (= adaptive), static:F1,F2,..., single, "
                 "chunks:N")
      ->capture_default_str();
  app.add_option("--report", o.report, "Write a JSON run report (devices, shares, times)");
  app.add_flag("--no-fuse", o.no_fuse, "Run each point-wise filter as its own pass");
  app.add_flag("--no-planes", o.no_planes,
               "Convert video to RGBA for every graph, also where its filters could work on the "
               "Y'CbCr planes as they are (gaussian, saturation under BT.709)");
  app.add_option("--cl-options", o.cl_options, "Extra OpenCL build options for every program");
  app.add_option("--max-pixels", o.max_pixels,
                 "Refuse input images of more pixels than this, before decoding them (0: no limit)")
      ->capture_default_str();
#ifdef TANDEM_HAVE_VIDEO
  auto* video = "Video";
  app.add_option("--codec", o.codec, "Video encoder (libx264, ffv1, mpeg4, ...); default by container")->group(video);
  app.add_option("--crf", o.crf, "Constant-quality factor (libx264: 0..51)")->group(video);
  app.add_option("--bitrate", o.bitrate, "Target bits per second")->group(video);
  app.add_option("--pix-fmt", o.pix_fmt, "Encoder pixel format (yuv420p, yuv444p, ...)")->group(video);
  app.add_option("--frames", o.frames, "Process at most N frames")->group(video);
  app.add_option("--start", o.start, "Start at T seconds")->group(video);
  app.add_option("--duration", o.duration, "Process T seconds")->group(video);
  app.add_option("--on-error", o.on_error, "A frame that cannot be decoded: stop or skip")
      ->capture_default_str()->group(video);
  app.add_option("--progress", o.progress,
                 "auto (a bar on a terminal), json (one line per update on stderr) or none")
      ->capture_default_str()->group(video);
  auto* no_copy = app.add_flag("--no-copy", o.no_copy,
                               "Write the video alone: leave audio, subtitles and data out")
                      ->group(video);
  auto* no_audio =
      app.add_flag("--an", o.no_audio, "Leave the audio streams out (FFmpeg's -an)")->group(video);
  app.add_option("--audio", o.audio,
                 "The audio streams: copy, none, or an encoder that re-encodes them (aac, libopus, "
                 "flac, ...; FFmpeg's -c:a)")
      ->capture_default_str()
      ->excludes(no_audio)
      ->excludes(no_copy)
      ->group(video);
  app.add_flag("--sn", o.no_subtitles, "Leave the subtitle streams out (FFmpeg's -sn)")
      ->group(video);
  app.add_flag("--dn", o.no_data, "Leave the data streams out (FFmpeg's -dn)")->group(video);
  app.add_option("--streams", o.streams,
                 "Copy only these streams besides the video, by their index in the input "
                 "(FFmpeg's -map 0:N), e.g. --streams 2,3")
      ->delimiter(',')
      ->excludes(no_copy)
      ->group(video);
  app.add_flag("--keep-partial", o.keep_partial,
               "On Ctrl-C or an error, keep what was written as a playable file")->group(video);
#endif
  auto* devices_cmd = app.add_subcommand("devices", "List OpenCL devices: id, type, name, platform, compute units, memory, alignment");
  auto* filters_cmd = app.add_subcommand("filters", "List filters with their options, ranges and defaults");
  app.require_subcommand(0, 1);

  try {
    // FFmpeg's single-dash long options (-hwaccel, -an, -crf) would be read as clusters of
    // short flags, -hwaccel as -h: the whole help and exit 0.
    for (int k = 1; k < argc; ++k) {
      const std::string arg = argv[k];
      if (arg == "--") break;
      // FFmpeg's audio codec option has another name here, not just another dash.
      if (arg == "-c:a" || arg == "-acodec") {
        throw CLI::ParseError("unknown option '" + arg + "': tandem's is --audio CODEC",
                              CLI::ExitCodes::ExtrasError);
      }
      if (arg.size() <= 2 || arg[0] != '-' || arg[1] == '-') continue;
      if (app.get_option_no_throw("-" + arg)) {
        throw CLI::ParseError("unknown option '" + arg + "': tandem's long options take two "
                              "dashes, as in -" + arg,
                              CLI::ExitCodes::ExtrasError);
      }
      if (arg[1] == 'h' || arg[1] == 'y') throw CLI::ExtrasError({arg});
    }
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    // One line, as for every other error; 2, the shell's code for a usage error.
    std::fprintf(stderr, "tandem: error: %s (see tandem --help)\n", e.what());
    return 2;
  }
  try {
    if (*devices_cmd) return list_devices();
    if (*filters_cmd) return list_filters();
    const StopOnSignals stop;
    return run(o);
  } catch (const tandem::Error& e) {
    std::fprintf(stderr, "tandem: error: %s\n", e.what());
    if (!e.build_log().empty()) std::fprintf(stderr, "build log:\n%s\n", e.build_log().c_str());
    return 1;
  } catch (const cl::Error& e) {
    std::fprintf(stderr, "tandem: error: %s failed with %s\n", e.what(),
                 tandem::cl_status_name(e.err()).c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tandem: error: %s\n", e.what());
    return 1;
  }
}
