#pragma once
// The lowering of a graph into passes over a band: which filters run in which kernel. A pass
// is a stencil (with the point-wise chain after it as its epilogue, where the stencil can run
// one) or a fused chain of point-wise filters; values are numbered, 0 the source frame.
#include <memory>
#include <string>
#include <vector>

#include <CL/opencl.hpp>

#include "tandem/filter.hpp"
#include "tandem/graph.hpp"

namespace tandem::detail {

// Point-wise filters fused into one kernel at most: compilers take super-linear time in the
// length of one kernel (PoCL: 50 stages 10 s, 200 stages 81 s), and a longer chain gains
// nothing more from fusion than its memory traffic once per 16 stages.
constexpr std::size_t kMaxFusedStages = 16;

// Work-items of a work-group of a fused kernel that reduces frame statistics, at most.
constexpr std::size_t kMaxStatsGroup = 64;

/// The work-group size of such a kernel over rows of `x_items` work-items: the largest divisor
/// of `x_items` up to kMaxStatsGroup, so that every work-item has pixels (no idle lanes to
/// branch around) and the reduction's order follows from the frame's width alone.
std::size_t stats_group(std::size_t x_items);

// One pass over a band: a stencil filter, or a fused chain of point-wise filters.
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
  // The stage whose input's frame statistics the pass's fused kernel gathers (-1: none).
  int stats_stage = -1;
  std::string generated;  // the fused kernel's source
  std::vector<std::string> sources;
  std::string options;
  // A stencil with point-wise stages after it (filters[1..]): they run in its last kernel.
  Epilogue epilogue;

  bool has_epilogue() const { return !pointwise && filters.size() > 1; }
  Filter* stats_filter() const { return stats_stage < 0 ? nullptr : filters[stats_stage]; }
};

// A graph lowered for one input format.
struct Plan {
  std::vector<std::unique_ptr<Filter>> filters;  // per graph node
  std::vector<Pass> passes;                      // in the order they run
  std::vector<PixelFormat> value_formats;        // value 0 is the source
  int output_value = 0;
};

/// Lowers `graph` (validated for `input`) into passes; `fuse` false keeps every filter a pass
/// of its own.
Plan lower(const Graph& graph, PixelFormat input, bool fuse);

/// A point-wise stage's arguments as its kernel takes them.
cl_float16 stage_args(const PointwiseStage& stage);

}  // namespace tandem::detail
