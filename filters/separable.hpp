#pragma once
// How gaussian and box launch their tiled schedule (kernels/separable.clh): work-groups of
// SEP_GX x SEP_GY work-items, each work-item four pixels across and SEP_VR rows down.
#include <cstddef>

#include <CL/opencl.hpp>

#include "tandem/filter.hpp"

namespace tandem::separable {

constexpr std::size_t kGroupX = 8;     // SEP_GX
constexpr std::size_t kGroupY = 16;    // SEP_GY
constexpr std::size_t kTileRows = 32;  // SEP_ROWS = SEP_GY * SEP_VR
/// The largest radius the tile serves: its 16-byte loads reach two groups of four pixels.
constexpr int kMaxRadius = 8;

inline cl::NDRange group() {
  return {kGroupX, kGroupY};
}

/// The work-items covering the band's rows of the frame, whole work-groups.
inline cl::NDRange grid(const BandContext& ctx) {
  const std::size_t groups = static_cast<std::size_t>(ctx.frame_width() + 3) / 4;
  const std::size_t rows = static_cast<std::size_t>(ctx.y1() - ctx.y0());
  return {(groups + kGroupX - 1) / kGroupX * kGroupX, (rows + kTileRows - 1) / kTileRows * kGroupY};
}

}  // namespace tandem::separable
