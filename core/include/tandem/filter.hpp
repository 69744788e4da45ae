#pragma once
// The filter interface and registry. A filter is one filters/X.cpp (parameter table, host
// reference, kernel binding), one kernels/X.cl, and one TANDEM_REGISTER_FILTER line; a program
// adds its own at run time through tandem/user_filter.hpp.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <CL/opencl.hpp>

#include "tandem/frame.hpp"
#include "tandem/params.hpp"

namespace tandem {

class Device;
class ProgramCache;
namespace detail {
class Workspace;
}

/// A frame's size in pixels.
struct Size {
  int width = 0;
  int height = 0;
  bool operator==(const Size&) const = default;
};

/// "1920x1080".
std::string to_string(Size size);

/// Rows [lo, hi) of a frame.
struct RowRange {
  int lo = 0;
  int hi = 0;
  bool empty() const { return hi <= lo; }
  int rows() const { return hi - lo; }
  bool operator==(const RowRange&) const = default;
};

/// Rows [first_row, first_row + rows) of a frame held in a device buffer; row r of the frame is
/// at byte (r - first_row) * pitch of `buffer`. Kernels take these four numbers as arguments.
struct DeviceImage {
  cl::Buffer buffer;
  PixelFormat format = PixelFormat::rgba8;
  int width = 0;
  int first_row = 0;
  int rows = 0;
  std::size_t pitch = 0;  ///< bytes
  int height = 0;         ///< rows of the whole frame

  /// Pitch in elements of the kernel's pointer type (float for rgba32f, ushort for planes
  /// deeper than 8 bits, uchar for the others): what kernels take as their pitch argument.
  int pitch_elements() const {
    return static_cast<int>(format == PixelFormat::rgba32f ? pitch / sizeof(float)
                                                           : pitch / sample_bytes(format));
  }
};

/// Sets kernel arguments index, index + 1, index + 2 to `image`'s buffer, first row and pitch
/// (in elements), the order every tandem kernel takes an image in; returns index + 3.
inline cl_uint set_image_args(cl::Kernel& kernel, cl_uint index, const DeviceImage& image) {
  kernel.setArg(index, image.buffer);
  kernel.setArg(index + 1, image.first_row);
  kernel.setArg(index + 2, image.pitch_elements());
  return index + 3;
}

/// How a filter lays its work out on a device (Halide's schedule, apart from the arithmetic).
enum class Schedule {
  automatic,  ///< tiles on GPUs, rows on every other device
  tiles,      ///< 2D work-groups over local-memory tiles with their halos, one launch a stencil
  rows,       ///< work-items along rows: sliding windows and running sums, cache-friendly on CPUs
};

/// "automatic", "tiles" or "rows".
std::string_view to_string(Schedule schedule);
/// The schedule named `name` (as to_string() writes it); throws Error for anything else.
Schedule parse_schedule(std::string_view name);

/// The point-wise chain the executor fused after a stencil (see Filter::fuses_epilogue()):
/// the OpenCL of its stages and of `tandem_epilogue()`, and the arguments of each stage.
struct Epilogue {
  std::vector<std::string> sources;  ///< the stages' source names
  std::string code;                  ///< generated; defines TANDEM_EPILOGUE_PARAMS and _ARGS
  std::string options;               ///< -DTANDEM_EPILOGUE=1 and the stages' defines
  std::vector<cl_float16> args;      ///< one per stage
};

/// Where and what one device computes for one band of a frame: output rows [y0, y1) of an output
/// of frame_width() x frame_height() (a filter that changes the size finds its inputs' sizes in
/// their DeviceImage).
class BandContext {
 public:
  BandContext(Device& device, detail::Workspace& workspace, ProgramCache& programs, int frame_width,
              int frame_height, int y0, int y1, std::vector<cl::Event>& events,
              Schedule schedule = Schedule::automatic, const Epilogue* epilogue = nullptr,
              bool output_to_host = false);

  Device& device() { return device_; }
  cl::CommandQueue& queue();
  int frame_width() const { return frame_width_; }
  int frame_height() const { return frame_height_; }
  int y0() const { return y0_; }
  int y1() const { return y1_; }
  /// The schedule for this device: tiles or rows, never automatic.
  Schedule schedule() const { return schedule_; }

  /// The point-wise chain fused after this stencil, or nullptr. program() builds it into every
  /// program of the band; the kernel that stores the stencil's result stores through
  /// TANDEM_STORE4_* (tandem.clh), ends its parameters with TANDEM_EPILOGUE_PARAMS and has
  /// them set by set_epilogue_args().
  const Epilogue* epilogue() const { return epilogue_; }
  /// Sets the epilogue's arguments of `kernel` from `index` on; returns the index after them.
  cl_uint set_epilogue_args(cl::Kernel& kernel, cl_uint index) const;
  /// Whether this band's output is the frame the host reads, on a device whose compiler has
  /// non-temporal stores (PoCL's CPU devices): a kernel that writes whole cache lines of it may
  /// build with -DTANDEM_STREAM_STORES=1 and store them through TANDEM_STREAM_STORE16
  /// (tandem.clh). Nothing reads them back on the device.
  bool streams_output() const { return streams_output_; }

  /// The program built from the sources `sources` (embedded kernels/*.cl or registered with
  /// register_kernel_source(); concatenated, "tandem.clh" first, then the epilogue's, if any)
  /// with `options`, for this device; from the in-memory or on-disk cache when possible.
  /// `generated` is appended last (the executor's fused kernels).
  cl::Program program(std::span<const std::string> sources, const std::string& options,
                      const std::string& generated = {});
  /// A kernel of `program`, created once per device and reused.
  cl::Kernel kernel(const cl::Program& program, const std::string& name);
  /// A scratch image for `rows` rows starting at frame row `first_row`; `slot` tells apart the
  /// scratch images one filter needs at once. Kept between frames.
  DeviceImage scratch(const void* owner, int slot, PixelFormat format, int first_row, int rows);
  /// A read-only buffer holding `bytes` of `data` (a filter's table: lut3d's), copied to the
  /// device once and kept between frames; `version` tells tables apart (a new table, a new
  /// version), as an owner's address may be reused.
  cl::Buffer constant(const void* owner, int slot, const void* data, std::size_t bytes,
                      std::uint64_t version);
  /// Enqueues `kernel` over (groups of `x_items` along rows, `rows`) and records its event.
  void enqueue(cl::Kernel& kernel, std::size_t x_items, std::size_t rows,
               const std::string& what);
  /// Enqueues `kernel` over `global` in work-groups of `local` (a tiled schedule's, which its
  /// kernel states with reqd_work_group_size) and records its event.
  void enqueue(cl::Kernel& kernel, const cl::NDRange& global, const cl::NDRange& local,
               const std::string& what);
  /// The work-group size enqueue() uses for `x_items` along rows (NullRange: the driver's).
  cl::NDRange local_size(std::size_t x_items) const;

 private:
  Device& device_;
  detail::Workspace& workspace_;
  ProgramCache& programs_;
  int frame_width_, frame_height_, y0_, y1_;
  std::vector<cl::Event>& events_;
  Schedule schedule_;
  const Epilogue* epilogue_;
  bool streams_output_;
};

/// One step of a fused point-wise kernel: an OpenCL function from an embedded or registered
/// source,
///   float4 FUNCTION(float4 px, float16 p)              (one input)
///   float4 FUNCTION(float4 a, float4 b, float16 p)     (two inputs)
/// where pixels are normalised (8-bit values / 255, float values as stored) and p holds args.
/// A stage with an empty function is the identity (split): the executor passes its input on
/// without running anything.
struct PointwiseStage {
  std::string source;    ///< source name, "saturation.cl"
  std::string function;  ///< "tandem_saturation"
  std::vector<float> args;  ///< at most 16
  std::vector<std::string> defines;  ///< extra -D options this stage needs
  /// For a filter that needs frame statistics (one input):
  ///   float4 STATS_FUNCTION(float4 px, float16 p, float* l)
  /// returning what FUNCTION returns for the pixel and leaving in *l the linear luminance L of
  /// it, the statistics' sample: one function, so that what both need of the pixel is computed
  /// once. The kernel calls it in FUNCTION's place. The executor reduces ln(1e-4 + L) and L
  /// (FrameStats) inside the stage's own kernel, which reads the frame anyway, also where the
  /// stage runs in a fused chain.
  std::string stats_function;
  /// Optional, run after FUNCTION (or STATS_FUNCTION) on each of a work-item's four pixels:
  ///   float16 GROUP_FUNCTION(float16 px, float16 p)
  /// on the four at once (pixel i in lanes 4i..4i+3), its result the stage's. Pixels past the
  /// frame's width hold arbitrary values (their results are not stored); a stage with 8-bit
  /// results is quantised after GROUP_FUNCTION, not between the two. On CPUs, where PoCL
  /// vectorises only a work-item's own vectors, arithmetic on the four at once is cheaper than
  /// pixel by pixel: tonemap runs its curves and the sRGB encoding there.
  std::string group_function;
};

/// A point-wise filter's arithmetic where it is one on Y'CbCr codes: each plane's codes scaled
/// about a centre and moved, c' = (c - centre) * scale + centre + offset, rounded half up and
/// clamped to the codes. The centre is 0 for Y' and the zero of Cb and Cr (128 at 8 bits);
/// offsets are in 8-bit code steps (times 4 for 10-bit codes).
struct PlaneMap {
  float luma_scale = 1;
  float luma_offset = 0;
  float chroma_scale = 1;
  float chroma_offset = 0;
};

/// `map` on every code of `input`, a frame of a plane format, into `output` (of its size and
/// format): the host reference of plane maps, in the kernels' float arithmetic.
void apply_plane_map(const PlaneMap& map, const Frame& input, Frame& output);

/// Where a frame lies in its video: what filters that change over time (fade) take.
struct FrameTime {
  std::int64_t index = 0;  ///< from 0, in presentation order
  double seconds = 0;      ///< from the video's start
};

/// Statistics of a whole frame, for filters that adapt to the picture (tonemap).
struct FrameStats {
  double log_average = 0;  ///< exp(mean(ln(1e-4 + L))) of linear luminance L
  double maximum = 0;      ///< largest L
};

/// A configured filter: parameters applied, ready to run on bands or on the host.
class Filter {
 public:
  virtual ~Filter() = default;

  /// Output pixel format given the input formats; throws Error for unsupported inputs.
  virtual PixelFormat output_format(std::span<const PixelFormat> inputs) const;
  /// True when the filter needs statistics of the whole frame (tonemap's log-average); such a
  /// filter is point-wise with one input and its stage names a stats_function. The executor
  /// reduces each band's rows in the stage's kernel, combines the bands and calls
  /// set_frame_stats(): a still image gets its own statistics (a pre-pass), a video the
  /// previous frames' statistics smoothed over time, so the picture does not flicker and no
  /// frame waits for its own reduction.
  virtual bool needs_frame_stats() const { return false; }
  /// The statistics the next frame uses.
  virtual void set_frame_stats(const FrameStats& stats) { (void)stats; }
  /// True for a point-wise filter whose stage arguments follow the frame's time (fade): the
  /// executor calls set_frame_time() before each frame's commands are enqueued, and runs it in a
  /// point-wise kernel of its own or a chain's (never a stencil's epilogue, whose arguments are
  /// bound once).
  virtual bool needs_frame_time() const { return false; }
  /// The time of the frame enqueued next.
  virtual void set_frame_time(const FrameTime& time) { (void)time; }
  /// What the stage's stats_function and the combination compute, over a whole host frame.
  virtual FrameStats reference_stats(const Frame& input) const;
  /// Rows of context needed above and below each output row.
  virtual int halo() const { return 0; }
  /// The output's size for inputs of sizes `inputs`. The default keeps the first input's size
  /// and throws Error naming the sizes when another input's differs; a filter that changes the
  /// size (scale, crop, pad, transpose) throws Error naming the sizes when it cannot make one.
  virtual Size output_size(std::span<const Size> inputs) const;
  /// The rows of input `input`, of size `in`, that output rows `rows` of an output of size
  /// `out` read, within [0, in.height): the band executor walks a band back through every node
  /// with it. The default: `rows` widened by halo() above and below.
  virtual RowRange input_rows(RowRange rows, int input, Size in, Size out) const;
  /// True for a stencil whose enqueue() and reference() also take frames of a plane format
  /// (4:2:0 Y'CbCr row pairs, see Frame::plane_row()) as they are, each plane filtered on its
  /// own, and give the same format. A graph of such filters and plane_map()s works on video's
  /// planes without converting them to the working format (PipelineOptions::planes).
  virtual bool works_on_planes() const { return false; }
  /// For a point-wise filter whose arithmetic on codes of `encoding` is a PlaneMap: that map
  /// (saturation is a chroma scale where its luma weights are the matrix's). Nothing otherwise.
  virtual std::optional<PlaneMap> plane_map(const YuvEncoding& encoding) const {
    (void)encoding;
    return std::nullopt;
  }
  /// Point-wise filters return their stage; stencils return nothing and implement enqueue().
  virtual const PointwiseStage* pointwise() const { return nullptr; }
  /// True when enqueue() runs BandContext::epilogue(): the executor may then fuse the
  /// point-wise chain reading this stencil's result into the stencil's last kernel.
  virtual bool fuses_epilogue() const { return false; }
  /// Enqueues this filter for output rows [ctx.y0(), ctx.y1()) into `output`.
  virtual void enqueue(BandContext& ctx, std::span<const DeviceImage> inputs,
                       const DeviceImage& output) const;
  /// The host reference (plain C++, TBB-parallel) over whole frames.
  virtual void reference(std::span<const Frame* const> inputs, Frame& output) const = 0;
};

/// A registered filter: its name, table, pads and factory.
struct FilterSpec {
  std::string name;
  std::string help;
  std::vector<ParamSpec> params;
  int inputs = 1;
  int outputs = 1;
  std::function<std::unique_ptr<Filter>(const Params&)> make;
  /// Where the number of inputs follows the parameters (overlay: one with a file, else two):
  /// that number, at most `inputs`.
  std::function<int(const Params&)> inputs_for;

  /// The inputs a node of this filter with `params` takes.
  int input_count(const Params& params) const { return inputs_for ? inputs_for(params) : inputs; }
};

/// All registered filters by name.
class FilterRegistry {
 public:
  static FilterRegistry& instance();
  /// Adds a filter; throws Error if the name is taken.
  void add(FilterSpec spec);
  /// nullptr when there is no such filter.
  const FilterSpec* find(std::string_view name) const;
  /// Throws Error naming the closest known filter when there is no such filter.
  const FilterSpec& get(std::string_view name) const;
  std::vector<const FilterSpec*> all() const;
  /// The registered name closest to `name` by edit distance, empty when none is close.
  std::string closest(std::string_view name) const;

 private:
  std::map<std::string, FilterSpec, std::less<>> specs_;
};

namespace detail {
struct FilterRegistration {
  explicit FilterRegistration(FilterSpec (*describe)());
};
}  // namespace detail

}  // namespace tandem

/// Registers the FilterSpec returned by `describe` (a function) when the library loads.
#define TANDEM_REGISTER_FILTER(describe)                                                 \
  [[maybe_unused]] static const ::tandem::detail::FilterRegistration tandem_registration_## \
      describe{describe}
