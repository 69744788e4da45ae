// tandem-bench: times filters and graphs on each OpenCL device alone and on several at once.
// Method (the seed guide's "Getting Credible Performance Numbers"): program builds, buffer
// creation and the adaptive split's first frames happen in warm-up frames outside the timed
// region; a timed frame ends when its output is in host memory (Pipeline::process waits for
// it); every figure is the median of many frames with its spread; every ratio compares figures
// measured in the same run. The output starts with the date, machine, devices and command line,
// so that it can be committed as it is.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "filter_cases.hpp"
#include "json_layout.hpp"
#include "quirks.hpp"

#include "tandem/tandem.hpp"

#ifdef TANDEM_BENCH_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/core/ocl.hpp>
#include <opencv2/core/utility.hpp>
#endif

extern char** environ;

namespace {

using tandem::DeviceSet;
using tandem::Frame;
using tandem::Graph;
using tandem::Pipeline;
using tandem::PipelineOptions;
using tandem::PixelFormat;
using tandem::bench::filter_cases;
using tandem::bench::FilterCase;
#ifdef TANDEM_BENCH_OPENCV
using tandem::bench::OpenCvRun;
#endif

// ---- Command line ----------------------------------------------------------------------------

struct Options {
  std::string mode;
  std::string size = "1920x1080";
  int width = 1920;  // from size, once parsed
  int height = 1080;
  int frames = 0;
  int warmup = 0;
  int ring = 4;
  std::string devices = "all";
  std::string graph = "gaussian=sigma=2,saturation=1.3,tonemap";
  std::string split = "auto";
  std::string format_name = "rgba8";
  PixelFormat format = PixelFormat::rgba8;
  std::string schedule_name = "automatic";
  tandem::Schedule schedule = tandem::Schedule::automatic;
  std::string json;
  std::string dump_binaries;  // filters: directory for the programs' binaries
  std::string only;           // filters: comma-separated substrings of the case labels run
  int frames_on_devices = tandem::PipelineOptions{}.frames_on_devices;  // stream
  bool trace = false;  // coexec: every frame's split and time
};

// WIDTHxHEIGHT, each 1..65536.
bool parse_size(const std::string& text, int& width, int& height) {
  const auto x = text.find('x');
  if (x == std::string::npos) return false;
  auto number = [](std::string_view s, int& v) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && end == s.data() + s.size() && v >= 1 && v <= 65536;
  };
  const std::string_view s = text;
  return number(s.substr(0, x), width) && number(s.substr(x + 1), height);
}

// One subcommand per mode, with that mode's defaults (shown by --help).
CLI::App* add_mode(CLI::App& app, Options& o, const std::string& mode, const std::string& help) {
  o.mode = mode;
  o.frames = mode == "filters" ? 20 : mode == "coexec" ? 60 : 100;
  // The adaptive split drops each device's first band and waits for three agreeing ones: give it
  // enough untimed frames in coexec.
  o.warmup = mode == "filters" ? 3 : 10;

  CLI::App* sub = app.add_subcommand(mode, help);
  if (mode != "filters") {
    sub->add_option("--graph", o.graph, "The graph timed")->capture_default_str();
  }
  sub->add_option("--size", o.size, "Frame size")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            int w = 0, h = 0;
            return parse_size(s, w, h) ? "" : "takes WIDTHxHEIGHT (1..65536 each), not '" + s + "'";
          },
          "WIDTHxHEIGHT"));
  if (mode == "coexec") {
    sub->add_flag("--trace", o.trace,
                  "Print every frame's split and, for the timed frames, its time (all devices "
                  "together)");
  }
  if (mode == "coexec" || mode == "stream") {
    sub->add_option("--format", o.format_name,
                    "Pixel format of the frames (yuv420p, yuv422p10, yuv444p12, ...: video's "
                    "planes, converted on the devices; BT.709 limited range)")
        ->capture_default_str()
        ->check([](const std::string& name) {
          try {
            tandem::parse_pixel_format(name);
            return std::string();
          } catch (const tandem::Error& e) {
            return std::string(e.what());
          }
        });
  }
  sub->add_option("--frames", o.frames, "Timed frames")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  sub->add_option("--warmup", o.warmup, "Untimed frames first (at least --ring)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  sub->add_option("--ring", o.ring, "Distinct synthetic frames cycled through")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  sub->add_option("--devices", o.devices,
                  "Devices: all, cpu, gpu, ids such as 0.1,1.0, or name substrings")
      ->capture_default_str();
  if (mode != "filters") {
    sub->add_option("--split", o.split,
                    "auto, frames, bands (= adaptive), static:F1,F2,..., single or chunks:N")
        ->capture_default_str();
  }
  sub->add_option("--schedule", o.schedule_name,
                  "How stencils run: automatic (tiles on GPUs, rows elsewhere), tiles or rows")
      ->capture_default_str()
      ->check(CLI::IsMember({"automatic", "tiles", "rows"}));
  sub->add_option("--json", o.json, "Write the numbers as JSON to FILE")->option_text("FILE");
  if (mode == "stream") {
    sub->add_option("--frames-on-devices", o.frames_on_devices,
                    "Frames on the devices at once when pipelined (timed beside 2)")
        ->capture_default_str()
        ->check(CLI::Range(1, 8));
  }
  if (mode == "filters") {
    sub->add_option("--only", o.only,
                    "Only the cases whose label contains one of these comma-separated words "
                    "(e.g. saturation,box)")
        ->option_text("WORDS");
    sub->add_option("--dump-binaries", o.dump_binaries,
                    "Write each program as the driver built it (CL_PROGRAM_BINARIES: PTX text on "
                    "NVIDIA) to DIR, named by case and device, with DIR/index.tsv; programs are "
                    "built afresh in a temporary cache. Count its loads with tools/ptx-loads.sh DIR")
        ->option_text("DIR");
  }
  return sub;
}

// What the options leave to be worked out once they are parsed.
void finish_options(Options& o) {
  parse_size(o.size, o.width, o.height);  // checked by --size's validator
  o.format = tandem::parse_pixel_format(o.format_name);  // checked by --format's validator
  o.schedule = tandem::parse_schedule(o.schedule_name);  // checked by --schedule's validator
  // Every frame of the ring goes through the warm-up once, so that wrapping a frame in OpenCL
  // buffers never happens in the timed region.
  o.warmup = std::max(o.warmup, o.ring);
}

// ---- Statistics and timing -------------------------------------------------------------------

struct Summary {
  double median = NAN, q1 = NAN, q3 = NAN, min = NAN, max = NAN;
  double mean = NAN;  // of consecutive intervals: the rate over the whole run
  std::size_t n = 0;
};

// Linear interpolation between the order statistics (numpy's default).
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const std::size_t i = static_cast<std::size_t>(pos);
  if (i + 1 >= sorted.size()) return sorted.back();
  return sorted[i] + (pos - static_cast<double>(i)) * (sorted[i + 1] - sorted[i]);
}

Summary summarize(std::vector<double> ms) {
  Summary s;
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  s.n = ms.size();
  s.mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(s.n);
  s.median = quantile(ms, 0.5);
  s.q1 = quantile(ms, 0.25);
  s.q3 = quantile(ms, 0.75);
  s.min = ms.front();
  s.max = ms.back();
  return s;
}

std::string describe(const Summary& s) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%9.2f ms  IQR %8.2f..%-8.2f  min..max %8.2f..%-8.2f", s.median,
                s.q1, s.q3, s.min, s.max);
  return buf;
}

// Runs frame(i) for `warmup` untimed frames, then `timed` frames each timed on its own. The
// warm-up covers every frame of the ring at least once (see finish_options), so that buffer
// creation for a frame never falls into the timed region.
double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

std::vector<double> time_frames(int warmup, int timed, const std::function<void(int)>& frame,
                                const std::function<void()>& after_warmup = {}) {
  for (int i = 0; i < warmup; ++i) frame(i);
  if (after_warmup) after_warmup();
  std::vector<double> ms;
  ms.reserve(static_cast<std::size_t>(timed));
  for (int i = 0; i < timed; ++i) {
    const auto start = std::chrono::steady_clock::now();
    frame(warmup + i);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  return ms;
}

// ---- Synthetic frames ------------------------------------------------------------------------

std::uint32_t mix(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// Gradients, a soft ripple, hard-edged blocks and noise: content on which no filter takes a
// shortcut (the bilateral sees edges and flat parts, tonemap a wide range in float frames).
// Frame k is the same picture moved and re-noised. Values in [0, 1] for 8-bit frames; float
// frames scale them by 2^-3..2^5 across the width, a radiance map with a 256:1 range.
std::vector<Frame> synthetic_frames(int width, int height, PixelFormat format, int count,
                                    std::size_t row_alignment,
                                    const tandem::HostAllocator& allocate) {
  std::vector<Frame> frames;
  for (int k = 0; k < count; ++k) {
    Frame f(width, height, format, row_alignment, allocate);
    tbb::parallel_for(tbb::blocked_range<int>(0, height), [&](const auto& rows) {
      for (int y = rows.begin(); y != rows.end(); ++y) {
        for (int x = 0; x < width; ++x) {
          const float u = static_cast<float>(x) / static_cast<float>(width);
          const float v = static_cast<float>(y) / static_cast<float>(height);
          const bool block = (((x + 13 * k) / 96) + ((y + 7 * k) / 64)) % 3 == 0;
          const float ripple = 0.5f + 0.5f * std::sin(0.05f * static_cast<float>(x + y + 17 * k));
          float c[4] = {u, v, ripple, 1.0f};
          for (int ch = 0; ch < 3; ++ch) {
            const std::uint32_t h =
                mix(static_cast<std::uint32_t>((y * 65599 + x) * 4 + ch + k * 0x9e3779b9U));
            const float noise = (static_cast<float>(h & 0xffff) / 65535.0f - 0.5f) * 0.12f;
            c[ch] = std::clamp((block ? 1.0f - c[ch] : c[ch]) * 0.9f + 0.05f + noise, 0.0f, 1.0f);
          }
          if (is_planar(format)) {
            // BT.709, limited range; chroma from the first pixel it covers.
            const float l = 0.2126f * c[0] + 0.7152f * c[1] + 0.0722f * c[2];
            const float step = static_cast<float>(1 << (tandem::sample_bits(format) - 8));
            auto put = [&](int plane, int px, int py, float code) {
              const auto v = static_cast<std::uint16_t>(std::lround(code * step));
              f.set_sample(plane, px, py, v);
            };
            put(0, x, y, 16 + 219 * l);
            const int sx = tandem::chroma_shift_x(format), sy = tandem::chroma_shift_y(format);
            if (x % (1 << sx) == 0 && y % (1 << sy) == 0) {
              put(1, x >> sx, y >> sy, 128 + 224 * (c[2] - l) / 1.8556f);
              put(2, x >> sx, y >> sy, 128 + 224 * (c[0] - l) / 1.5748f);
            }
          } else if (format == PixelFormat::rgba8) {
            std::uint8_t* p = f.row(y) + 4 * static_cast<std::size_t>(x);
            for (int ch = 0; ch < 4; ++ch)
              p[ch] = static_cast<std::uint8_t>(std::lround(c[ch] * 255));
          } else {
            float* p = f.row_as<float>(y) + 4 * static_cast<std::size_t>(x);
            const float scale = std::exp2(8.0f * u - 3.0f);
            for (int ch = 0; ch < 3; ++ch) p[ch] = c[ch] * scale;
            p[3] = 1.0f;
          }
        }
      }
    });
    frames.push_back(std::move(f));
  }
  return frames;
}

// ---- The header: when, where, what -----------------------------------------------------------

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_=.,/:+@%") == std::string::npos) {
    return s;
  }
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown (no model name in /proc/cpuinfo)";
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  if (!(in >> a >> b >> c)) return "unknown";
  return a + " " + b + " " + c;
}

std::string now_string() {
  const std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S %z", std::localtime(&t));
  return buf;
}

std::string device_label(const tandem::DeviceInfo& d) {
  std::string name = d.name.size() > 36 ? d.name.substr(0, 33) + "..." : d.name;
  return d.id + " " + std::string(tandem::to_string(d.type)) + " " + name + " (" +
         std::to_string(d.compute_units) + " CU)";
}

struct Machine {
  std::string date, command, cpu;
  long online_cpus = 0;
  int usable_cpus = 0;
  std::vector<std::string> environment;
};

Machine describe_machine(int argc, char** argv) {
  Machine m;
  m.date = now_string();
  for (int i = 0; i < argc; ++i) m.command += (i ? " " : "") + shell_quote(argv[i]);
  m.cpu = cpu_model();
  m.online_cpus = sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t set;
  CPU_ZERO(&set);
  m.usable_cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  // The variables that change what the devices are or how they run.
  for (char** e = environ; e && *e; ++e) {
    const std::string var = *e;
    for (const char* prefix : {"POCL_", "TANDEM_", "OPENCV_", "CUDA_VISIBLE", "OCL_ICD", "TBB_"}) {
      if (var.rfind(prefix, 0) == 0) m.environment.push_back(var);
    }
  }
  std::sort(m.environment.begin(), m.environment.end());
  return m;
}

void print_header(const Machine& m, const std::vector<tandem::DeviceInfo>& all,
                  const std::vector<std::size_t>& selected) {
  std::printf("# tandem-bench\n\n");
  std::printf("date:     %s\n", m.date.c_str());
  std::printf("command:  %s\n", m.command.c_str());
  std::printf("tandem:   %s\n", tandem::version());
  std::printf("cpu:      %s, %ld online, %d usable by this process (nproc)\n", m.cpu.c_str(),
              m.online_cpus, m.usable_cpus);
  std::printf("load:     %s (1, 5, 15 min; other work on the machine makes timings noisy)\n",
              load_average().c_str());
  for (const auto& e : m.environment) std::printf("env:      %s\n", e.c_str());
  std::printf("OpenCL devices (* selected):\n");
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& d = all[i];
    const bool sel = std::find(selected.begin(), selected.end(), i) != selected.end();
    std::printf("  %s %-5s %-4s %-40s %s | %s | %u CU\n", sel ? "*" : " ", d.id.c_str(),
                std::string(tandem::to_string(d.type)).c_str(), d.name.c_str(), d.platform.c_str(),
                d.driver_version.c_str(), d.compute_units);
  }
#ifdef TANDEM_BENCH_OPENCV
  // Plain cv::Mat throughout; the T-API is switched off as well so that nothing goes to OpenCL.
  cv::ocl::setUseOpenCL(false);
  std::string framework = "unknown";
  {
    std::istringstream info(cv::getBuildInformation());
    for (std::string line; std::getline(info, line);) {
      if (const auto at = line.find("Parallel framework:"); at != std::string::npos) {
        framework = line.substr(line.find_first_not_of(' ', at + 19));
      }
    }
  }
  std::printf(
      "OpenCV:   %s, cv::getNumThreads() = %d (the default: all cores), parallel framework "
      "%s, CPU only (cv::Mat; T-API off)\n",
      CV_VERSION, cv::getNumThreads(), framework.c_str());
#else
  std::printf("OpenCV:   not compiled in (configure with TANDEM_WITH_OPENCV=ON to compare)\n");
#endif
  std::printf("\n");
}

// ---- JSON ------------------------------------------------------------------------------------

using namespace tandem::detail::json;  // Json, six_digits, lay_out: the run report's layout

Json to_json(const Summary& s) {
  return {{"median_ms", six_digits(s.median)},
          {"q1_ms", six_digits(s.q1)},
          {"q3_ms", six_digits(s.q3)},
          {"min_ms", six_digits(s.min)},
          {"max_ms", six_digits(s.max)},
          {"mean_ms", six_digits(s.mean)},
          {"frames", s.n}};
}

// The members every mode's document starts with: when, where, what.
Json json_header(const std::string& mode, const Machine& m, const Options& o) {
  Json j;
  j["mode"] = mode;
  j["date"] = m.date;
  j["command"] = m.command;
  j["tandem"] = tandem::version();
  j["cpu"] = m.cpu;
  j["nproc"] = m.usable_cpus;
  j["environment"] = m.environment;
  j["size"] = Json::array({o.width, o.height});
  j["warmup_frames"] = o.warmup;
  j["timed_frames"] = o.frames;
  return j;
}


void write_json(const std::string& path, const Json& document) {
  std::string text;
  lay_out(document, 0, text);
  text += "\n";
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << text;
    if (!out.flush()) throw tandem::Error("cannot write '" + path + "'");
  }
  std::filesystem::rename(tmp, path);
}

// ---- Running tandem --------------------------------------------------------------------------

// The devices selected by the spec: each alone (for split "single"), and all of them together.
struct Devices {
  std::vector<tandem::DeviceInfo> all;
  std::vector<std::size_t> selected;
  std::vector<DeviceSet> alone;  // not resized after the pipelines take references
};

Devices open_devices(const std::string& spec) {
  Devices d;
  d.all = tandem::enumerate_devices();
  d.selected = tandem::select_devices(spec, d.all);
  for (std::size_t i : d.selected) d.alone.push_back(DeviceSet::open(d.all[i].id));
  return d;
}

// Filters a graph string names that are not registered in this build (the parser would stop at
// the first): every word directly before '=', ',', ';', '[' or the end, outside brackets and
// option lists, is taken as a filter name.
std::vector<std::string> missing_filters(const std::string& graph) {
  std::vector<std::string> missing;
  std::size_t i = 0;
  while (i < graph.size()) {
    while (i < graph.size() && (graph[i] == '[' || graph[i] == ' ')) {
      if (graph[i] == '[') i = std::min(graph.find(']', i), graph.size() - 1);
      ++i;
    }
    const std::size_t start = i;
    while (i < graph.size() &&
           (std::isalnum(static_cast<unsigned char>(graph[i])) || graph[i] == '_'))
      ++i;
    const std::string name = graph.substr(start, i - start);
    if (!name.empty() && !tandem::FilterRegistry::instance().find(name) &&
        std::find(missing.begin(), missing.end(), name) == missing.end()) {
      missing.push_back(name);
    }
    while (i < graph.size() && graph[i] != ',' && graph[i] != ';') ++i;  // its options, outputs
    if (i < graph.size()) ++i;
  }
  return missing;
}

std::string registered_filters() {
  std::string names;
  for (const auto* f : tandem::FilterRegistry::instance().all()) {
    names += (names.empty() ? "" : ", ") + f->name;
  }
  return names;
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

// Times `graph` on `devices`: warm-up frames, then `frames` timed ones, inputs cycled from the
// ring. Returns the per-frame times; the pipeline stays for its report.
struct Timed {
  std::vector<double> ms;
  // Per timed frame: the devices' kernel time (the run report's kernel_ms, from profiling
  // events: kernels and copies between device buffers, no host transfers), summed over devices.
  std::vector<double> kernel_ms;
  std::unique_ptr<Pipeline> pipeline;
  tandem::RunReport warmed;  // the report when the warm-up ended
};

double kernel_ms_so_far(const tandem::RunReport& report) {
  double ms = 0;
  for (const auto& d : report.devices) ms += d.kernel_ms;
  return ms;
}

Timed time_graph(DeviceSet& devices, const Graph& graph, const PipelineOptions& options,
                 const std::vector<Frame>& ring, int warmup, int frames) {
  Timed t;
  t.pipeline = std::make_unique<Pipeline>(devices, graph, options);
  const Frame& first = ring.front();
  Frame output = t.pipeline->make_frame(first.width(), first.height(),
                                        t.pipeline->output_format(first.format()));
  const int ring_size = static_cast<int>(ring.size());
  double kernel_before = 0;
  t.ms = time_frames(
      warmup, frames,
      [&](int i) {
        t.pipeline->process(ring[static_cast<std::size_t>(i % ring_size)], output);
        if (i < warmup) return;
        // process() returned, so the frame's profiling events are in the report.
        const double now = kernel_ms_so_far(t.pipeline->report());
        t.kernel_ms.push_back(now - kernel_before);
        kernel_before = now;
      },
      [&] {
        t.warmed = t.pipeline->report();
        kernel_before = kernel_ms_so_far(t.warmed);
      });
  return t;
}

// ---- The device's limit: copy bandwidth ------------------------------------------------------

// A copy in device memory bounds what a filter that reads its frame once and writes it once can
// reach. One 16-byte element per work-item, as integers and as floats (the two ways the filters
// load pixels), next to the driver's own clEnqueueCopyBuffer; where kernels may store without
// reading the line first (TANDEM_STREAM_STORE16, PoCL's CPU devices), a copy of 64-byte lines
// so stored too, as crop's output is.
constexpr const char* kCopySource = R"CL(
__kernel void copy_uint4(__global const uint4* restrict src, __global uint4* restrict dst,
                         uint n) {
  const uint i = (uint)get_global_id(0);
  if (i < n) dst[i] = src[i];
}
__kernel void copy_float4(__global const float4* restrict src, __global float4* restrict dst,
                          uint n) {
  const uint i = (uint)get_global_id(0);
  if (i < n) dst[i] = src[i];
}
#ifdef STREAM_STORES
__kernel void copy_uint16_streamed(__global const uint16* restrict src,
                                   __global uint16* restrict dst, uint n) {
  const uint i = (uint)get_global_id(0);
  if (i < n) __builtin_nontemporal_store(src[i], dst + i);
}
#endif
)CL";

struct CopyMethod {
  std::string name;  // uint4, float4, copy_buffer, uint16 streamed
  Summary ms;        // profiling-event time of one copy
  double gbps = NAN;  // (bytes read + bytes written) / median time
};

// One device's copy bandwidth on buffers of `bytes`: the best of the methods is its limit.
struct CopyRow {
  std::string device;  // label
  std::string frame;   // the pixel format of the frame whose size this is
  std::size_t bytes = 0;
  std::vector<CopyMethod> methods;
  double gbps = NAN;
};

double event_ms(const cl::Event& e) {
  return static_cast<double>(e.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                             e.getProfilingInfo<CL_PROFILING_COMMAND_START>()) *
         1e-6;
}

// GB/s of moving `bytes` in `ms`; NaN (null in JSON) when no time was measured.
double gb_per_s(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : NAN; }

cl::Program build_copy_program(tandem::Device& device) {
  cl::Program program(device.context(), std::string(kCopySource));
  try {
    program.build({device.cl_device()},
                  tandem::detail::has_nontemporal_stores(device.info()) ? "-DSTREAM_STORES" : "");
  } catch (const cl::Error& e) {
    std::string log;
    try {
      log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device.cl_device());
    } catch (const cl::Error&) {
    }
    throw tandem::Error(e.err(), e.what(),
                        "building tandem-bench's copy kernels for " + device.info().name, log);
  }
  return program;
}

// Times each copy method between two buffers of `bytes` (rounded up to 64) in device memory:
// `warmup` untimed copies, then the median of `repeats`, each waited for on its own.
CopyRow measure_copy(tandem::Device& device, const cl::Program& program, std::size_t bytes,
                     int warmup, int repeats) {
  const std::size_t size = (bytes + 63) / 64 * 64;
  cl::CommandQueue& queue = device.queue();
  cl::Buffer src(device.context(), CL_MEM_READ_WRITE, size);
  cl::Buffer dst(device.context(), CL_MEM_READ_WRITE, size);
  queue.enqueueFillBuffer(src, cl_uint{0x5a3c96e1}, 0, size);
  queue.enqueueFillBuffer(dst, cl_uint{0}, 0, size);
  queue.finish();
  CopyRow row{device_label(device.info()), "", size, {}, NAN};
  auto time = [&](const char* name, const std::function<cl::Event()>& copy) {
    for (int i = 0; i < warmup; ++i) copy().wait();
    std::vector<double> ms;
    for (int i = 0; i < repeats; ++i) {
      const cl::Event e = copy();
      e.wait();
      ms.push_back(event_ms(e));
    }
    CopyMethod m{name, summarize(ms)};
    m.gbps = gb_per_s(2.0 * static_cast<double>(size), m.ms.median);
    if (std::isnan(row.gbps) || m.gbps > row.gbps) row.gbps = m.gbps;
    row.methods.push_back(m);
  };
  std::vector<std::pair<std::string, std::size_t>> kernels{{"uint4", 16}, {"float4", 16}};
  if (tandem::detail::has_nontemporal_stores(device.info())) {
    kernels.emplace_back("uint16 streamed", 64);
  }
  for (const auto& [name, element] : kernels) {
    const std::size_t elements = size / element;
    std::string kernel_name = "copy_" + name;
    std::replace(kernel_name.begin(), kernel_name.end(), ' ', '_');
    cl::Kernel kernel(program, kernel_name.c_str());
    kernel.setArg(0, src);
    kernel.setArg(1, dst);
    kernel.setArg(2, static_cast<cl_uint>(elements));
    const std::size_t local = std::min<std::size_t>(
        256, kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device.cl_device()));
    const std::size_t global = (elements + local - 1) / local * local;
    time(name.c_str(), [&] {
      cl::Event e;
      queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(global), cl::NDRange(local),
                                 nullptr, &e);
      return e;
    });
  }
  time("copy_buffer", [&] {
    cl::Event e;
    queue.enqueueCopyBuffer(src, dst, 0, 0, size, nullptr, &e);
    return e;
  });
  return row;
}

// ---- Program binaries (--dump-binaries) ------------------------------------------------------

// Lower-case letters and digits of `text`, every other run of characters one '-'.
std::string slug(const std::string& text) {
  std::string s;
  for (unsigned char c : text) {
    if (std::isalnum(c)) {
      s += static_cast<char>(std::tolower(c));
    } else if (!s.empty() && s.back() != '-') {
      s += '-';
    }
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s.empty() ? "program" : s;
}

// What a driver's binary is, from its first bytes: "ptx", "elf", "llvm-bitcode", "poclbin", or
// the bytes.
std::string binary_format(const std::vector<unsigned char>& b) {
  const std::string head(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(
                                                    std::min<std::size_t>(b.size(), 4096)));
  if (head.find(".version ") != std::string::npos && head.find(".target ") != std::string::npos)
    return "ptx";
  if (head.rfind("\x7f" "ELF", 0) == 0) return "elf";
  if (head.rfind("BC\xc0\xde", 0) == 0) return "llvm-bitcode";
  if (head.rfind("poclbin", 0) == 0) return "poclbin";  // PoCL: bitcode and per-kernel .so
  std::string shown;
  for (std::size_t i = 0; i < std::min<std::size_t>(head.size(), 8); ++i)
    shown += std::isprint(static_cast<unsigned char>(head[i])) ? head[i] : '.';
  return "unknown, starts \"" + shown + "\"";
}

// The library keeps the programs it builds to itself, but its disk cache holds each one as a
// 32-byte header (magic "TNDMPRG1", key, size, checksum) followed by the driver's
// CL_PROGRAM_BINARIES. So the bench points the process's cache at a fresh temporary directory
// (TANDEM_CACHE_DIR, set before the first program is built; every program is then built from
// source in the warm-up) and takes the entries each case adds, by case and device. A program an
// earlier case built on the same device is found in memory and adds no entry.
class BinaryDump {
 public:
  struct File {
    std::string name, what, device, device_name, format;
    std::size_t bytes = 0;
  };

  explicit BinaryDump(std::filesystem::path dir) : dir_(std::move(dir)) {
    std::filesystem::create_directories(dir_);
    // Files a previous dump listed are ours to replace; nothing else in DIR is touched.
    std::ifstream index(dir_ / "index.tsv");
    std::string line;
    std::getline(index, line);  // the column names
    while (std::getline(index, line)) {
      const std::string name = line.substr(0, line.find('\t'));
      if (!name.empty() && name.find('/') == std::string::npos) {
        std::error_code ec;
        std::filesystem::remove(dir_ / name, ec);
      }
    }
    std::random_device rd;
    cache_ = std::filesystem::temp_directory_path() /
             ("tandem-bench-cache-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(cache_);
    ::unsetenv("TANDEM_CACHE");
    ::setenv("TANDEM_CACHE_DIR", cache_.c_str(), 1);
    if (tandem::ProgramCache::global().directory() != cache_) {
      throw tandem::Error("--dump-binaries: the program cache was opened before the bench could "
                          "point it at " + cache_.string());
    }
  }
  ~BinaryDump() {
    std::error_code ec;
    std::filesystem::remove_all(cache_, ec);
  }
  BinaryDump(const BinaryDump&) = delete;
  BinaryDump& operator=(const BinaryDump&) = delete;

  // Writes the cache entries added since the last call as programs of `what` on `device`.
  void take(const std::string& what, const tandem::DeviceInfo& device) {
    std::vector<std::filesystem::path> added;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(cache_ / "programs", ec)) {
      const std::string name = e.path().filename().string();
      if (e.path().extension() == ".bin" && name.find(".tmp.") == std::string::npos &&
          seen_.insert(name).second) {
        added.push_back(e.path());
      }
    }
    // In the order they were built.
    std::sort(added.begin(), added.end(), [](const auto& a, const auto& b) {
      std::error_code e1, e2;
      return std::filesystem::last_write_time(a, e1) < std::filesystem::last_write_time(b, e2);
    });
    for (const auto& path : added) {
      std::ifstream in(path, std::ios::binary);
      std::vector<unsigned char> entry((std::istreambuf_iterator<char>(in)),
                                       std::istreambuf_iterator<char>());
      std::uint64_t size = 0;
      if (entry.size() >= 32) std::memcpy(&size, entry.data() + 16, sizeof size);
      if (entry.size() < 32 || std::memcmp(entry.data(), "TNDMPRG1", 8) != 0 ||
          size != entry.size() - 32) {
        warnings_.push_back("cache entry " + path.filename().string() + " (" + what + ", " +
                            device.id + ") is not laid out as expected (magic TNDMPRG1, key, "
                            "size, checksum): not written");
        continue;
      }
      write(what, device, {entry.begin() + 32, entry.end()});
    }
  }

  // A program the bench built itself (the copy kernels).
  void add(const std::string& what, const tandem::DeviceInfo& device, const cl::Program& program) {
    const auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
    if (binaries.empty() || binaries[0].empty()) {
      warnings_.push_back(what + " on " + device.id + ": the driver returned no binary");
      return;
    }
    write(what, device, binaries[0]);
  }

  // index.tsv: one line per file written, with the case and the device it was built for.
  void write_index() const {
    std::ofstream out(dir_ / "index.tsv");
    out << "file\tcase\tdevice\tdevice_name\tbytes\tformat\n";
    for (const File& f : files_) {
      out << f.name << '\t' << f.what << '\t' << f.device << '\t' << f.device_name << '\t'
          << f.bytes << '\t' << f.format << '\n';
    }
    if (!out.flush()) throw tandem::Error("cannot write " + (dir_ / "index.tsv").string());
  }

  const std::filesystem::path& dir() const { return dir_; }
  const std::vector<File>& files() const { return files_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  void write(const std::string& what, const tandem::DeviceInfo& device,
             std::vector<unsigned char> binary) {
    const std::string format = binary_format(binary);
    if (format == "ptx") {
      while (!binary.empty() && binary.back() == 0) binary.pop_back();  // C string's NUL
    }
    const std::string stem = slug(what) + "_dev" + device.id;
    const std::string name = stem + "_" + std::to_string(++numbers_[stem]) +
                             (format == "ptx" ? ".ptx" : ".bin");
    std::ofstream out(dir_ / name, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(binary.data()),
              static_cast<std::streamsize>(binary.size()));
    if (!out.flush()) throw tandem::Error("cannot write " + (dir_ / name).string());
    files_.push_back({name, what, device.id, device.name, format, binary.size()});
  }

  std::filesystem::path dir_, cache_;
  std::set<std::string> seen_;
  std::map<std::string, int> numbers_;
  std::vector<File> files_;
  std::vector<std::string> warnings_;
};

// ---- Mode: filters (the cases: filter_cases.cpp) ---------------------------------------------

struct FilterRow {
  std::string filter, device;
  Summary tandem;          // ms per frame, host memory to host memory
  Summary kernel;          // the device's kernel time per frame (profiling events)
  std::size_t bytes = 0;   // compulsory: the input frame read once, the output written once
  double gbps = NAN;       // bytes / median kernel time
  double copy_gbps = NAN;  // the device's copy bandwidth on a buffer of the input frame's size
  std::optional<Summary> opencv;
};

struct FusionRow {
  std::string chain, device;
  Summary fused, apart;                // host memory to host memory
  Summary fused_kernel, apart_kernel;  // kernel time per frame
};

// Whether `label` contains one of the comma-separated words of `only` (empty: every label).
bool selected(const std::string& label, const std::string& only) {
  if (only.empty()) return true;
  for (std::size_t start = 0; start <= only.size();) {
    const std::size_t comma = std::min(only.find(',', start), only.size());
    const std::string word = only.substr(start, comma - start);
    if (!word.empty() && label.find(word) != std::string::npos) return true;
    start = comma + 1;
  }
  return false;
}

// "1.234 ms (IQR 1.200..1.300)"
// A case that failed, with the compiler's log where a program did not build.
void print_failure(const std::string& label, const tandem::Error& e) {
  std::printf("  %-52s failed: %s\n", label.c_str(), e.what());
  if (!e.build_log().empty()) std::printf("build log:\n%s\n", e.build_log().c_str());
}

std::string ms_with_iqr(const Summary& s) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%8.3f ms (IQR %.3f..%.3f)", s.median, s.q1, s.q3);
  return buf;
}

// Percent of `whole`; NaN when either is unknown.
double percent(double part, double whole) { return 100 * part / whole; }

int run_filters(const Options& o, const Machine& machine, BinaryDump* dump) {
  std::vector<FilterCase> cases;
  std::string labels;
  for (FilterCase& c : filter_cases()) {
    labels += (labels.empty() ? "" : ", ") + c.label;
    if (selected(c.label, o.only)) cases.push_back(std::move(c));
  }
  struct Chain {
    std::string label, graph;
    PixelFormat format;
  };
  std::vector<Chain> chains;
  for (auto& chain : std::vector<Chain>{
           {"saturation+tonemap reinhard", "saturation=1.3,tonemap", PixelFormat::rgba32f},
           {"saturation+tonemap aces", "saturation=1.3,tonemap=op=aces", PixelFormat::rgba32f},
           // A stencil running the point-wise chain after it in its last kernel.
           {"gaussian sigma=2+saturation", "gaussian=sigma=2,saturation=1.3", PixelFormat::rgba8},
           {"box radius=1+saturation", "box=radius=1,saturation=1.3", PixelFormat::rgba8},
           {"unsharp+saturation", "unsharp,saturation=1.3", PixelFormat::rgba8},
           // The stream's graph: tonemap, which reduces frame statistics, starts its own kernel.
           {"gaussian sigma=2+saturation+tonemap", "gaussian=sigma=2,saturation=1.3,tonemap",
            PixelFormat::rgba8}}) {
    labels += ", " + chain.label;
    if (selected(chain.label, o.only)) chains.push_back(chain);
  }
  if (cases.empty() && chains.empty()) {
    throw tandem::Error("--only " + o.only + " selects none of the cases: " + labels);
  }
  Devices devices = open_devices(o.devices);
  print_header(machine, devices.all, devices.selected);
  std::size_t alignment = tandem::kMinRowAlignment;
  // Frames in pinned memory when a discrete GPU is selected: what Pipeline::make_frame gives.
  tandem::HostAllocator allocate;
  for (DeviceSet& set : devices.alone) {
    alignment = std::lcm(alignment, set.row_alignment());
    if (!allocate) allocate = set.host_allocator();
  }
  const std::size_t pixels = static_cast<std::size_t>(o.width) * static_cast<std::size_t>(o.height);
  // The frame sizes the selected cases read, each the size of one copy measured.
  std::vector<PixelFormat> formats;
  auto uses = [&](PixelFormat f) {
    if (std::find(formats.begin(), formats.end(), f) == formats.end()) formats.push_back(f);
  };
  for (const FilterCase& c : cases) uses(c.format);
  for (const Chain& chain : chains) uses(chain.format);

  // The limit each kernel is reported against, measured in this run.
  const int copy_warmup = std::max(o.warmup, 3);
  const int copy_repeats = std::max(o.frames, 20);
  std::printf("## Copy bandwidth of each device: the limit\n\n");
  std::printf(
      "One frame's bytes copied between two buffers in device memory: kernels that load and "
      "store one uint4 or one float4 per work-item, clEnqueueCopyBuffer, and on PoCL's CPU "
      "devices a kernel storing 64-byte lines with non-temporal stores (uint16 streamed, as "
      "crop's output); profiling-event time, median of %d after %d warm-up copies; GB/s = "
      "(bytes read + bytes written) / time. The best of them is the device's copy bandwidth.\n\n",
      copy_repeats, copy_warmup);
  std::vector<CopyRow> copies;
  std::map<std::pair<std::size_t, std::size_t>, double> limit;  // (device, bytes) -> GB/s
  for (std::size_t k = 0; k < devices.alone.size(); ++k) {
    tandem::Device& device = devices.alone[k][0];
    const std::string label = device_label(device.info());
    try {
      const cl::Program program = build_copy_program(device);
      if (dump) dump->add("copy", device.info(), program);
      for (PixelFormat f : formats) {
        const std::size_t bytes = pixels * tandem::bytes_per_pixel(f);
        CopyRow row = measure_copy(device, program, bytes, copy_warmup, copy_repeats);
        row.frame = std::string(tandem::to_string(f));
        std::printf("  %-52s %-7s %7.2f MB:", label.c_str(), row.frame.c_str(),
                    static_cast<double>(row.bytes) / 1e6);
        for (const CopyMethod& m : row.methods) std::printf("  %s %.2f", m.name.c_str(), m.gbps);
        std::printf("  -> %.2f GB/s\n", row.gbps);
        limit[{k, bytes}] = row.gbps;
        copies.push_back(std::move(row));
      }
    } catch (const tandem::Error& e) {
      print_failure(label, e);
    } catch (const cl::Error& e) {
      std::printf("  %-52s failed: %s returned %s\n", label.c_str(), e.what(),
                  tandem::cl_status_name(e.err()).c_str());
    }
  }
  std::printf("\n");

  std::printf("## Filters, each device alone (split single)\n\n");
  std::printf(
      "%dx%d frames, a ring of %d synthetic frames (gradients, blocks, noise); %d warm-up "
      "frames (at least the ring), then %d timed frames. Per device: frame = ms per frame from "
      "host memory to host memory; kernels = the device's kernel time per frame (profiling "
      "events of its kernels and device-to-device copies, no host transfers: the run report's "
      "kernel_ms); GB/s = compulsory bytes (the input frame read once, the output written once) "
      "/ kernel time, and its percentage of the device's copy bandwidth on a frame of the "
      "input's size. Medians throughout.\n\n",
      o.width, o.height, o.ring, o.warmup, o.frames);

  std::vector<Frame> ring8, ring32;
  auto ring_for = [&](PixelFormat f) -> const std::vector<Frame>& {
    std::vector<Frame>& r = f == PixelFormat::rgba8 ? ring8 : ring32;
    if (r.empty()) r = synthetic_frames(o.width, o.height, f, o.ring, alignment, allocate);
    return r;
  };
  const int warmup = o.warmup;

  std::vector<FilterRow> rows;
  std::vector<std::string> skipped;
  for (const FilterCase& c : cases) {
    std::printf("%s: \"%s\" on %s\n", c.label.c_str(), c.graph.c_str(),
                std::string(tandem::to_string(c.format)).c_str());
    std::vector<std::string> missing;
    for (const auto& n : c.needs) {
      if (!tandem::FilterRegistry::instance().find(n)) missing.push_back(n);
    }
    if (!missing.empty()) {
      std::printf("  not registered: %s (skipped)\n\n", join(missing, ", ").c_str());
      skipped.push_back(c.label + " (" + join(missing, ", ") + " not registered)");
      continue;
    }
    Graph graph;
    PixelFormat out_format = c.format;
    tandem::Size out_size{o.width, o.height};
    try {
      graph = Graph::parse(c.graph);
      out_format = graph.validate(c.format);
      out_size = graph.output_size(out_size);  // scale writes a frame of its own size
    } catch (const tandem::Error& e) {
      std::printf("  cannot parse: %s (skipped)\n\n", e.what());
      skipped.push_back(c.label + " (graph does not parse)");
      continue;
    }
    const std::size_t read = pixels * tandem::bytes_per_pixel(c.format);
    const std::size_t written = static_cast<std::size_t>(out_size.width) *
                                static_cast<std::size_t>(out_size.height) *
                                tandem::bytes_per_pixel(out_format);
    std::printf("  compulsory bytes per frame: %.2f MB read + %.2f MB written (%s)\n",
                static_cast<double>(read) / 1e6, static_cast<double>(written) / 1e6,
                std::string(tandem::to_string(out_format)).c_str());
    const std::vector<Frame>& ring = ring_for(c.format);
    std::optional<Summary> cv_summary;
#ifdef TANDEM_BENCH_OPENCV
    if (c.opencv) {
      const OpenCvRun run = c.opencv(ring);
      cv_summary = summarize(time_frames(warmup, o.frames, run));
      std::printf("  %-52s frame %s\n",
                  ("OpenCV, " + std::to_string(cv::getNumThreads()) + " threads").c_str(),
                  ms_with_iqr(*cv_summary).c_str());
      std::printf("      (%s)\n", c.opencv_label.c_str());
    }
#endif
    for (std::size_t k = 0; k < devices.alone.size(); ++k) {
      const tandem::DeviceInfo& info = devices.all[devices.selected[k]];
      const std::string label = device_label(info);
      try {
        PipelineOptions options;
        options.split = "single";
        options.persist_split = false;
        options.schedule = o.schedule;
        const Timed t = time_graph(devices.alone[k], graph, options, ring, warmup, o.frames);
        FilterRow row{c.label, label, summarize(t.ms), summarize(t.kernel_ms), read + written};
        row.gbps = gb_per_s(static_cast<double>(row.bytes), row.kernel.median);
        if (const auto it = limit.find({k, read}); it != limit.end()) row.copy_gbps = it->second;
        row.opencv = cv_summary;
        std::printf("  %-52s frame %s | kernels %8.4f ms %8.2f GB/s %5.1f%% of copy",
                    label.c_str(), ms_with_iqr(row.tandem).c_str(), row.kernel.median, row.gbps,
                    percent(row.gbps, row.copy_gbps));
        if (cv_summary) std::printf(" | OpenCV/tandem %.2f", cv_summary->median / row.tandem.median);
        std::printf("\n");
        for (const auto& f : t.pipeline->report().fallbacks)
          std::printf("    fallback: %s\n", f.c_str());
        rows.push_back(std::move(row));
      } catch (const tandem::Error& e) {
        print_failure(label, e);
      }
      if (dump) dump->take(c.label, info);
    }
    std::printf("\n");
  }

  // Fused point-wise chains against the same chains run one pass per filter.
  std::vector<FusionRow> fusion;
  if (!chains.empty()) {
    std::printf(
        "## Fused point-wise chains against one pass per filter (PipelineOptions.fuse)\n\n");
  }
  for (const auto& [label, text, format] : chains) {
    std::printf("%s: \"%s\" on %s\n", label.c_str(), text.c_str(),
                std::string(tandem::to_string(format)).c_str());
    const auto missing = missing_filters(text);
    if (!missing.empty()) {
      std::printf("  not registered: %s (skipped)\n\n", join(missing, ", ").c_str());
      skipped.push_back(label + " (" + join(missing, ", ") + " not registered)");
      continue;
    }
    Graph graph = Graph::parse(text);
    const std::vector<Frame>& ring = ring_for(format);
    for (std::size_t k = 0; k < devices.alone.size(); ++k) {
      const tandem::DeviceInfo& info = devices.all[devices.selected[k]];
      const std::string dev = device_label(info);
      try {
        PipelineOptions options;
        options.split = "single";
        options.persist_split = false;
        options.schedule = o.schedule;
        const Timed fused = time_graph(devices.alone[k], graph, options, ring, warmup, o.frames);
        if (dump) dump->take(label + " fused", info);
        options.fuse = false;
        const Timed apart = time_graph(devices.alone[k], graph, options, ring, warmup, o.frames);
        if (dump) dump->take(label + " not fused", info);
        FusionRow row{label, dev, summarize(fused.ms), summarize(apart.ms),
                      summarize(fused.kernel_ms), summarize(apart.kernel_ms)};
        std::printf("  %-52s fused     frame %s | kernels %8.4f ms\n", dev.c_str(),
                    ms_with_iqr(row.fused).c_str(), row.fused_kernel.median);
        std::printf(
            "  %-52s not fused frame %s | kernels %8.4f ms | not fused/fused %.2f (kernels "
            "%.2f)\n",
            "", ms_with_iqr(row.apart).c_str(), row.apart_kernel.median,
            row.apart.median / row.fused.median, row.apart_kernel.median / row.fused_kernel.median);
        fusion.push_back(std::move(row));
      } catch (const tandem::Error& e) {
        print_failure(dev, e);
        if (dump) dump->take(label, info);
      }
    }
    std::printf("\n");
  }

  std::printf("## Summary (medians)\n\n");
  if (!copies.empty()) {
    std::printf(
        "| device | frame | copy MB | uint4 GB/s | float4 GB/s | clEnqueueCopyBuffer GB/s | "
        "uint16 streamed GB/s | copy GB/s (best) |\n");
    std::printf("|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (const CopyRow& c : copies) {
      std::printf("| %s | %s | %.2f |", c.device.c_str(), c.frame.c_str(),
                  static_cast<double>(c.bytes) / 1e6);
      for (const char* name : {"uint4", "float4", "copy_buffer", "uint16 streamed"}) {
        const auto m = std::find_if(c.methods.begin(), c.methods.end(),
                                    [&](const CopyMethod& m) { return m.name == name; });
        if (m == c.methods.end()) {
          std::printf(" - |");
        } else {
          std::printf(" %.2f |", m->gbps);
        }
      }
      std::printf(" %.2f |\n", c.gbps);
    }
    std::printf("\n");
  }
  std::printf(
      "| filter | device | frame ms | kernel ms | compulsory MB | GB/s | %% of copy | OpenCV ms "
      "| OpenCV / tandem |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& r : rows) {
    std::printf("| %s | %s | %.3f | %.4f | %.2f | %.2f | %.1f |", r.filter.c_str(),
                r.device.c_str(), r.tandem.median, r.kernel.median,
                static_cast<double>(r.bytes) / 1e6, r.gbps, percent(r.gbps, r.copy_gbps));
    if (r.opencv) {
      std::printf(" %.3f | %.2f |\n", r.opencv->median, r.opencv->median / r.tandem.median);
    } else {
      std::printf(" - | - |\n");
    }
  }
  if (!fusion.empty()) {
    std::printf(
        "\n| chain | device | fused ms | not fused ms | not fused / fused | fused kernel ms | "
        "not fused kernel ms |\n");
    std::printf("|---|---|---:|---:|---:|---:|---:|\n");
    for (const auto& r : fusion) {
      std::printf("| %s | %s | %.3f | %.3f | %.2f | %.4f | %.4f |\n", r.chain.c_str(),
                  r.device.c_str(), r.fused.median, r.apart.median,
                  r.apart.median / r.fused.median, r.fused_kernel.median, r.apart_kernel.median);
    }
  }
  for (const auto& s : skipped) std::printf("\nskipped: %s", s.c_str());
  if (!skipped.empty()) std::printf("\nregistered filters: %s\n", registered_filters().c_str());

  if (dump) {
    dump->write_index();
    std::map<std::string, int> by_format;
    for (const auto& f : dump->files()) ++by_format[f.format];
    std::printf("\n## Program binaries\n\n%zu files in %s (index.tsv: case and device of each):",
                dump->files().size(), dump->dir().c_str());
    for (const auto& [format, n] : by_format) std::printf(" %d %s", n, format.c_str());
    std::printf("\ncount their global loads and stores by width: tools/ptx-loads.sh %s\n",
                shell_quote(dump->dir().string()).c_str());
    for (const auto& w : dump->warnings()) std::printf("warning: %s\n", w.c_str());
  }
  std::printf("\nload at the end: %s\n", load_average().c_str());

  if (!o.json.empty()) {
    Json j = json_header("filters", machine, o);
    j["copy"] = Json::array();
    for (const CopyRow& c : copies) {
      Json methods = Json::object();
      for (const CopyMethod& m : c.methods) {
        Json method = to_json(m.ms);
        method["gbps"] = six_digits(m.gbps);
        methods[m.name] = method;
      }
      j["copy"].push_back({{"device", c.device},
                           {"frame", c.frame},
                           {"bytes", c.bytes},
                           {"gbps", six_digits(c.gbps)},
                           {"methods", methods}});
    }
    j["filters"] = Json::array();
    for (const auto& r : rows) {
      j["filters"].push_back({{"filter", r.filter},
                              {"device", r.device},
                              {"tandem", to_json(r.tandem)},
                              {"kernel", to_json(r.kernel)},
                              {"compulsory_bytes", r.bytes},
                              {"achieved_gbps", six_digits(r.gbps)},
                              {"copy_gbps", six_digits(r.copy_gbps)},
                              {"percent_of_copy", six_digits(percent(r.gbps, r.copy_gbps))},
                              {"opencv", r.opencv ? to_json(*r.opencv) : Json(nullptr)}});
    }
    j["fusion"] = Json::array();
    for (const auto& r : fusion) {
      j["fusion"].push_back({{"chain", r.chain},
                             {"device", r.device},
                             {"fused", to_json(r.fused)},
                             {"not_fused", to_json(r.apart)},
                             {"fused_kernel", to_json(r.fused_kernel)},
                             {"not_fused_kernel", to_json(r.apart_kernel)}});
    }
    if (dump) {
      Json files = Json::array();
      for (const auto& f : dump->files()) {
        files.push_back({{"file", f.name},
                         {"case", f.what},
                         {"device", f.device},
                         {"bytes", f.bytes},
                         {"format", f.format}});
      }
      j["binaries"] = {{"dir", dump->dir().string()}, {"files", files},
                       {"warnings", dump->warnings()}};
    }
    write_json(o.json, j);
  }
  return 0;
}

// ---- Mode: coexec ----------------------------------------------------------------------------

int run_coexec(const Options& o, const Machine& machine) {
  const auto missing = missing_filters(o.graph);
  if (!missing.empty()) {
    throw tandem::Error("the graph \"" + o.graph + "\" needs " +
                        (missing.size() == 1 ? "filter " : "filters ") + join(missing, ", ") +
                        ", not registered in this build (registered: " + registered_filters() +
                        ")");
  }
  Graph graph = Graph::parse(o.graph);
  graph.validate(tandem::working_format(o.format));
  Devices devices = open_devices(o.devices);
  DeviceSet together = DeviceSet::open(o.devices);
  print_header(machine, devices.all, devices.selected);

  const int warmup = o.warmup;
  const std::vector<Frame> ring =
      synthetic_frames(o.width, o.height, o.format, o.ring, together.row_alignment(),
                       together.host_allocator());
  std::printf("## Co-execution: \"%s\"\n\n", o.graph.c_str());
  std::printf(
      "%s %dx%d frames, a ring of %d synthetic frames (gradients, blocks, noise) in host "
      "memory (pinned by a discrete GPU's context when one is selected); %d warm-up frames, then %d timed frames; ms per frame from host memory to "
      "host memory.\n\n",
      std::string(tandem::to_string(o.format)).c_str(), o.width, o.height, o.ring, warmup,
      o.frames);

  std::vector<Summary> alone;
  std::printf("each device alone (split single):\n");
  for (std::size_t k = 0; k < devices.alone.size(); ++k) {
    PipelineOptions options;
    options.split = "single";
    options.persist_split = false;
    options.schedule = o.schedule;
    const Timed t = time_graph(devices.alone[k], graph, options, ring, warmup, o.frames);
    alone.push_back(summarize(t.ms));
    std::printf("  %-52s %s  %7.1f fps\n", device_label(devices.all[devices.selected[k]]).c_str(),
                describe(alone.back()).c_str(), 1000 / alone.back().median);
  }

  // The learned split is not persisted, so that every run starts from the same even split.
  PipelineOptions options;
  options.split = o.split;
  options.persist_split = false;
  options.schedule = o.schedule;
  const Timed co = time_graph(together, graph, options, ring, warmup, o.frames);
  const Summary together_summary = summarize(co.ms);
  const tandem::RunReport& report = co.pipeline->report();
  std::vector<std::string> ids;
  for (const auto& d : together.devices()) ids.push_back(d.info().id);
  std::printf("\nall %zu together (split %s):\n", together.size(), o.split.c_str());
  for (const auto& d : together.devices()) {
    if (d.info().cores_left_to_host > 0) {
      std::printf(
          "  %s runs on %u compute units, leaving %u cores to the host and the GPUs' drivers\n",
          d.info().id.c_str(), d.info().compute_units, d.info().cores_left_to_host);
    }
  }
  std::printf("  %-52s %s  %7.1f fps\n", join(ids, " + ").c_str(),
              describe(together_summary).c_str(), 1000 / together_summary.median);

  // Mean share of rows per device over the timed frames (the trace also holds the warm-up).
  const std::size_t first_timed = report.split_trace.size() - static_cast<std::size_t>(o.frames);
  std::vector<double> share(together.size(), 0.0);
  for (std::size_t f = first_timed; f < report.split_trace.size(); ++f) {
    for (std::size_t d = 0; d < share.size(); ++d) share[d] += report.split_trace[f][d] / o.frames;
  }
  std::printf("  mean share of rows over the timed frames:");
  for (std::size_t d = 0; d < share.size(); ++d) {
    std::printf("  %s %.3f", together[d].info().id.c_str(), share[d]);
  }
  std::printf("\n");
  // Busy time (profiling events) against wall time over the timed frames: when the devices'
  // busy times add up to the wall time, they ran one after the other, not together.
  const double wall = (report.wall_ms - co.warmed.wall_ms) / o.frames;
  double busy_sum = 0;
  std::printf("  busy ms per frame (profiling events):");
  for (std::size_t d = 0; d < report.devices.size(); ++d) {
    const double busy = (report.devices[d].busy_ms - co.warmed.devices[d].busy_ms) / o.frames;
    busy_sum += busy;
    std::printf("  %s %.2f", report.devices[d].id.c_str(), busy);
  }
  std::printf("; wall %.2f; overlap (sum of busy / wall) %.2f\n", wall, busy_sum / wall);
  std::printf("    (overlap near 1 with several devices busy: they ran one after another)\n");
  std::printf(
      "  fixed ms per band (from the frame's first enqueue to its end, what its rows do not "
      "scale):");
  for (std::size_t d = 0; d < report.devices.size(); ++d) {
    const auto& now = report.devices[d];
    const auto& before = co.warmed.devices[d];
    const int bands = now.fixed_bands - before.fixed_bands;
    if (bands > 0) {
      std::printf("  %s %.3f", now.id.c_str(), (now.fixed_ms - before.fixed_ms) / bands);
    } else {
      std::printf("  %s -", now.id.c_str());
    }
  }
  std::printf("\n");
  // The slowest frame and its split: a stall (a new band height, a device probed after sitting
  // out) shows here rather than in the median.
  const auto slowest =
      static_cast<std::size_t>(std::max_element(co.ms.begin(), co.ms.end()) - co.ms.begin());
  std::printf("  slowest timed frame: frame %zu, %.2f ms, split", first_timed + slowest,
              co.ms[slowest]);
  for (double v : report.split_trace[first_timed + slowest]) std::printf(" %.3f", v);
  std::printf("\n");
  for (const auto& f : report.fallbacks) std::printf("  fallback: %s\n", f.c_str());

  const std::size_t shown =
      o.trace ? report.split_trace.size() : std::min<std::size_t>(20, report.split_trace.size());
  std::printf("\nsplit trace, first %zu frames (warm-up included; fraction of rows per device: ",
              shown);
  for (std::size_t d = 0; d < together.size(); ++d) {
    std::printf("%s%s", d ? " " : "", together[d].info().id.c_str());
  }
  std::printf("):\n");
  for (std::size_t f = 0; f < shown; ++f) {
    std::printf("  frame %2zu%s:", f, f < first_timed ? " (warm-up)" : "          ");
    for (double v : report.split_trace[f]) std::printf(" %.3f", v);
    if (o.trace && f >= first_timed) std::printf("  %.3f ms", co.ms[f - first_timed]);
    std::printf("\n");
  }

  double throughput_sum = 0;
  double best = INFINITY, best_mean = INFINITY;
  for (const Summary& s : alone) {
    throughput_sum += 1 / s.median;
    best = std::min(best, s.median);
    best_mean = std::min(best_mean, s.mean);
  }
  const double efficiency = (1 / together_summary.median) / throughput_sum;
  std::printf(
      "\nco-execution efficiency (1/T_co) / sum(1/T_i) = %.3f   (1: the devices' frame "
      "rates add up; medians)\n",
      efficiency);
  std::printf("speed-up over the fastest device alone: %.3f\n", best / together_summary.median);
  // What a run of these frames takes, trials of other splits and their stalls included.
  std::printf("speed-up over the fastest device alone, means: %.3f\n",
              best_mean / together_summary.mean);
  std::size_t host_cpus = 0;
  unsigned host_units = 0;
  for (const auto& d : together.devices()) {
    if (d.info().type == tandem::DeviceType::cpu) {
      ++host_cpus;
      host_units += d.info().compute_units;
    }
  }
  if (host_cpus > 1 && host_units > static_cast<unsigned>(machine.usable_cpus)) {
    std::printf(
        "note: %zu CPU devices with %u compute units in all share %d cores: each alone "
        "already uses cores the others need, so sum(1/T_i) counts those cores more than "
        "once and the efficiency stays below 1 even when nothing is wasted.\n",
        host_cpus, host_units, machine.usable_cpus);
  }
  std::printf("\nload at the end: %s\n", load_average().c_str());

  if (!o.json.empty()) {
    Json j = json_header("coexec", machine, o);
    j["graph"] = o.graph;
    j["format"] = std::string(tandem::to_string(o.format));
    j["split"] = o.split;
    j["alone"] = Json::array();
    for (std::size_t k = 0; k < alone.size(); ++k) {
      const auto& info = devices.all[devices.selected[k]];
      j["alone"].push_back({{"id", info.id}, {"name", info.name}, {"time", to_json(alone[k])}});
    }
    j["together"] = to_json(together_summary);
    j["efficiency"] = six_digits(efficiency);
    j["speedup_over_fastest"] = six_digits(best / together_summary.median);
    j["speedup_over_fastest_means"] = six_digits(best_mean / together_summary.mean);
    j["overlap"] = six_digits(busy_sum / wall);
    j["run_report"] = Json::parse(report.to_json());
    write_json(o.json, j);
  }
  return 0;
}

// ---- Mode: stream ----------------------------------------------------------------------------

int run_stream(const Options& o, const Machine& machine) {
  Graph graph = Graph::parse(o.graph);
  graph.validate(tandem::working_format(o.format));
  Devices devices = open_devices(o.devices);
  DeviceSet set = DeviceSet::open(o.devices);
  print_header(machine, devices.all, devices.selected);
  const std::vector<Frame> ring = synthetic_frames(o.width, o.height, o.format, o.ring,
                                                   set.row_alignment(), set.host_allocator());
  std::printf("## Stream: \"%s\"\n\n", o.graph.c_str());
  std::printf(
      "%s %dx%d frames from memory, a ring of %d synthetic frames (pinned by a discrete GPU's "
      "context when one is selected); split %s; %d warm-up frames, then %d timed frames. A "
      "timed frame is the host time between two frames leaving the devices (for one frame at "
      "a time: from host memory to host memory).\n\n",
      std::string(tandem::to_string(o.format)).c_str(), o.width, o.height, o.ring,
      o.split.c_str(), o.warmup, o.frames);

  struct Run {
    std::string name;
    int depth = 0;         // frames on the devices through submit/wait; 0: one at a time (process)
    bool threads = false;  // submitting and waiting on threads of their own
    Summary time;
    Summary submit;  // host time in submit() per timed frame (pipelined runs)
    tandem::RunReport report, warmed;
  };
  std::vector<Run> runs{{"one frame at a time (process)", 0, false}};
  for (const int depth : std::set<int>{2, o.frames_on_devices}) {
    runs.push_back({"pipelined on one thread (submit, then wait for the oldest), " +
                        std::to_string(depth) + " frames on the devices",
                    depth, false});
  }
  runs.push_back({"pipelined on two threads (one submits, one waits, as tandem's video path), " +
                      std::to_string(o.frames_on_devices) + " frames on the devices",
                  o.frames_on_devices, true});
  const int ring_size = static_cast<int>(ring.size());
  for (Run& run : runs) {
    PipelineOptions options;
    options.split = o.split;
    options.persist_split = false;
    options.schedule = o.schedule;
    options.frames_on_devices = std::max(run.depth, 1);
    Pipeline pipeline(set, graph, options);
    const PixelFormat out_format = pipeline.output_format(o.format);
    // One output frame per frame on the devices (per device, where they take whole frames).
    const int held = pipeline.capacity();
    std::vector<Frame> outputs;
    for (int i = 0; i < held; ++i) {
      outputs.push_back(pipeline.make_frame(o.width, o.height, out_format));
    }
    const auto input = [&](int i) -> const Frame& {
      return ring[static_cast<std::size_t>(i % ring_size)];
    };
    std::vector<std::uint64_t> tickets(outputs.size(), 0);
    std::vector<double> submit_ms;
    // Frame i goes into output i % depth, once the frame that last used it is complete.
    auto submit = [&](int i) {
      const auto start = std::chrono::steady_clock::now();
      tickets[static_cast<std::size_t>(i) % outputs.size()] =
          pipeline.submit(input(i), outputs[static_cast<std::size_t>(i) % outputs.size()]);
      if (i >= o.warmup) submit_ms.push_back(ms_since(start));
    };
    auto one_thread = [&](int i) {
      if (run.depth == 0) {
        pipeline.process(input(i), outputs[0]);
        return;
      }
      const std::uint64_t last = tickets[static_cast<std::size_t>(i) % outputs.size()];
      if (last) pipeline.wait(last);
      submit(i);
    };
    std::vector<double> ms;
    if (!run.threads) {
      ms = time_frames(o.warmup, o.frames, one_thread, [&] { run.warmed = pipeline.report(); });
      for (auto t : tickets) pipeline.wait(t);
    } else {
      // Warm up on this thread, then time a feeding thread (this one) against a draining one:
      // a timed frame is the time between two frames leaving the devices.
      for (int i = 0; i < o.warmup; ++i) one_thread(i);
      for (auto t : tickets) pipeline.wait(t);
      run.warmed = pipeline.report();
      std::mutex mutex;
      std::condition_variable changed;
      std::deque<std::uint64_t> submitted;
      int drained = 0;
      std::thread drainer([&] {
        auto last = std::chrono::steady_clock::now();
        for (int k = 0; k < o.frames; ++k) {
          std::uint64_t ticket = 0;
          {
            std::unique_lock lock(mutex);
            changed.wait(lock, [&] { return !submitted.empty(); });
            ticket = submitted.front();
            submitted.pop_front();
          }
          pipeline.wait(ticket);
          if (k > 0) ms.push_back(ms_since(last));
          last = std::chrono::steady_clock::now();
          std::lock_guard lock(mutex);
          ++drained;
          changed.notify_all();
        }
      });
      for (int k = 0; k < o.frames; ++k) {
        {
          std::unique_lock lock(mutex);
          changed.wait(lock, [&] { return k - drained < held; });
        }
        submit(o.warmup + k);
        std::lock_guard lock(mutex);
        submitted.push_back(tickets[static_cast<std::size_t>(o.warmup + k) % outputs.size()]);
        changed.notify_all();
      }
      drainer.join();
    }
    run.time = summarize(ms);
    if (!submit_ms.empty()) run.submit = summarize(submit_ms);
    run.report = pipeline.report();
  }

  for (const Run& run : runs) {
    // Frames that leave the devices in bursts make the median interval meaningless: the mean
    // interval (the timed frames' wall time over their number) is the rate.
    std::printf("%s (scheduler: %s):\n  %-40s %s  %7.1f fps (mean %.3f ms)\n", run.name.c_str(),
                run.report.scheduler.c_str(), "all selected devices", describe(run.time).c_str(),
                1000 / run.time.mean, run.time.mean);
    if (run.depth > 0) {
      std::printf("  %-40s %s\n", "host time in submit()", describe(run.submit).c_str());
    }
    const int frames = run.report.frames - run.warmed.frames;
    std::printf(
        "  per frame, mean over the timed frames (profiling events): ms upload / kernels "
        "/ download, share of rows (of frames, where whole)\n");
    for (std::size_t d = 0; d < run.report.devices.size(); ++d) {
      const auto& now = run.report.devices[d];
      const auto& before = run.warmed.devices[d];
      std::printf("    %-50s %7.3f / %7.3f / %7.3f   %.3f\n",
                  device_label(devices.all[devices.selected[d]]).c_str(),
                  (now.upload_ms - before.upload_ms) / frames,
                  (now.kernel_ms - before.kernel_ms) / frames,
                  (now.download_ms - before.download_ms) / frames,
                  (now.share * run.report.frames - before.share * run.warmed.frames) / frames);
    }
    // What the schedulers chose, warm-up included: the first few of their decisions.
    const auto& decisions = run.report.decisions;
    const std::size_t shown = std::min<std::size_t>(decisions.size(), 6);
    for (std::size_t i = 0; i < shown; ++i) std::printf("  decision: %s\n", decisions[i].c_str());
    if (decisions.size() > shown) {
      std::printf("  decision: ... %zu more\n", decisions.size() - shown);
    }
  }
  std::printf("\n");
  for (std::size_t k = 1; k < runs.size(); ++k) {
    std::printf(
        "%d frames on the devices, %s: %.3fx the frame rate of one frame at a time "
        "(means)\n",
        runs[k].depth, runs[k].threads ? "two threads" : "one thread",
        runs[0].time.mean / runs[k].time.mean);
  }
  std::printf("\nload at the end: %s\n", load_average().c_str());

  if (!o.json.empty()) {
    Json j = json_header("stream", machine, o);
    j["graph"] = o.graph;
    j["split"] = o.split;
    j["one_at_a_time"] = to_json(runs[0].time);
    j["pipelined"] = Json::array();
    for (std::size_t k = 1; k < runs.size(); ++k) {
      j["pipelined"].push_back({{"frames_on_devices", runs[k].depth},
                                {"threads", runs[k].threads ? 2 : 1},
                                {"time", to_json(runs[k].time)},
                                {"submit", to_json(runs[k].submit)},
                                {"gain", six_digits(runs[0].time.mean / runs[k].time.mean)},
                                {"run_report", Json::parse(runs[k].report.to_json())}});
    }
    write_json(o.json, j);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "tandem-bench: times tandem's filters and graphs on each OpenCL device alone and "
      "co-executed.",
      "tandem-bench"};
  app.footer(
      "Figures are ms per frame from host memory to host memory: median over the timed frames, "
      "with the interquartile range (and min..max in coexec and stream). filters also gives each device's kernel time per frame "
      "(profiling events, no transfers), the compulsory bytes (input frame read once, output "
      "written once) over that time in GB/s, and that as a percentage of the device's copy "
      "bandwidth measured in the same run (uint4 and float4 copy kernels, "
      "clEnqueueCopyBuffer and on PoCL's CPU devices a copy with non-temporal stores, on a "
      "frame's bytes in device memory: the best of them).");
  Options filters, coexec, stream;
  add_mode(app, filters, "filters",
           "Each device's copy bandwidth first (the limit); then every filter on each selected "
           "device alone (split single): frame time, kernel time, achieved GB/s of the "
           "compulsory bytes and its percentage of the copy bandwidth; with OpenCV compiled in, "
           "OpenCV's equivalent on all cores in the same run; fused point-wise chains against "
           "the same chains run one pass per filter.");
  add_mode(app, coexec, "coexec",
           "The graph on each selected device alone, then on all of them together; prints the "
           "split trace and the co-execution efficiency (1/T_co) / sum(1/T_i).");
  add_mode(app, stream, "stream",
           "A stream of frames from memory (what a video is once decoded): one frame at a time "
           "(Pipeline::process) against pipelined (Pipeline::submit/wait) with two frames on the "
           "devices and with --frames-on-devices, from one thread and from a submitting and a "
           "waiting thread (as tandem's video path), with each device's upload, kernel and "
           "download time per frame.");
  app.require_subcommand(1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    if (app.get_subcommands().empty() && e.get_name() == "RequiredError") {
      // CLI11 says only "A subcommand is required".
      message = argc < 2 || argv[1][0] == '-'
                    ? "a mode is needed: filters, coexec or stream"
                    : "unknown mode '" + std::string(argv[1]) + "' (filters, coexec or stream)";
    }
    std::replace(message.begin(), message.end(), '\n', ' ');
    std::fprintf(stderr, "tandem-bench: error: %s (see tandem-bench --help)\n", message.c_str());
    return 2;
  }
  Options& o = app.got_subcommand("filters")  ? filters
               : app.got_subcommand("coexec") ? coexec
                                              : stream;
  finish_options(o);
  try {
    // Before the machine is described, so that the environment shown has the cache it sets.
    std::optional<BinaryDump> dump;
    if (!o.dump_binaries.empty()) dump.emplace(o.dump_binaries);
    const Machine machine = describe_machine(argc, argv);
    if (o.mode == "filters") return run_filters(o, machine, dump ? &*dump : nullptr);
    return o.mode == "coexec" ? run_coexec(o, machine) : run_stream(o, machine);
  } catch (const tandem::Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "tandem-bench: error: %s\n", e.what());
    if (!e.build_log().empty()) std::fprintf(stderr, "build log:\n%s\n", e.build_log().c_str());
    return 1;
  } catch (const cl::Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "tandem-bench: error: %s failed with %s\n", e.what(),
                 tandem::cl_status_name(e.err()).c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "tandem-bench: error: %s\n", e.what());
    return 1;
  }
}
