#pragma once
// Filters an embedding program adds at run time. Once registered, a filter is used in graphs
// exactly like a built-in one: Graph::parse finds it, its parameter table checks values and words
// the error messages, the pipeline splits it across devices, and point-wise filters fuse with
// their neighbours.
//
// A point-wise filter is data (PointwiseFilterSpec): an OpenCL function of one pixel, a parameter
// table and a host reference. Any other filter (a stencil reading rows around each pixel) derives
// from Filter: halo(), enqueue() building its program with BandContext::program() from a source
// registered with register_kernel_source(), and reference(); it is registered as a FilterSpec.
//
// Register before pipelines are made; the registries are not guarded against other threads
// reading them at the same time.
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tandem/filter.hpp"
#include "tandem/params.hpp"
#include "tandem/pointwise.hpp"

namespace tandem {

/// Makes the OpenCL source `source` known as `name` ("vmean.cl") to PointwiseStage::source and
/// BandContext::program(), like the library's own kernels/*.cl: kernels/tandem.clh comes before
/// it in every program. Programs are cached under a hash of their whole text, so a changed
/// source is built again. Throws Error when `name` is empty or taken (built in or registered).
void register_kernel_source(std::string name, std::string source);

/// A point-wise filter as data.
struct PointwiseFilterSpec {
  std::string name;  ///< as written in graphs
  std::string help;  ///< one line
  std::vector<ParamSpec> params;
  /// OpenCL source defining `function` as
  ///   float4 FUNCTION(float4 px, float16 p)
  /// where px is the pixel (8-bit values / 255, float values as stored) and p holds args(). The
  /// sources of a fused chain share one program: prefix every name the source defines.
  std::string source;
  std::string function;
  /// The kernel's p.s0, p.s1, ... (at most 16) from the parameter values; when empty, the values
  /// in table order (a choice as its index).
  std::function<std::vector<float>(const Params&)> args;
  /// The host reference of one pixel, given the kernel's p. It runs on several threads at once.
  std::function<Pixel(Pixel px, std::span<const float> p)> reference;
};

/// Registers `spec`: its source as "NAME.cl" and the filter NAME. Throws Error when a field is
/// missing, the filter or source name is taken, or the default parameters give more than 16
/// arguments.
void register_filter(PointwiseFilterSpec spec);

/// Registers any filter (FilterRegistry::add): throws Error when the name is taken.
void register_filter(FilterSpec spec);

}  // namespace tandem
