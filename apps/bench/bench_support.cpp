// tandem-bench's shared parts (bench_support.hpp).
#include "bench_support.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#ifdef TANDEM_BENCH_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/core/ocl.hpp>
#include <opencv2/core/utility.hpp>
#endif

extern char** environ;

namespace tandem::bench {

// ---- Statistics and timing -------------------------------------------------------------------

namespace {

// Linear interpolation between the order statistics (numpy's default).
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const std::size_t i = static_cast<std::size_t>(pos);
  if (i + 1 >= sorted.size()) return sorted.back();
  return sorted[i] + (pos - static_cast<double>(i)) * (sorted[i + 1] - sorted[i]);
}

}  // namespace

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

std::vector<double> time_frames(int warmup, int timed, const std::function<void(int)>& frame,
                                const std::function<void()>& after_warmup) {
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

namespace {

std::uint32_t mix(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

}  // namespace

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

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  if (!(in >> a >> b >> c)) return "unknown";
  return a + " " + b + " " + c;
}

namespace {

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

std::string now_string() {
  const std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S %z", std::localtime(&t));
  return buf;
}

}  // namespace

std::string device_label(const tandem::DeviceInfo& d) {
  std::string name = d.name.size() > 36 ? d.name.substr(0, 33) + "..." : d.name;
  return d.id + " " + std::string(tandem::to_string(d.type)) + " " + name + " (" +
         std::to_string(d.compute_units) + " CU)";
}

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

void print_decisions(const tandem::RunReport& report, std::size_t shown) {
  const auto& decisions = report.decisions;
  shown = std::min(shown, decisions.size());
  for (std::size_t i = 0; i < shown; ++i) std::printf("  decision: %s\n", decisions[i].c_str());
  if (decisions.size() > shown) {
    std::printf("  decision: ... %zu more\n", decisions.size() - shown);
  }
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

Devices open_devices(const std::string& spec) {
  Devices d;
  d.all = tandem::enumerate_devices();
  d.selected = tandem::select_devices(spec, d.all);
  for (std::size_t i : d.selected) d.alone.push_back(DeviceSet::open(d.all[i].id));
  return d;
}

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

namespace {

double kernel_ms_so_far(const tandem::RunReport& report) {
  double ms = 0;
  for (const auto& d : report.devices) ms += d.kernel_ms;
  return ms;
}

}  // namespace

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

}  // namespace tandem::bench
