// The lowering of a graph that works on video's Y'CbCr planes as they are (lower_on_planes() in
// plan.hpp): no conversion to the working format and back, every filter on codes. A stencil runs
// on each plane (Filter::works_on_planes()) with the plane maps after it as its epilogue; a chain
// of plane maps (Filter::plane_map()) runs in one generated kernel.
#include <sstream>

#include "plan.hpp"

namespace tandem::detail {
namespace {

const char* sample_type(PixelFormat f) {
  return sample_bytes(f) == 1 ? "uchar" : "ushort";
}

// tandem_plane_epilogue(): a stencil's plane maps, on 16 codes of one plane.
std::string epilogue_code(std::size_t stages) {
  std::ostringstream k;
  k << "#define TANDEM_EPILOGUE_PARAMS ";
  for (std::size_t s = 0; s < stages; ++s) k << ", float16 tandem_e" << s;
  k << "\n#define TANDEM_EPILOGUE_ARGS ";
  for (std::size_t s = 0; s < stages; ++s) k << ", tandem_e" << s;
  k << "\ninline float16 tandem_plane_epilogue(float16 v, int plane";
  for (std::size_t s = 0; s < stages; ++s) k << ", float16 p" << s;
  k << ") {\n";
  for (std::size_t s = 0; s < stages; ++s) k << "  v = tandem_plane_map(v, plane, p" << s << ");\n";
  k << "  return v;\n}\n";
  // Whether the maps leave the plane's codes alone (saturation leaves Y'), so that the
  // epilogue's arithmetic can be skipped on it.
  k << "inline bool tandem_plane_epilogue_identity(int plane";
  for (std::size_t s = 0; s < stages; ++s) k << ", float16 p" << s;
  k << ") {\n  return true";
  for (std::size_t s = 0; s < stages; ++s)
    k << " && tandem_plane_map_identity(plane, p" << s << ")";
  k << ";\n}\n";
  return k.str();
}

// A chain of plane maps: a work-item takes 16 codes of one plane, found from where they lie in
// the output's row pair (tandem_pair_sample()). The chunks past a plane's width do nothing; the
// rest of each row's padding takes the map too.
std::string chain_kernel(const Pass& pass) {
  const std::string t = sample_type(pass.format);
  std::ostringstream k;
  k << "__kernel void tandem_fused(const __global " << t << "* restrict in0, int in0_first, "
    << "int in0_pitch, __global " << t << "* restrict out, int out_first, int out_pitch, int y0, "
    << "int width";
  for (std::size_t s = 0; s < pass.filters.size(); ++s) k << ", float16 p" << s;
  k << ") {\n"
    << "  const int3 at = tandem_pair_sample((int)get_global_id(0) * 16, "
    << "y0 + 2 * (int)get_global_id(1), out_pitch);\n"
    << "  if (at.z >= (at.x ? (width + 1) / 2 : width)) return;\n"
    << "  float16 v = convert_float16(convert_int16(*(const __global " << t << "16*)(in0 + "
    << "tandem_plane_offset(at.x, at.y, in0_first, in0_pitch) + at.z)));\n";
  for (std::size_t s = 0; s < pass.filters.size(); ++s) {
    k << "  v = tandem_plane_map(v, at.x, p" << s << ");\n";
  }
  k << "  *(__global " << t << "16*)(out + tandem_plane_offset(at.x, at.y, out_first, out_pitch) "
    << "+ at.z) = convert_" << t << "16(tandem_codes16(v));\n}\n";
  return k.str();
}

// The plane maps of `filter` on the frames `formats` describe, or none.
std::optional<PlaneMap> map_of(const Filter& filter, const FrameFormats& formats) {
  if (!filter.pointwise() || filter.needs_frame_stats()) return std::nullopt;
  return filter.plane_map(formats.input_encoding);
}

}  // namespace

cl_float16 plane_stage_args(const PlaneMap& map, PixelFormat format) {
  const float step = static_cast<float>(1 << (sample_bits(format) - 8));
  cl_float16 p{};
  p.s[0] = map.luma_scale;
  p.s[1] = map.luma_offset * step;
  p.s[2] = map.chroma_scale;
  p.s[3] = map.chroma_offset * step;
  p.s[4] = 128 * step;
  p.s[5] = static_cast<float>((1 << sample_bits(format)) - 1);
  return p;
}

std::optional<Plan> lower_on_planes(const Graph& graph, const FrameFormats& formats, bool fuse) {
  const PixelFormat format = formats.input;
  // Filters on planes address 4:2:0 row pairs (tandem_plane_offset() in kernels/tandem.clh).
  if (!is_planar(format) || chroma_shift_y(format) != 1 || formats.output != format ||
      !(formats.input_encoding == formats.output_encoding)) {
    return std::nullopt;
  }
  const PixelFormat working = working_format(format);
  if (graph.validate(working) != working) return std::nullopt;
  const auto& nodes = graph.nodes();
  const std::vector<int> order = graph.topological_order();
  if (order.empty()) return std::nullopt;

  Plan plan;
  plan.formats = formats;
  plan.filters.resize(nodes.size());
  plan.value_formats.assign(1, format);
  int value = 0;      // the value the next filter reads
  PadRef previous{};  // the source
  for (int n : order) {
    // A chain: each filter reads the one before it.
    if (nodes[n].inputs.size() != 1 || !(nodes[n].inputs[0] == previous)) return std::nullopt;
    previous = {n, 0};
    plan.filters[n] = nodes[n].spec->make(nodes[n].params);
    Filter* f = plan.filters[n].get();
    const bool map = map_of(*f, formats).has_value();
    if (!map && (f->pointwise() || !f->works_on_planes())) return std::nullopt;
    const int out = static_cast<int>(plan.value_formats.size());
    plan.value_formats.push_back(format);
    if (map && fuse && !plan.passes.empty()) {
      Pass& p = plan.passes.back();
      if ((p.pointwise || p.filters.front()->fuses_epilogue()) &&
          p.filters.size() < kMaxFusedStages) {
        p.nodes.push_back(n);
        p.filters.push_back(f);
        p.stage_second.push_back(-1);
        p.stage_swapped.push_back(false);
        p.stage_formats.push_back(format);
        p.output = value = out;
        continue;
      }
    }
    Pass p;
    p.nodes = {n};
    p.filters = {f};
    p.inputs = {value};
    p.input_formats = {format};
    p.output = value = out;
    p.format = format;
    p.halo = f->halo();
    p.pointwise = map;
    p.on_planes = true;
    p.stage_second = {-1};
    p.stage_swapped = {false};
    p.stage_formats = {format};
    plan.passes.push_back(std::move(p));
  }
  if (!(graph.output() == previous)) return std::nullopt;
  plan.output_value = value;

  for (Pass& p : plan.passes) {
    if (p.pointwise) {
      p.generated = chain_kernel(p);
    } else if (p.has_epilogue()) {
      p.epilogue.options = "-DTANDEM_EPILOGUE=1";
      p.epilogue.code = epilogue_code(p.filters.size() - 1);
      for (std::size_t s = 1; s < p.filters.size(); ++s) {
        p.epilogue.args.push_back(plane_stage_args(*map_of(*p.filters[s], formats), format));
      }
    }
  }
  return plan;
}

cl_float16 stage_args(const Plan& plan, const Pass& pass, std::size_t stage) {
  const Filter& f = *pass.filters[stage];
  if (pass.on_planes) return plane_stage_args(*map_of(f, plan.formats), pass.format);
  return stage_args(*f.pointwise());
}

StageArgs stage_args(const Plan& plan) {
  StageArgs args(plan.passes.size());
  for (std::size_t pi = 0; pi < plan.passes.size(); ++pi) {
    const Pass& p = plan.passes[pi];
    if (!p.pointwise) continue;
    for (std::size_t s = 0; s < p.filters.size(); ++s) args[pi].push_back(stage_args(plan, p, s));
  }
  return args;
}

}  // namespace tandem::detail
