// A run of the tandem command line (run.hpp): what every run shares, and an image's run.
#include "run.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <optional>

#ifdef TANDEM_HAVE_VIDEO
#include "tandem/video_io.hpp"
#endif

namespace fs = std::filesystem;

namespace tandem::cli {

std::atomic<bool> g_interrupted{false};

namespace {

std::atomic<int> g_signal{0};
constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};
std::array<void (*)(int), 3> g_previous{};

std::chrono::steady_clock::time_point g_run_start;

}  // namespace

StopOnSignals::StopOnSignals() {
  for (std::size_t i = 0; i < kSignals.size(); ++i) {
    g_previous[i] = std::signal(kSignals[i], [](int sig) {
      g_signal = sig;
      g_interrupted = true;
    });
  }
}

StopOnSignals::~StopOnSignals() {
  for (std::size_t i = 0; i < kSignals.size(); ++i) std::signal(kSignals[i], g_previous[i]);
}

std::string StopOnSignals::name() {
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

int StopOnSignals::exit_code() {
  return 128 + g_signal.load();
}

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

tandem::PipelineOptions pipeline_options(const RunOptions& o) {
  if (!o.cl_options.empty()) tandem::ProgramCache::global().set_extra_options(o.cl_options);
  tandem::PipelineOptions options;
  options.split = o.split;
  options.fuse = !o.no_fuse;
  options.planes = !o.no_planes;
  return options;
}

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
  // Everything that can be checked before the work starts is checked first, the graph before
  // the output: a mistyped filter is the first thing to fix.
  tandem::Graph graph = tandem::Graph::parse(o.graph);
  std::error_code ec;
  if (fs::exists(o.output, ec) && !o.overwrite) {
    throw tandem::Error("output '" + o.output + "' already exists (use -y to overwrite it)");
  }
  tandem::Frame input = tandem::read_image(o.input, tandem::kMinRowAlignment, o.max_pixels);
  graph.validate(input.format());
  graph.output_size({input.width(), input.height()});

  tandem::DeviceSet devices = tandem::DeviceSet::open(o.devices);
  tandem::Pipeline pipeline(devices, std::move(graph), pipeline_options(o));

  tandem::Frame frame = pipeline.make_frame(input.width(), input.height(), input.format());
  for (int y = 0; y < input.height(); ++y) {
    std::copy_n(input.row(y), input.width() * tandem::bytes_per_pixel(input.format()),
                frame.row(y));
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

}  // namespace tandem::cli
