#pragma once
// A run of the tandem command line: its options, and what its image and video runs share: the
// signals that stop them, the one wall time they state, their summary and their report.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tandem/image_io.hpp"
#include "tandem/tandem.hpp"
#ifdef TANDEM_HAVE_VIDEO
#include "tandem/video_segments.hpp"
#endif

namespace tandem::cli {

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
  std::string segment;  // "K/N": segment K of N, cut at the input's key frames
};

// Ctrl-C, SIGTERM (kill, timeout) and SIGHUP (a closed terminal) stop a run cleanly: the frames
// on the devices finish, the output is removed (or kept playable with --keep-partial), temporary
// files go, and the exit code is 128 + the signal's number. Set while a StopOnSignals lives.
extern std::atomic<bool> g_interrupted;

class StopOnSignals {
 public:
  StopOnSignals();
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

  /// "SIGTERM" for the signal that stopped the run.
  static std::string name();
  static int exit_code();
};

/// Milliseconds since the run began (run() starts the clock): the one wall time a run states,
/// in its summary and its report, is from there to its output in place.
double run_ms();

void print_summary(const RunReport& report, const std::string& what, double wall_ms);

/// The run report: what ran (input, output, graph, the devices asked for) and the pipeline's
/// report, whose "wall_ms" becomes the run's (`wall_ms`, as the summary states it) and its own
/// time with frames on the devices "devices_wall_ms".
nlohmann::ordered_json report_json(const RunOptions& o, const Pipeline& pipeline, double wall_ms);

/// Puts the report into place once the output is (the report's file was made at the start, so
/// an unwritable place fails before any work); should writing it fail (a full disk), the output
/// is removed: a run leaves both or neither.
void finish_report(AtomicFile& report, const nlohmann::ordered_json& json,
                   const std::string& output);

/// The pipeline settings the command line chose (and its extra OpenCL build options).
PipelineOptions pipeline_options(const RunOptions& o);

/// Runs `o`: an image, a video, or a video's frames to images (video_run.cpp); the exit code.
int run(const RunOptions& o);

#ifdef TANDEM_HAVE_VIDEO
/// One segment of a video run, as tandem-mpi hands it to a rank: the input's key frames (for
/// the warm-up of graphs with temporal state), the segment, and what to call as frames are
/// written (the number so far) instead of showing progress and a summary.
struct SegmentRun {
  const KeyFrameIndex* index = nullptr;
  VideoSegment segment;
  std::function<void(std::int64_t frames)> on_frames;
};

/// tandem concat's options.
struct ConcatOptions {
  std::vector<std::string> parts;
  std::string output;
  std::string streams_from;
  bool overwrite = false;
  bool no_audio = false, no_subtitles = false, no_data = false;
};

/// Joins parts made with --segment (concat_run.cpp); the exit code.
int run_concat(const ConcatOptions& c);

/// A video into a video; with `part`, or o.segment, one segment of it into a part that holds
/// the video alone (tandem concat joins the parts).
int run_video(const RunOptions& o, AtomicFile* report, const SegmentRun* part = nullptr);
int run_video_to_images(const RunOptions& o, AtomicFile* report);
#endif

}  // namespace tandem::cli
