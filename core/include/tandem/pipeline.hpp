#pragma once
// Runs a graph on frames, every frame cut into one band of rows per device: each device runs
// the whole graph on its band (with the halo rows the graph needs) and writes its own
// sub-buffer of the output; all queues are flushed, then the host waits once per frame. For
// streams, devices may instead take whole frames each (PipelineOptions::split).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tandem/device.hpp"
#include "tandem/frame.hpp"
#include "tandem/graph.hpp"
#include "tandem/split_policy.hpp"

namespace tandem {

struct PipelineOptions {
  /// How the devices share the work:
  ///  - "auto": bands of each frame ("adaptive") while frames come one at a time; whole frames
  ///    per device ("frames") from the first frame submit()ted while another is on the devices,
  ///    where throughput matters more than one frame's latency. One device: bands.
  ///  - "frames": each frame whole to one device, the one predicted to finish it first from what
  ///    its recent frames took (at first, with "auto", from its bands); frames still complete in
  ///    order. A device slower than waiting for the best one takes none (it is measured again now
  ///    and then, within 1% of the time), and every device takes frames only while the time
  ///    between frames leaving beats the best device alone by 3% (both measured once every
  ///    device is, and again now and then within 1% of the time).
  ///  - "bands" (= "adaptive"), "static:F1,F2,...", "single": bands by that split policy (see
  ///    make_split_policy).
  ///  - "chunks:N": a shared queue of N-row chunks that each device takes from as it finishes
  ///    (EngineCL's dynamic scheme; devices are fed from one host thread each).
  std::string split = "auto";
  /// Fuse chains of point-wise filters into one kernel (false runs each as its own pass; the
  /// output is the same).
  bool fuse = true;
  /// Let a graph work on the Y'CbCr planes of frames of a 4:2:0 plane format as they are, where
  /// every filter can and the output is of the input's format: gaussian blurs each plane (the 4:2:0
  /// chroma planes with half the sigma), saturation scales Cb and Cr (BT.709 only, whose luma
  /// weights are its own). No conversion to RGBA and back, and a third of the bytes filtered;
  /// the pictures differ from the RGBA way's by rounding, and where colours leave the R'G'B'
  /// gamut (which the RGBA way clips). false always converts to the working format first.
  bool planes = true;
  /// Remember learned split ratios in the cache directory and start from them next time.
  bool persist_split = true;
  /// How stencils run on each device (Schedule::automatic: tiles on GPUs, rows elsewhere).
  /// Every schedule gives the same output; forcing one is for tests and benchmarks.
  Schedule schedule = Schedule::automatic;
  /// Frames on the devices at once through submit() (1..8). Three let the upload of a frame
  /// queue behind the one before while the frame before that downloads, so that the copies in
  /// both directions and the kernels never wait for the host; two leave each copy waiting for
  /// the host's next submit(). Each is a set of device buffers per device. With whole frames,
  /// this many per device (Pipeline::capacity()).
  int frames_on_devices = 3;
};

/// What one device did over a run.
struct DeviceReport {
  std::string id;
  std::string name;
  DeviceType type = DeviceType::other;
  double share = 0;    ///< mean fraction of rows over the frames run
  double busy_ms = 0;  ///< total busy time (kernels and its own transfers)
  double upload_ms = 0;    ///< of which host-to-device copies (0 where memory is shared)
  double kernel_ms = 0;    ///< of which kernels and copies between device buffers
  double download_ms = 0;  ///< of which device-to-host copies (mapping where memory is shared)
  /// Bands run one frame at a time whose fixed part was measured (BandTiming::fixed_ms), and
  /// the total of those parts: the host's time before its enqueue, the wait to start, gaps
  /// between commands and halo rows.
  int fixed_bands = 0;
  double fixed_ms = 0;
  bool failed = false;
};

/// What a run did: per-device shares and times, the split of every frame, fallbacks.
struct RunReport {
  int frames = 0;
  double wall_ms = 0;  ///< host time while at least one frame was on the devices
  std::vector<DeviceReport> devices;
  std::vector<std::vector<double>> split_trace;  ///< per frame, fraction of rows per device
  /// The split the policy has learned, without the probe shares a frame's split may carry: what
  /// a run remembers for the next one (empty for fixed splits).
  std::vector<double> learned_split;
  std::vector<std::string> fallbacks;            ///< one line per device taken out of the split
  /// What the schedulers chose as the run went, one line each, "frame N: ..." after the frame
  /// that led to it: ways of running the wall-time guard tried, kept or left (bands), the switch
  /// to whole frames, devices measured again (whole frames).
  std::vector<std::string> decisions;
  /// "bands", or "frames" once devices took whole frames (a frame's split is then 1 for its
  /// device, and a device's share is its fraction of the frames).
  std::string scheduler = "bands";
  /// The report as a JSON object, one member per line:
  ///   "frames" (int), "wall_ms" (number),
  ///   "devices": [{"id", "name", "type" ("cpu", "gpu", ...), "share", "busy_ms", "upload_ms",
  ///                "kernel_ms", "download_ms" (numbers), "failed" (bool)}, ...] in device order,
  ///   "split_trace": [[fraction per device], ...] one array per frame,
  ///   "learned_split": [fraction per device],
  ///   "fallbacks": ["...", ...],
  ///   "scheduler": "bands" or "frames",
  ///   "decisions": ["frame N: ...", ...].
  /// Numbers have six significant digits, those that are not finite are null; bytes of names
  /// that are not UTF-8 become U+FFFD.
  /// A program that adds members parses it with any JSON library (the CLI adds "video").
  std::string to_json() const;
};

class Pipeline {
 public:
  Pipeline(DeviceSet& devices, Graph graph, PipelineOptions options = {});
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  /// Output format for frames of `input` format: the graph's, or for a plane format (yuv420p,
  /// yuv422p10, ...) that plane format again where the graph ends in its working format (rgba8,
  /// rgba32f). Throws Error if the graph refuses the input's working format.
  PixelFormat output_format(PixelFormat input) const;
  /// Output size for frames of `input`'s size (Graph::output_size(): scale, crop, pad and
  /// transpose change it). Throws Error naming the node that cannot take the size.
  Size output_size(Size input) const;
  /// A frame whose pitch suits every device of this pipeline (use it for inputs and outputs).
  Frame make_frame(int width, int height, PixelFormat format) const;
  /// Runs the graph on `input` into `output`, which must have output_size() and
  /// output_format(), or a format of the same working format (a plane format for the graph's
  /// rgba8 or rgba32f, or that working format for a plane input: the devices convert between
  /// them, with the frames' YuvEncoding; an output of planes from planes takes the input's);
  /// otherwise it is made anew in output_format(). Frames of any pitch work, aligned ones
  /// without a copy.
  void process(const Frame& input, Frame& output);

  /// Pipelining: starts `input` -> `output` on the devices and returns a ticket without
  /// waiting, so that this frame's upload overlaps the kernels of the frames before, and their
  /// downloads overlap this frame's kernels. Both frames must stay alive and untouched until
  /// wait() returns for the ticket. At most PipelineOptions::frames_on_devices frames are on
  /// the devices: one more submit() first waits for the oldest. The split of a frame learns from
  /// the frames completed before it was submitted. Filters that need frame statistics (tonemap)
  /// run frame N with the statistics of the frames up to N - capacity(), smoothed, so that a
  /// frame's output depends neither on timing nor on which device ran which frame. submit() and
  /// wait() may be called from two threads (a feeding and a draining one); process() is submit()
  /// then wait(). With whole frames, an error enqueuing a frame (a program that does not build,
  /// every device failed) is thrown by the wait() or submit() that completes the frame: on two
  /// devices or more, its device's own thread enqueues it after submit() returns.
  std::uint64_t submit(const Frame& input, Frame& output);
  /// submit() of a frame at `time` in its video, for filters that change over time (fade).
  /// Without a time, frames are numbered from 0 in the order submitted, at 25 a second
  /// (FFmpeg's default rate); process() runs a frame at 0.
  std::uint64_t submit(const Frame& input, Frame& output, const FrameTime& time);
  /// Waits until the frame of `ticket` (and every frame submitted before it) is in its output;
  /// returns at once for a completed ticket. A device that fails leaves the split and the frames
  /// on the devices are redone by the others (see RunReport::fallbacks).
  void wait(std::uint64_t ticket);

  /// Frames submit() keeps on the devices at most: PipelineOptions::frames_on_devices, times the
  /// devices where they may take whole frames. A caller streaming frames keeps this many
  /// submitted, and more to hide its own stages.
  int capacity() const;

  /// Frames of a video to run before frame N for frame N's output to be what a run from the
  /// first frame gives it: 0 for a graph without temporal state; for one whose filters need
  /// frame statistics (tonemap), enough for the running statistics to keep less than 1e-4 of
  /// where they started (their log-domain weight 0.25 a frame: 33 frames), and capacity() more,
  /// since a frame runs with the statistics of the frames capacity() before it.
  std::int64_t warm_up_frames() const;

  /// What the run did so far. Not to be read while another thread submits or waits: the
  /// pipeline updates it as frames complete (use split_of() there).
  const RunReport& report() const;
  /// The fractions of rows per device that the frame of `ticket` ran with, once it completed;
  /// empty when it has not, or when it is older than the last 64 frames. Safe from any thread.
  std::vector<double> split_of(std::uint64_t ticket) const;
  /// The passes the graph runs as on each band, once the first frame compiled them (empty
  /// before): one line per kernel launch chain, "point-wise: saturation tonemap" for a fused
  /// chain, "stencil: gaussian" for a filter with its own kernels.
  std::vector<std::string> passes() const;
  /// True once the graph compiled last works on its frames' Y'CbCr planes as they are
  /// (PipelineOptions::planes); its passes() then say "(on yuv420p planes)".
  bool on_planes() const;
  const Graph& graph() const;
  DeviceSet& devices();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tandem
