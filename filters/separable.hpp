#pragma once
// How gaussian and box launch their tiled schedule (kernels/separable.clh): work-groups of
// SEP_GX x SEP_GY work-items, each work-item four pixels across and SEP_VR rows down.
#include <cstddef>

#include <CL/opencl.hpp>

#include "tandem/device.hpp"
#include "tandem/filter.hpp"

namespace tandem::separable {

constexpr std::size_t kGroupX = 8;     // SEP_GX
constexpr std::size_t kGroupY = 16;    // SEP_GY
constexpr std::size_t kTileRows = 32;  // SEP_ROWS = SEP_GY * SEP_VR
/// The largest radius the tile serves: its local memory holds 32 + 2 radius rows of 32 pixels'
/// horizontal sums (float4 each), 40 KB at radius 24, under the 48 KB GPUs give a work-group.
constexpr int kMaxRadius = 24;

/// Whether the tile of `radius` fits the device's local memory and work-group size.
inline bool fits(const Device& device, int radius) {
  const std::size_t tile_bytes = 4 * (kTileRows + 2 * radius) * kGroupX * 16;
  return radius <= kMaxRadius && tile_bytes <= device.info().local_memory &&
         kGroupX * kGroupY <= device.info().max_work_group_size;
}

inline cl::NDRange group() {
  return {kGroupX, kGroupY};
}

/// Binds the arguments of a stencil that runs in one launch per band (gaussian_tiled, box_tiled,
/// box_sliding): src, dst (three each, see set_image_args), the frame's width and height, the
/// band's y0 and y1, then the epilogue's.
inline void set_band_args(cl::Kernel& kernel, BandContext& ctx, const DeviceImage& in,
                          const DeviceImage& output) {
  set_image_args(kernel, 0, in);
  set_image_args(kernel, 3, output);
  kernel.setArg(6, ctx.frame_width());
  kernel.setArg(7, ctx.frame_height());
  kernel.setArg(8, ctx.y0());
  kernel.setArg(9, ctx.y1());
  ctx.set_epilogue_args(kernel, 10);
}

/// The work-items covering the band's rows of the frame, whole work-groups.
inline cl::NDRange grid(const BandContext& ctx) {
  const std::size_t groups = static_cast<std::size_t>(ctx.frame_width() + 3) / 4;
  const std::size_t rows = static_cast<std::size_t>(ctx.y1() - ctx.y0());
  return {(groups + kGroupX - 1) / kGroupX * kGroupX, (rows + kTileRows - 1) / kTileRows * kGroupY};
}

}  // namespace tandem::separable
