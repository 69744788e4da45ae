#pragma once
// The lowering of a graph into passes over a band: which filters run in which kernel. A pass
// is a stencil (with the point-wise chain after it as its epilogue, where the stencil can run
// one) or a fused chain of point-wise filters; values are numbered, 0 the source frame. Frames
// of a plane format (yuv420p, yuv422p10, ...) are converted as a fused chain loads them and back as the last one
// stores, so that filters see the working format; or, where every filter of a chain can, the
// graph works on the planes as they are (lower_on_planes(), plane_plan.cpp).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CL/opencl.hpp>

#include "tandem/device.hpp"
#include "tandem/filter.hpp"
#include "tandem/graph.hpp"

namespace tandem::detail {

// Point-wise filters fused into one kernel at most: compilers take super-linear time in the
// length of one kernel (PoCL: 50 stages 10 s, 200 stages 81 s), and a longer chain gains
// nothing more from fusion than its memory traffic once per 16 stages.
constexpr std::size_t kMaxFusedStages = 16;

// Work-items of a work-group of a fused kernel that reduces frame statistics, at most.
constexpr std::size_t kMaxStatsGroup = 64;

/// The work-group size of such a kernel over rows of `x_items` work-items on `device`: a warp
/// (32) on a device with warp shuffles (quirks.hpp) where 32 divides `x_items`, otherwise the
/// largest divisor of `x_items` up to kMaxStatsGroup. So every work-item has pixels (no idle
/// lanes to branch around) and the reduction's order follows from the frame's width and the
/// device's kind alone.
std::size_t stats_group(std::size_t x_items, const DeviceInfo& device);

// The frames a graph is lowered for: their formats, and how the plane formats' codes stand for
// colours (the conversions' coefficients are compiled into the kernels).
struct FrameFormats {
  PixelFormat input = PixelFormat::rgba8;
  PixelFormat output = PixelFormat::rgba8;
  YuvEncoding input_encoding, output_encoding;
  bool operator==(const FrameFormats&) const = default;
};

// One pass over a band: a stencil filter, or a fused chain of point-wise filters (possibly of
// none: a conversion between formats alone).
struct Pass {
  std::vector<int> nodes;
  std::vector<Filter*> filters;
  std::vector<int> inputs;        // value ids; a fused chain's first input comes first
  std::vector<int> stage_second;  // per stage: index into inputs of its second input, or -1
  // per stage: the chain's value is the stage's second operand, inputs[stage_second] its first
  // ([in]split[a][b];[a]saturation[s];[b][s]blend: the blend runs in the saturation's kernel)
  std::vector<bool> stage_swapped;
  std::vector<PixelFormat> stage_formats;  // per stage: its output format
  std::vector<PixelFormat> input_formats;
  int output = -1;
  PixelFormat format = PixelFormat::rgba8;
  int halo = 0;
  bool pointwise = false;
  // Works on Y'CbCr planes as they are (lower_on_planes()): a stencil given frames of the plane
  // format, or a chain of plane maps.
  bool on_planes = false;
  // The stage whose input's frame statistics the pass's fused kernel gathers (-1: none).
  int stats_stage = -1;
  std::string generated;  // the fused kernel's source
  std::vector<std::string> sources;
  std::string options;
  // A stencil with point-wise stages after it (filters[1..]): they run in its last kernel.
  Epilogue epilogue;

  bool has_epilogue() const { return !pointwise && filters.size() > 1; }
  // A fused chain storing a plane format: each work-item stores a row group's rows (4:2:0
  // chroma is the mean of a 2x2 block) and the kernel takes the rows and the width it ends at.
  bool stores_planes() const { return pointwise && is_planar(format) && !on_planes; }
  Filter* stats_filter() const { return stats_stage < 0 ? nullptr : filters[stats_stage]; }
};

// A graph lowered for one input and output format.
struct Plan {
  FrameFormats formats;
  std::vector<std::unique_ptr<Filter>> filters;  // per graph node
  std::vector<Pass> passes;                      // in the order they run
  std::vector<PixelFormat> value_formats;        // value 0 is the source
  int output_value = 0;
};

/// The output format for frames of `input` format: the graph's output format (validated for
/// the input's working format), or the input's plane format where the graph ends in the working
/// format it was converted to.
PixelFormat default_output_format(const Graph& graph, PixelFormat input);

/// Lowers `graph` into passes for `formats`: a plane input is converted by the first pass, a
/// plane output by the last (which the point-wise chain before it joins). `fuse` false keeps
/// every filter a pass of its own (the output is the same). With `planes`, a graph that
/// lower_on_planes() takes runs on the planes instead. Throws Error when the graph refuses the
/// input's working format or `formats.output` is neither its output format nor a plane format
/// of it.
Plan lower(const Graph& graph, const FrameFormats& formats, bool fuse, bool planes = true);

/// The passes of `graph` on frames of a plane format as they are, where its output is in the
/// input's format and encoding and it is a chain of filters that work on planes: stencils that
/// do (Filter::works_on_planes()) and point-wise filters with a plane map for the encoding.
/// Nothing otherwise (plane_plan.cpp).
std::optional<Plan> lower_on_planes(const Graph& graph, const FrameFormats& formats, bool fuse);

/// A point-wise stage's arguments as its kernel takes them.
cl_float16 stage_args(const PointwiseStage& stage);
/// A plane map's arguments for codes of `format` (tandem_plane_map() in kernels/tandem.clh).
cl_float16 plane_stage_args(const PlaneMap& map, PixelFormat format);
/// The arguments of stage `stage` of `pass` of `plan`, whichever kind of stage it is.
cl_float16 stage_args(const Plan& plan, const Pass& pass, std::size_t stage);

/// A frame's point-wise stage arguments, per pass (empty for a stencil's pass) and stage.
using StageArgs = std::vector<std::vector<cl_float16>>;
/// What the filters of `plan`'s point-wise passes hold now: taken once a frame's statistics and
/// time are handed to them, so that the devices enqueue their frames at once, each with its own.
StageArgs stage_args(const Plan& plan);

}  // namespace tandem::detail
