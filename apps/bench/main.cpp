// tandem-bench: times filters and graphs on each OpenCL device alone and on several at once.
// Method (the seed guide's "Getting Credible Performance Numbers"): program builds, buffer
// creation and the adaptive split's first frames happen in warm-up frames outside the timed
// region; a timed frame ends when its output is in host memory (Pipeline::process waits for
// it); every figure is the median of many frames with its spread; every ratio compares figures
// measured in the same run. The output starts with the date, machine, devices and command line,
// so that it can be committed as it is.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include <CLI/CLI.hpp>

#include "bench_support.hpp"
#include "binary_dump.hpp"
#include "modes.hpp"

#include "tandem/tandem.hpp"

namespace {

using tandem::bench::BinaryDump;
using tandem::bench::describe_machine;
using tandem::bench::Machine;
using tandem::bench::Options;
using tandem::bench::run_coexec;
using tandem::bench::run_filters;
using tandem::bench::run_stream;

// ---- Command line ----------------------------------------------------------------------------

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
