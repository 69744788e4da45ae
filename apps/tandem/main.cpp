// tandem: runs a filter graph on images and video, every frame split across the machine's OpenCL
// devices. This file reads the command line (run.cpp and video_run.cpp run it).
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

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
      "  tandem filters          list filters and their options\n\n"
      "Graphs use FFmpeg's filtergraph syntax: filters separated by ',', options key=value "
      "separated by ':', the first option may be given by value alone.",
      "tandem"};
  app.set_version_flag("--version", tandem::version());
  RunOptions o;
  app.add_option("-i,--input", o.input,
                 "Input image (PNG, JPEG, TIFF, BMP, Radiance .hdr, OpenEXR)");
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
  app.add_option("--codec", o.codec,
                 "Video encoder (libx264, ffv1, mpeg4, ...); default by container")
      ->group(video);
  app.add_option("--crf", o.crf, "Constant-quality factor (libx264: 0..51)")->group(video);
  app.add_option("--bitrate", o.bitrate, "Target bits per second")->group(video);
  app.add_option("--pix-fmt", o.pix_fmt, "Encoder pixel format (yuv420p, yuv444p, ...)")
      ->group(video);
  app.add_option("--frames", o.frames, "Process at most N frames")->group(video);
  app.add_option("--start", o.start, "Start at T seconds")->group(video);
  app.add_option("--duration", o.duration, "Process T seconds")->group(video);
  app.add_option("--on-error", o.on_error, "A frame that cannot be decoded: stop or skip")
      ->capture_default_str()
      ->group(video);
  app.add_option("--progress", o.progress,
                 "auto (a bar on a terminal), json (one line per update on stderr) or none")
      ->capture_default_str()
      ->group(video);
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
               "On Ctrl-C or an error, keep what was written as a playable file")
      ->group(video);
#endif
  auto* devices_cmd = app.add_subcommand(
      "devices", "List OpenCL devices: id, type, name, platform, compute units, memory, alignment");
  auto* filters_cmd =
      app.add_subcommand("filters", "List filters with their options, ranges and defaults");
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
        throw CLI::ParseError("unknown option '" + arg +
                                  "': tandem's long options take two "
                                  "dashes, as in -" +
                                  arg,
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
