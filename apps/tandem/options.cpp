// The options of a tandem run on the command line (options.hpp).
#include "options.hpp"

#include <string>

namespace tandem::cli {

void add_run_options(CLI::App& app, RunOptions& o) {
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
               "Y'CbCr planes as they are (gaussian, saturation under BT.709, eq with gamma=1)");
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
  app.add_option("--segment", o.segment,
                 "Process segment K (from 0) of N, cut at the input's key frames, into a part "
                 "that holds the video alone; tandem concat joins the parts")
      ->group(video);
  app.add_flag("--keep-partial", o.keep_partial,
               "On Ctrl-C or an error, keep what was written as a playable file")
      ->group(video);
#endif
}

void check_dashes(const CLI::App& app, int argc, char** argv) {
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
}

}  // namespace tandem::cli
