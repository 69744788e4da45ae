#include "band_plan.hpp"

#include <algorithm>

namespace tandem::detail {

Range whole_groups(Range r, PixelFormat format) {
  const int g = rows_per_group(format);
  return r.empty() ? r : Range{r.lo / g * g, (r.hi + g - 1) / g * g};
}

Range unite(Range a, Range b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

bool BandPlan::made_for(std::uint64_t g, Range b, const Frame& in, const Frame& out) const {
  return generation == g && band.lo == b.lo && band.hi == b.hi && width == in.width() &&
         height == in.height() && input_format == in.format() && output_format == out.format() &&
         input_pitch == in.pitch() && output_pitch == out.pitch();
}

void BandPlan::make(const Plan& lowered, std::uint64_t g, Range b, const Frame& in,
                    const Frame& out, const BandPlace& place) {
  std::vector<Fused> kept;
  if (generation == g) {
    for (Fused& f : fused) kept.push_back({f.kernel});
  }
  *this = BandPlan{};
  fused = std::move(kept);
  fused.resize(lowered.passes.size());  // generation stays 0 (not made) until the end
  band = b;
  width = in.width();
  height = in.height();
  input_format = in.format();
  output_format = out.format();
  input_pitch = in.pitch();
  output_pitch = out.pitch();

  // Rows each value must hold for this band: walk the passes backwards, widening by halos.
  // Plane formats are held in whole row pairs (a frame of odd height has a pair's padding row).
  const std::vector<PixelFormat>& formats = lowered.value_formats;
  need.assign(formats.size(), {});
  const Range out_rows = whole_groups(band, out.format());
  need[lowered.output_value] = out_rows;
  for (auto p = lowered.passes.rbegin(); p != lowered.passes.rend(); ++p) {
    const Range r = need[p->output];
    if (r.empty()) continue;
    const Range rows{std::max(0, r.lo - p->halo), std::min(height, r.hi + p->halo)};
    for (int v : p->inputs) need[v] = whole_groups(unite(need[v], rows), formats[v]);
  }
  int held = 0, halo = 0;
  for (const Range& r : need) {
    if (r.empty()) continue;
    ++held;
    halo += std::max(0, r.rows() - band.rows());
  }
  halo_rows = held ? static_cast<double>(halo) / held : 0.0;

  // Where the device shares the host's memory, the host's frames are wrapped per frame.
  const bool zero_copy = place.device.info().host_unified_memory;
  auto image = [&](int slot, PixelFormat format, Range rows, std::size_t pitch, bool host_frame) {
    DeviceImage img{{}, format, width, rows.lo, rows.rows(), pitch};
    if (!(zero_copy && host_frame)) {
      img.buffer = place.workspace.buffer(place.device.context(), place.owner, slot,
                                          pitch * std::max(rows.rows(), 1));
    }
    return img;
  };
  images.resize(lowered.value_formats.size());
  if (!need[0].empty()) images[0] = image(kSourceSlot, in.format(), need[0], in.pitch(), true);
  band_out = image(kOutputSlot, out.format(), out_rows, out.pitch(), true);
  for (const Pass& p : lowered.passes) {
    const Range r = need[p.output];
    if (r.empty()) continue;
    const bool writes_band =
        p.output == lowered.output_value && r.lo == out_rows.lo && r.hi == out_rows.hi;
    direct = direct || writes_band;
    // Intermediates share the frame's pitch so that copying the result out is one copy.
    images[p.output] = writes_band
                           ? band_out
                           : image(p.output, p.format, r,
                                   padded_pitch(width, p.format, place.row_alignment), false);
  }
  generation = g;
}

}  // namespace tandem::detail
