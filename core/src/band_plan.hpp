#pragma once
// What one device runs for one band of rows, made once for the band, the frames' size and
// formats and the lowered graph, and kept between frames: the rows each value must hold, the
// images they live in, and the fused point-wise kernels with their arguments bound. A frame sets
// only what changed since: the host frames a zero-copy device reads and writes through (new
// sub-buffers each frame) and point-wise stage arguments (tonemap's statistics).
#include <cstdint>
#include <utility>
#include <vector>

#include <CL/opencl.hpp>

#include "plan.hpp"
#include "tandem/device.hpp"
#include "tandem/filter.hpp"
#include "tandem/frame.hpp"
#include "workspace.hpp"

namespace tandem::detail {

using Range = RowRange;

// The smallest range holding both.
Range unite(Range a, Range b);
// `r` widened to whole row groups of `format` (row pairs of yuv420p); the last may pass the
// frame's last row by one.
Range whole_groups(Range r, PixelFormat format);

// Where a band plan's buffers come from: the device's workspace of one slot, under `owner`.
struct BandPlace {
  Device& device;
  Workspace& workspace;
  const void* owner;
  std::size_t row_alignment;  // of intermediates' rows
};

struct BandPlan {
  // The fused point-wise kernel of a pass.
  struct Fused {
    cl::Kernel kernel;
    std::vector<std::pair<cl_uint, int>> images;  // (first argument, value)
    cl_uint stage_arg = 0;                        // the first stage's argument
    std::vector<cl_float16> stage_args;           // as bound; empty: nothing bound yet
    cl::Buffer partial;                           // statistics partials, where it gathers them
  };

  std::uint64_t generation = 0;  // of the lowered graph it was made for; 0: none
  Range band;                    // rows of the output
  Size input_size, output_size;
  PixelFormat input_format = PixelFormat::rgba8, output_format = PixelFormat::rgba8;
  std::size_t input_pitch = 0, output_pitch = 0;
  std::vector<Size> sizes;          // per value
  std::vector<Range> need;          // per value
  // Per value: the rows this band counts in frame statistics, its share of the value's rows
  // (the band's own rows where the value has the output's height).
  std::vector<Range> own;
  double halo_rows = 0;             // rows a value holds beyond the band's, a mean over them
  std::vector<DeviceImage> images;  // per value; the source's buffer set per frame where zero-copy
  DeviceImage band_out;             // the band's rows of the output; its buffer likewise
  bool direct = false;              // the last pass writes band_out itself
  std::vector<Fused> fused;         // per pass

  bool made_for(std::uint64_t g, Range b, const Frame& in, const Frame& out) const;
  // Makes it for `band` of `in` -> `out` under `lowered` (of `generation`). Kernel objects of
  // the same generation are kept (adaptive splits move bands often); their arguments are bound
  // again.
  void make(const Plan& lowered, std::uint64_t generation, Range band, const Frame& in,
            const Frame& out, const BandPlace& place);
};

// Scratch slots of a band plan's workspace, apart from one per value.
constexpr int kSourceSlot = -1;
constexpr int kOutputSlot = -2;

}  // namespace tandem::detail
