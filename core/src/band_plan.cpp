#include "band_plan.hpp"

#include <algorithm>

#include "tandem/error.hpp"

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
  return generation == g && band == b && input_size == Size{in.width(), in.height()} &&
         output_size == Size{out.width(), out.height()} && input_format == in.format() &&
         output_format == out.format() && input_pitch == in.pitch() && output_pitch == out.pitch();
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
  input_size = {in.width(), in.height()};
  output_size = {out.width(), out.height()};
  input_format = in.format();
  output_format = out.format();
  input_pitch = in.pitch();
  output_pitch = out.pitch();

  // Each value's size, walking the passes forwards: a pass's filter sizes its output (its
  // epilogue or a fused chain's stages keep the size).
  const std::vector<PixelFormat>& formats = lowered.value_formats;
  sizes.assign(formats.size(), input_size);
  for (const Pass& p : lowered.passes) {
    std::vector<Size> in;
    for (int v : p.inputs) in.push_back(sizes[v]);
    sizes[p.output] = p.pointwise ? in.front() : p.filters.front()->output_size(in);
  }
  if (!(sizes[lowered.output_value] == output_size)) {
    throw Error("the output frame is " + to_string(output_size) + " where the graph makes " +
                to_string(sizes[lowered.output_value]));
  }

  // Rows each value must hold for this band: walk the passes backwards through each filter's
  // rows (a stencil's halo, a size change's mapping). Plane formats are held in whole row pairs
  // (a frame of odd height has a pair's padding row).
  need.assign(formats.size(), {});
  own.assign(formats.size(), {});
  const Range out_rows = whole_groups(band, out.format());
  need[lowered.output_value] = out_rows;
  for (auto p = lowered.passes.rbegin(); p != lowered.passes.rend(); ++p) {
    const Size out_size = sizes[p->output];
    if (p->stats_stage >= 0) {
      // The rows of a value of another height that fall to this band in proportion: the
      // bands' shares tile the value, so each row is counted once.
      auto share = [&](int row) {
        return static_cast<int>(static_cast<long long>(row) * out_size.height / output_size.height);
      };
      own[p->output] = {share(band.lo), share(band.hi)};
      need[p->output] = whole_groups(unite(need[p->output], own[p->output]), formats[p->output]);
    }
    const Range r = need[p->output];
    if (r.empty()) continue;
    const Range clamped{r.lo, std::min(r.hi, out_size.height)};
    for (std::size_t i = 0; i < p->inputs.size(); ++i) {
      const int v = p->inputs[i];
      // A fused chain reads its inputs' rows as they are; a stencil (its epilogue's stages
      // have no input of their own) through its filter.
      const Range rows = p->pointwise ? clamped
                                      : p->filters.front()->input_rows(clamped, static_cast<int>(i),
                                                                       sizes[v], out_size);
      need[v] = whole_groups(unite(need[v], rows), formats[v]);
    }
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
  auto image = [&](int slot, PixelFormat format, Size size, Range rows, std::size_t pitch,
                   bool host_frame) {
    DeviceImage img{{}, format, size.width, rows.lo, rows.rows(), pitch, size.height};
    if (!(zero_copy && host_frame)) {
      img.buffer = place.workspace.buffer(place.device.context(), place.owner, slot,
                                          pitch * std::max(rows.rows(), 1));
    }
    return img;
  };
  // A value this band needs no rows of keeps its format and size (a filter may ask them).
  images.assign(formats.size(), {});
  for (std::size_t v = 0; v < formats.size(); ++v) {
    images[v] = {{}, formats[v], sizes[v].width, 0, 0, 0, sizes[v].height};
  }
  if (!need[0].empty())
    images[0] = image(kSourceSlot, in.format(), input_size, need[0], in.pitch(), true);
  band_out = image(kOutputSlot, out.format(), output_size, out_rows, out.pitch(), true);
  for (const Pass& p : lowered.passes) {
    const Range r = need[p.output];
    if (r.empty()) continue;
    const bool writes_band =
        p.output == lowered.output_value && r.lo == out_rows.lo && r.hi == out_rows.hi;
    direct = direct || writes_band;
    // Intermediates share the frame's pitch so that copying the result out is one copy.
    images[p.output] =
        writes_band
            ? band_out
            : image(p.output, p.format, sizes[p.output], r,
                    padded_pitch(sizes[p.output].width, p.format, place.row_alignment), false);
  }
  generation = g;
}

}  // namespace tandem::detail
