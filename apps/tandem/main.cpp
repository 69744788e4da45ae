// tandem: runs a filter graph on images and video, every frame split across the machine's OpenCL
// devices. This file reads the command line (run.cpp and video_run.cpp run it).
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "options.hpp"
#include "run.hpp"
#include "tandem/tandem.hpp"

namespace {

using tandem::cli::RunOptions;
using tandem::cli::StopOnSignals;

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
                std::string(tandem::to_string(d.type)).c_str(), d.name.c_str(), d.platform.c_str(),
                d.compute_units, human_bytes(d.global_memory).c_str(), d.base_address_alignment);
  }
  return 0;
}

int list_filters() {
  for (const tandem::FilterSpec* f : tandem::FilterRegistry::instance().all()) {
    std::printf("%s", f->name.c_str());
    if (f->inputs_for) {
      std::printf("  (up to %d inputs, by its options)", f->inputs);
    } else if (f->inputs != 1 || f->outputs != 1) {
      std::printf("  (%d input%s, %d output%s)", f->inputs, f->inputs == 1 ? "" : "s", f->outputs,
                  f->outputs == 1 ? "" : "s");
    }
    std::printf("\n    %s\n", f->help.c_str());
    for (const auto& p : f->params) {
      std::printf("    %-12s %s [%s]\n", p.name.c_str(), p.help.c_str(),
                  p.describe_range().c_str());
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "tandem: runs image filters on OpenCL, every frame split across all selected devices "
      "(CPU and GPU together) in proportion to their speed.\n\n"
      "  tandem -i in.png -o out.png -f \"saturation=1.4\"\n"
      "  tandem -i in.hdr -o out.png -f \"tonemap=op=reinhard:key=0.18\" --devices gpu\n"
      "  tandem devices          list OpenCL devices and their ids\n"
      "  tandem filters          list filters and their options\n"
#ifdef TANDEM_HAVE_VIDEO
      "  tandem -i in.mp4 -o out.mp4 -f \"gaussian=sigma=2\"\n"
      "  tandem -i in.mp4 --segment 3/8 -o part-3.mkv -f GRAPH   one segment of a video\n"
      "  tandem concat part-*.mkv -o out.mkv --streams-from in.mp4   the parts joined\n"
#endif
      "\n"
      "Graphs use FFmpeg's filtergraph syntax: filters separated by ',', options key=value "
      "separated by ':', the first option may be given by value alone.",
      "tandem"};
  app.set_version_flag("--version", tandem::version());
  RunOptions o;
  tandem::cli::add_run_options(app, o);
  auto* devices_cmd = app.add_subcommand(
      "devices", "List OpenCL devices: id, type, name, platform, compute units, memory, alignment");
  auto* filters_cmd =
      app.add_subcommand("filters", "List filters with their options, ranges and defaults");
#ifdef TANDEM_HAVE_VIDEO
  tandem::cli::ConcatOptions concat;
  auto* concat_cmd = app.add_subcommand(
      "concat",
      "Join the parts of a video made with --segment K/N, by stream copy, in the order of their "
      "timestamps:\n  tandem concat part-*.mkv -o out.mkv --streams-from in.mp4");
  concat_cmd->add_option("parts", concat.parts, "The parts, in any order")->required();
  concat_cmd->add_option("-o,--output", concat.output, "The joined video")->required();
  concat_cmd->add_option("--streams-from", concat.streams_from,
                         "The input the parts were cut from: its audio, subtitle and data "
                         "streams are copied from it, and every one of its frames must be in a "
                         "part");
  concat_cmd->add_flag("-y,--overwrite", concat.overwrite, "Overwrite the output if it exists");
  concat_cmd->add_flag("--an", concat.no_audio, "Leave the audio streams out");
  concat_cmd->add_flag("--sn", concat.no_subtitles, "Leave the subtitle streams out");
  concat_cmd->add_flag("--dn", concat.no_data, "Leave the data streams out");
#endif
  app.require_subcommand(0, 1);

  try {
    tandem::cli::check_dashes(app, argc, argv);
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
#ifdef TANDEM_HAVE_VIDEO
    if (*concat_cmd) return tandem::cli::run_concat(concat);
#endif
    return tandem::cli::run(o);
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
