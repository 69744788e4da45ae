// tandem-bench's shared parts: the options, the statistics and timing of frames, synthetic
// frames, the header of every report (when, where, what), its JSON, and the devices and graphs
// run (bench_support.cpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "json_layout.hpp"

#include "tandem/tandem.hpp"

namespace tandem::bench {

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

// ---- Statistics and timing -------------------------------------------------------------------

struct Summary {
  double median = NAN, q1 = NAN, q3 = NAN, min = NAN, max = NAN;
  double mean = NAN;  // of consecutive intervals: the rate over the whole run
  std::size_t n = 0;
};

Summary summarize(std::vector<double> ms);

std::string describe(const Summary& s);

// Runs frame(i) for `warmup` untimed frames, then `timed` frames each timed on its own. The
// warm-up covers every frame of the ring at least once (see finish_options), so that buffer
// creation for a frame never falls into the timed region.
std::vector<double> time_frames(int warmup, int timed, const std::function<void(int)>& frame,
                                const std::function<void()>& after_warmup = {});

// ---- Synthetic frames ------------------------------------------------------------------------

// Gradients, a soft ripple, hard-edged blocks and noise: content on which no filter takes a
// shortcut (the bilateral sees edges and flat parts, tonemap a wide range in float frames).
// Frame k is the same picture moved and re-noised. Values in [0, 1] for 8-bit frames; float
// frames scale them by 2^-3..2^5 across the width, a radiance map with a 256:1 range.
std::vector<Frame> synthetic_frames(int width, int height, PixelFormat format, int count,
                                    std::size_t row_alignment,
                                    const tandem::HostAllocator& allocate);

// ---- The header: when, where, what -----------------------------------------------------------

std::string shell_quote(const std::string& s);

std::string load_average();

std::string device_label(const tandem::DeviceInfo& d);

struct Machine {
  std::string date, command, cpu;
  long online_cpus = 0;
  int usable_cpus = 0;
  std::vector<std::string> environment;
};

Machine describe_machine(int argc, char** argv);

void print_header(const Machine& m, const std::vector<tandem::DeviceInfo>& all,
                  const std::vector<std::size_t>& selected);

// The first `shown` of the schedulers' decisions in `report` (warm-up included), then how many
// more there were.
void print_decisions(const tandem::RunReport& report, std::size_t shown);

// ---- JSON ------------------------------------------------------------------------------------

// The run report's layout (json_layout.hpp).
using Json = tandem::detail::json::Json;
using tandem::detail::json::six_digits;

Json to_json(const Summary& s);

// The members every mode's document starts with: when, where, what.
Json json_header(const std::string& mode, const Machine& m, const Options& o);

void write_json(const std::string& path, const Json& document);

// ---- Running tandem --------------------------------------------------------------------------

// The devices selected by the spec: each alone (for split "single"), and all of them together.
struct Devices {
  std::vector<tandem::DeviceInfo> all;
  std::vector<std::size_t> selected;
  std::vector<DeviceSet> alone;  // not resized after the pipelines take references
};

Devices open_devices(const std::string& spec);

// Filters a graph string names that are not registered in this build (the parser would stop at
// the first): every word directly before '=', ',', ';', '[' or the end, outside brackets and
// option lists, is taken as a filter name.
std::vector<std::string> missing_filters(const std::string& graph);

std::string registered_filters();

std::string join(const std::vector<std::string>& items, const char* sep);

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

Timed time_graph(DeviceSet& devices, const Graph& graph, const PipelineOptions& options,
                 const std::vector<Frame>& ring, int warmup, int frames);

}  // namespace tandem::bench
