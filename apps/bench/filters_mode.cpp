// tandem-bench filters: each filter on each device alone, against the device's copy bandwidth
// (modes.hpp; the cases: filter_cases.cpp).
#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "binary_dump.hpp"
#include "copy_bandwidth.hpp"
#include "filter_cases.hpp"
#include "modes.hpp"

#include "tandem/tandem.hpp"

#ifdef TANDEM_BENCH_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#endif

namespace tandem::bench {

// ---- Mode: filters (the cases: filter_cases.cpp) ---------------------------------------------

namespace {

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

// A device alone, its split not remembered: what each case is timed with.
PipelineOptions options_alone(const Options& o) {
  PipelineOptions options;
  options.split = "single";
  options.persist_split = false;
  options.schedule = o.schedule;
  return options;
}

// A case that failed, with the compiler's log where a program did not build.
void print_failure(const std::string& label, const tandem::Error& e) {
  std::printf("  %-52s failed: %s\n", label.c_str(), e.what());
  if (!e.build_log().empty()) std::printf("build log:\n%s\n", e.build_log().c_str());
}

// "1.234 ms (IQR 1.200..1.300)"
std::string ms_with_iqr(const Summary& s) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%8.3f ms (IQR %.3f..%.3f)", s.median, s.q1, s.q3);
  return buf;
}

// Percent of `whole`; NaN when either is unknown.
double percent(double part, double whole) {
  return 100 * part / whole;
}

}  // namespace

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
        const PipelineOptions options = options_alone(o);
        const Timed t = time_graph(devices.alone[k], graph, options, ring, warmup, o.frames);
        FilterRow row{c.label, label, summarize(t.ms), summarize(t.kernel_ms), read + written};
        row.gbps = gb_per_s(static_cast<double>(row.bytes), row.kernel.median);
        if (const auto it = limit.find({k, read}); it != limit.end()) row.copy_gbps = it->second;
        row.opencv = cv_summary;
        std::printf("  %-52s frame %s | kernels %8.4f ms %8.2f GB/s %5.1f%% of copy", label.c_str(),
                    ms_with_iqr(row.tandem).c_str(), row.kernel.median, row.gbps,
                    percent(row.gbps, row.copy_gbps));
        if (cv_summary)
          std::printf(" | OpenCV/tandem %.2f", cv_summary->median / row.tandem.median);
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
        PipelineOptions options = options_alone(o);
        const Timed fused = time_graph(devices.alone[k], graph, options, ring, warmup, o.frames);
        if (dump) dump->take(label + " fused", info);
        options.fuse = false;
        const Timed apart = time_graph(devices.alone[k], graph, options, ring, warmup, o.frames);
        if (dump) dump->take(label + " not fused", info);
        FusionRow row{label,
                      dev,
                      summarize(fused.ms),
                      summarize(apart.ms),
                      summarize(fused.kernel_ms),
                      summarize(apart.kernel_ms)};
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
                  r.device.c_str(), r.fused.median, r.apart.median, r.apart.median / r.fused.median,
                  r.fused_kernel.median, r.apart_kernel.median);
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
      j["binaries"] = {
          {"dir", dump->dir().string()}, {"files", files}, {"warnings", dump->warnings()}};
    }
    write_json(o.json, j);
  }
  return 0;
}

}  // namespace tandem::bench
