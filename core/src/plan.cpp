#include "plan.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "quirks.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {
namespace {

const char* element_type(PixelFormat f) {
  return f == PixelFormat::rgba32f ? "float" : sample_bytes(f) == 2 ? "ushort" : "uchar";
}

// The coefficients of `e` for codes of `format` as the conversions in kernels/yuv.clh take
// them, an OpenCL literal. 8-bit stores take levels 0..255, deeper ones values 0..1.
std::string yuv_literal(const YuvEncoding& e, PixelFormat format) {
  double kr = 0.2126, kb = 0.0722;  // ITU-R BT.709
  if (e.matrix == YuvEncoding::Matrix::bt601) kr = 0.299, kb = 0.114;
  if (e.matrix == YuvEncoding::Matrix::bt2020) kr = 0.2627, kb = 0.0593;
  const double kg = 1 - kr - kb;
  // ITU-R BT.2100's quantisation: limited range 16..235 (Y') and 16..240 (Cb, Cr) times
  // 2^(bits - 8), full range 0..2^bits - 1.
  const double step = 1 << (sample_bits(format) - 8);
  const double top = (1 << sample_bits(format)) - 1;
  const double y_offset = e.full_range ? 0 : 16 * step;
  const double y_range = e.full_range ? top : 219 * step;
  const double c_range = e.full_range ? top : 224 * step;
  const double unit = sample_bits(format) == 8 ? 255 : 1;  // of the store's input
  const double m[16] = {y_offset,
                        1 / y_range,
                        1 / c_range,
                        2 * (1 - kr),
                        2 * kb * (1 - kb) / kg,
                        2 * kr * (1 - kr) / kg,
                        2 * (1 - kb),
                        kr,
                        kg,
                        kb,
                        c_range / unit / (2 * (1 - kb)),
                        c_range / unit / (2 * (1 - kr)),
                        y_range / unit,
                        y_offset,
                        128 * step,
                        top};
  std::ostringstream k;
  k.precision(9);
  k << "(float16)(";
  for (int i = 0; i < 16; ++i) k << (i ? ", " : "") << std::fixed << m[i] << "f";
  k << ")";
  return k.str();
}

const char* const kLanes[4] = {"s0123", "s4567", "s89ab", "scdef"};

// Code applying stages [from, end) of `pass` to `float4 c`, pixel `lane` (0-3) of the four of
// each second input v<i>, stage s with arguments <prefix><s - first>: between stages with 8-bit
// results it quantises as storing and reloading the frame would (chain4_code() does so after a
// stage's group_function). The stage gathering frame statistics runs as its stats_function,
// which also leaves its input pixel's luminance, in `stats_l` (fused_kernel() reduces the four).
void chain_code(std::ostringstream& k, const Pass& pass, std::size_t first, std::size_t from,
                std::size_t end, int lane_index, const std::string& prefix) {
  const char* lane = kLanes[lane_index];
  for (std::size_t s = from; s < end; ++s) {
    const PointwiseStage* stage = pass.filters[s]->pointwise();
    if (static_cast<int>(s) == pass.stats_stage) {
      k << "    c = " << stage->stats_function << "(c, " << prefix << s - first
        << ", &stats_sample);\n    stats_l.s" << lane_index << " = stats_sample;\n";
    } else {
      k << "    c = " << stage->function << "(";
      if (pass.stage_second[s] < 0) {
        k << "c, ";
      } else if (pass.stage_swapped[s]) {
        k << "v" << pass.stage_second[s] << "." << lane << ", c, ";
      } else {
        k << "c, v" << pass.stage_second[s] << "." << lane << ", ";
      }
      k << prefix << s - first << ");\n";
    }
    if (pass.stage_formats[s] == PixelFormat::rgba8 && s + 1 < pass.filters.size() &&
        stage->group_function.empty()) {
      k << "    c = tandem_quantize8(c);\n";
    }
  }
}

// Code applying stages [first, end of the pass) to the four pixels `v` (a float16), leaving them
// in `float16 r`: pixel by pixel (chain_code()), and after a stage with a group_function, that
// function on the four at once.
void chain4_code(std::ostringstream& k, const Pass& pass, std::size_t first, const std::string& v,
                 const std::string& indent, const std::string& prefix) {
  const std::size_t stages = pass.filters.size();
  if (first >= stages) k << indent << "r = " << v << ";\n";  // a pass that only converts
  std::string pixels = v;
  for (std::size_t from = first; from < stages;) {
    std::size_t end = from;
    while (end < stages && pass.filters[end]->pointwise()->group_function.empty()) ++end;
    const bool group = end < stages;
    if (group) ++end;
    for (int lane = 0; lane < 4; ++lane) {
      k << indent << "{\n" << indent << "  float4 c = " << pixels << "." << kLanes[lane] << ";\n";
      chain_code(k, pass, first, from, end, lane, prefix);
      k << indent << "  r." << kLanes[lane] << " = c;\n" << indent << "}\n";
    }
    if (group) {
      const std::size_t s = end - 1;
      k << indent << "r = " << pass.filters[s]->pointwise()->group_function << "(r, " << prefix
        << s - first << ");\n";
      if (pass.stage_formats[s] == PixelFormat::rgba8 && end < stages) {
        k << indent << "r = (float16)(tandem_quantize8(r.s0123), tandem_quantize8(r.s4567), "
          << "tandem_quantize8(r.s89ab), tandem_quantize8(r.scdef));\n";
      }
    }
    pixels = "r";
    from = end;
  }
}

// tandem_epilogue() for a stencil's pass: its point-wise stages on four normalised pixels (see
// TANDEM_STORE4_* in kernels/tandem.clh).
std::string epilogue_code(const Pass& pass) {
  std::ostringstream k;
  const std::size_t stages = pass.filters.size() - 1;
  k << "#define TANDEM_EPILOGUE_PARAMS ";
  for (std::size_t s = 0; s < stages; ++s) k << ", float16 tandem_e" << s;
  k << "\n#define TANDEM_EPILOGUE_ARGS ";
  for (std::size_t s = 0; s < stages; ++s) k << ", tandem_e" << s;
  k << "\ninline float16 tandem_epilogue(float16 v";
  for (std::size_t s = 0; s < stages; ++s) k << ", float16 p" << s;
  k << ") {\n  float16 r;\n";
  chain4_code(k, pass, 1, "v", "  ", "p");
  k << "  return r;\n}\n";
  return k.str();
}

// The fused point-wise kernel: four pixels a work-item. One that gathers frame statistics runs
// in work-groups along a row (stats_group()) and writes a partial per group
// (tandem_stats_group). One that stores planes (Pass::stores_planes()) runs the chain on a
// row group a work-item (two rows of 4:2:0, whose chroma covers both).
std::string fused_kernel(const Pass& pass, const FrameFormats& formats) {
  std::ostringstream k;
  const bool stats = pass.stats_stage >= 0;
  const bool planes = pass.stores_planes();
  k << "__kernel void tandem_fused(";
  for (std::size_t i = 0; i < pass.inputs.size(); ++i) {
    k << "const __global " << element_type(pass.input_formats[i]) << "* restrict in" << i
      << ", int in" << i << "_first, int in" << i << "_pitch, ";
  }
  k << "__global " << element_type(pass.format) << "* restrict out, int out_first, int out_pitch,"
    << " int y0";
  if (planes) k << ", int y_end, int x_end";
  for (std::size_t s = 0; s < pass.filters.size(); ++s) k << ", float16 p" << s;
  if (stats) k << ", int width, __global float2* restrict stats_out";
  k << ") {\n  const int x = (int)get_global_id(0) * 4;\n";
  if (stats) {
    k << "  __local float2 stats_scratch[" << kMaxStatsGroup << "];\n"
      << "  float4 stats_l;  // luminance of each pixel's input to the statistics' stage\n"
      << "  float stats_sample;\n";
  }
  // Loads the inputs' four pixels of row y, runs the chain on them, leaves them in r.
  auto row_code = [&](const char* indent) {
    for (std::size_t i = 0; i < pass.inputs.size(); ++i) {
      const PixelFormat f = pass.input_formats[i];
      const std::string in = "in" + std::to_string(i);
      k << indent << "const float16 v" << i << " = ";
      if (is_planar(f)) {
        k << "tandem_load4_planes_" << element_type(f) << "(" << in << ", " << in << "_first, "
          << in << "_pitch, x, y, " << yuv_literal(formats.input_encoding, f) << ", "
          << rows_per_group(f) << ", " << chroma_shift_x(f) << ");\n";
      } else {
        k << "tandem_load4_" << to_string(f) << "(" << in << " + (size_t)(y - " << in
          << "_first) * " << in << "_pitch, x);\n";
      }
    }
    chain4_code(k, pass, 0, "v0", indent, "p");
  };
  if (planes) {
    // A work-item's rows are a row group. The second row of a 4:2:0 frame of odd height is the
    // first again, which adds nothing new to the chroma's mean; its Y' row lands in the frame's
    // padding.
    const int g = rows_per_group(pass.format);
    k << "  const int y_top = y0 + " << g << " * (int)get_global_id(1);\n  float16 group[" << g
      << "];\n  for (int row = 0; row < " << g << "; ++row) {\n"
      << "    const int y = min(y_top + row, y_end - 1);\n    float16 r;\n";
    row_code("    ");
    k << "    group[row] = r;\n  }\n  tandem_store4_planes_" << element_type(pass.format)
      << "(out, out_first, out_pitch, x, y_top, x_end, group[0], group[" << g - 1 << "], "
      << yuv_literal(formats.output_encoding, pass.format) << ", " << g << ", "
      << chroma_shift_x(pass.format) << ");\n}\n";
    return k.str();
  }
  k << "  const int y = y0 + (int)get_global_id(1);\n  float16 r;\n";
  row_code("  ");
  k << "  tandem_store4_" << to_string(pass.format)
    << "(out + (size_t)(y - out_first) * out_pitch, x, r);\n";
  if (stats) {
    // The four pixels' (ln(1e-4 + L), L), pixels past the width left out (adding 0 and taking
    // the larger with 0 change nothing, L >= 0), in pixel order: one vector logarithm, where
    // a CPU compiler makes four scalar calls of four logarithms a pixel apart.
    k << "  const int4 stats_in = (int4)(x) + (int4)(0, 1, 2, 3) < (int4)(width);\n"
      << "  const float4 stats_log =\n"
      << "      select((float4)(0.0f), tandem_stats_log(1e-4f + stats_l), stats_in);\n"
      << "  const float4 stats_max = select((float4)(0.0f), stats_l, stats_in);\n"
      << "  const float2 stats = (float2)(stats_log.s0 + stats_log.s1 + stats_log.s2 + "
         "stats_log.s3,\n      fmax(fmax(fmax(stats_max.s0, stats_max.s1), stats_max.s2), "
         "stats_max.s3));\n"
      << "  tandem_stats_group(stats, stats_scratch, stats_out);\n";
  }
  k << "}\n";
  return k.str();
}

}  // namespace

std::size_t stats_group(std::size_t x_items, const DeviceInfo& device) {
  if (has_warp_shuffles(device) && x_items % 32 == 0) return 32;
  for (std::size_t d = std::min(x_items, kMaxStatsGroup); d > 1; --d) {
    if (x_items % d == 0) return d;
  }
  return 1;
}

cl_float16 stage_args(const PointwiseStage& stage) {
  cl_float16 p{};
  if (stage.args.size() > 16) throw Error("a point-wise stage takes at most 16 arguments");
  for (std::size_t i = 0; i < stage.args.size(); ++i) p.s[i] = stage.args[i];
  return p;
}

PixelFormat default_output_format(const Graph& graph, PixelFormat input) {
  const PixelFormat out = graph.validate(working_format(input));
  return is_planar(input) && out == working_format(input) ? input : out;
}

Plan lower(const Graph& graph, const FrameFormats& formats, bool fuse, bool planes) {
  const PixelFormat input = working_format(formats.input);
  const PixelFormat graph_output = graph.validate(input);
  if (formats.output != graph_output &&
      !(is_planar(formats.output) && working_format(formats.output) == graph_output)) {
    throw Error("the graph makes " + std::string(to_string(graph_output)) + " frames from " +
                std::string(to_string(formats.input)) + ", not " +
                std::string(to_string(formats.output)));
  }
  if (planes) {
    if (std::optional<Plan> on_planes = lower_on_planes(graph, formats, fuse)) {
      return std::move(*on_planes);
    }
  }
  Plan plan;
  plan.formats = formats;
  // Named references, not a structured binding: lambdas below capture them, which C++20
  // allows only for variables (clang 14 rejects captured bindings).
  auto& filters = plan.filters;
  auto& passes = plan.passes;
  auto& value_formats = plan.value_formats;
  int& output_value = plan.output_value;
  const auto& nodes = graph.nodes();
  // A pass converting between formats alone; point-wise filters may join it.
  auto conversion = [&](int in, int out) {
    Pass p;
    p.inputs = {in};
    p.input_formats = {value_formats[in]};
    p.output = out;
    p.format = value_formats[out];
    p.pointwise = true;
    return p;
  };
  value_formats.assign(1, formats.input);
  // The value filters read as the graph's input: the source, or its conversion (value 1).
  int source = 0;
  if (is_planar(formats.input)) {
    value_formats.push_back(input);
    source = 1;
    passes.push_back(conversion(0, 1));
  }
  std::vector<int> node_value(nodes.size(), -1);
  std::vector<std::vector<int>> node_inputs(nodes.size());
  auto value_of = [&](PadRef r) { return r.node < 0 ? source : node_value[r.node]; };
  filters.resize(nodes.size());

  const std::vector<int> order = graph.topological_order();
  for (int n : order) {
    std::vector<PixelFormat> formats;
    for (const PadRef& r : nodes[n].inputs) {
      node_inputs[n].push_back(value_of(r));
      formats.push_back(value_formats[value_of(r)]);
    }
    filters[n] = nodes[n].spec->make(nodes[n].params);
    const PointwiseStage* stage = filters[n]->pointwise();
    if (stage && stage->function.empty()) {  // identity (split): an alias of its input
      node_value[n] = node_inputs[n].at(0);
      continue;
    }
    node_value[n] = static_cast<int>(value_formats.size());
    value_formats.push_back(filters[n]->output_format(formats));
  }
  output_value = value_of(graph.output());

  std::vector<int> consumers(value_formats.size(), 0);
  for (int n : order) {
    if (node_value[n] == (node_inputs[n].empty() ? -2 : node_inputs[n][0]) &&
        filters[n]->pointwise() && filters[n]->pointwise()->function.empty()) {
      continue;
    }
    for (int v : node_inputs[n]) ++consumers[v];
  }
  ++consumers[output_value];

  std::vector<int> producer(value_formats.size(), -1);  // pass index producing each value
  if (source > 0) producer[source] = 0;
  for (int n : order) {
    Filter* f = filters[n].get();
    const PointwiseStage* stage = f->pointwise();
    if (stage && stage->function.empty()) continue;
    const std::vector<int>& in = node_inputs[n];
    const int out = node_value[n];
    const bool stats = f->needs_frame_stats();
    // Statistics are gathered in the stage's own kernel (see fused_kernel).
    if (stats && (!stage || stage->stats_function.empty() || in.size() != 1)) {
      throw Error("a filter that needs frame statistics must be point-wise with one input and "
                  "name a stats_function");
    }

    // Fuse into the pass producing the first input when nothing else reads that value: a
    // point-wise chain, or a stencil that runs the stages after it in its last kernel. A
    // two-input stage may join the chain producing its second input instead, the first then
    // read as the pass's input (`swapped`).
    auto fusable_into = [&](int chained, int other) {
      if (!stage || !fuse || producer[in[chained]] < 0 || in.size() > 2) return false;
      const Pass& p = passes[producer[in[chained]]];
      const bool after_stencil = !p.pointwise && p.filters.front()->fuses_epilogue() &&
                                 in.size() == 1 && value_formats[out] == p.format && !stats &&
                                 !f->needs_frame_time();
      // The other input must be computed before the chain runs.
      const bool other_ready = other < 0 || producer[in[other]] < producer[in[chained]];
      // One stage a pass gathers statistics.
      const bool stats_blocked = stats && p.stats_stage >= 0;
      return (p.pointwise || after_stencil) && consumers[in[chained]] == 1 &&
             in[chained] != output_value && other_ready && !stats_blocked &&
             p.filters.size() < kMaxFusedStages;
    };
    const int other_of_first = in.size() == 2 ? 1 : -1;
    const bool into_first = !in.empty() && fusable_into(0, other_of_first);
    const bool into_second = !into_first && in.size() == 2 && fusable_into(1, 0);
    if (into_first || into_second) {
      const int chained = into_first ? 0 : 1;
      const int other = into_first ? other_of_first : 0;
      Pass& p = passes[producer[in[chained]]];
      int second = -1;
      if (other >= 0) {
        auto it = std::find(p.inputs.begin(), p.inputs.end(), in[other]);
        second = static_cast<int>(it - p.inputs.begin());
        if (it == p.inputs.end()) {
          p.inputs.push_back(in[other]);
          p.input_formats.push_back(value_formats[in[other]]);
        }
      }
      if (stats) p.stats_stage = static_cast<int>(p.filters.size());
      p.nodes.push_back(n);
      p.filters.push_back(f);
      p.stage_second.push_back(second);
      p.stage_swapped.push_back(into_second);
      p.stage_formats.push_back(value_formats[out]);
      p.output = out;
      p.format = value_formats[out];
      producer[out] = producer[in[chained]];
      continue;
    }
    Pass p;
    p.nodes = {n};
    p.filters = {f};
    p.inputs = in;
    for (int v : in) p.input_formats.push_back(value_formats[v]);
    p.output = out;
    p.format = value_formats[out];
    p.halo = f->halo();
    p.pointwise = stage != nullptr;
    p.stats_stage = stats ? 0 : -1;
    if (p.pointwise && (in.empty() || in.size() > 2)) {
      throw Error("a point-wise filter takes one or two inputs");
    }
    p.stage_second = {p.pointwise && in.size() == 2 ? 1 : -1};
    p.stage_swapped = {false};
    p.stage_formats = {p.format};
    producer[out] = static_cast<int>(passes.size());
    passes.push_back(std::move(p));
  }

  if (is_planar(formats.output)) {
    // The chain producing the output stores the planes, where nothing else reads its value
    // and it gathers no statistics (a partial a row; the planes' store covers two). Storing
    // quantises as storing the working format would, so fused or not, the output is the same.
    const int last = producer[output_value];
    if (fuse && last >= 0 && passes[last].pointwise && passes[last].output == output_value &&
        consumers[output_value] == 1 && passes[last].stats_stage < 0) {
      passes[last].format = formats.output;
      value_formats[output_value] = formats.output;
    } else {
      value_formats.push_back(formats.output);
      passes.push_back(conversion(output_value, static_cast<int>(value_formats.size()) - 1));
      output_value = static_cast<int>(value_formats.size()) - 1;
    }
  }

  for (Pass& p : passes) {
    if (!p.pointwise && !p.has_epilogue()) continue;
    std::vector<std::string> sources;
    std::set<std::string> defines;
    for (std::size_t s = p.pointwise ? 0 : 1; s < p.filters.size(); ++s) {
      const PointwiseStage* stage = p.filters[s]->pointwise();
      if (std::find(sources.begin(), sources.end(), stage->source) == sources.end()) {
        sources.push_back(stage->source);
      }
      defines.insert(stage->defines.begin(), stage->defines.end());
    }
    std::string options = p.pointwise ? "" : "-DTANDEM_EPILOGUE=1";
    for (const auto& d : defines) options += (options.empty() ? "" : " ") + d;
    if (p.pointwise) {
      const bool planes = is_planar(p.format) ||
                          std::any_of(p.input_formats.begin(), p.input_formats.end(), is_planar);
      if (planes) sources.insert(sources.begin(), "yuv.clh");
      p.sources = std::move(sources);
      p.options = std::move(options);
      p.generated = fused_kernel(p, formats);
    } else {
      p.epilogue.sources = std::move(sources);
      p.epilogue.options = std::move(options);
      p.epilogue.code = epilogue_code(p);
      for (std::size_t s = 1; s < p.filters.size(); ++s) {
        p.epilogue.args.push_back(stage_args(*p.filters[s]->pointwise()));
      }
    }
  }
  return plan;
}

}  // namespace tandem::detail
