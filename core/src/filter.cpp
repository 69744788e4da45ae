#include "tandem/filter.hpp"

#include <algorithm>
#include <cmath>

#include <tbb/parallel_for.h>

#include "kernel_sources.hpp"
#include "quirks.hpp"
#include "tandem/device.hpp"
#include "tandem/error.hpp"
#include "tandem/program_cache.hpp"
#include "workspace.hpp"

namespace tandem {
namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string device_options(const DeviceInfo& d) {
  // -w: compiler warnings are for tandem's developers, not its users, whose stderr PoCL's clang
  // would give its count of them (notes on float16 arguments for CPUs without AVX-512); a build
  // that fails still carries its log.
  std::string options = "-cl-std=CL1.2 -w";
  options += d.type == DeviceType::gpu ? " -DTANDEM_GPU=1" : " -DTANDEM_CPU=1";
  options += " -DTANDEM_VECTOR_WIDTH=" + std::to_string(std::max(1u, d.preferred_vector_width_char));
  if (detail::has_warp_shuffles(d)) options += " -DTANDEM_WARP_SHUFFLES=1";
  return options;
}

}  // namespace

// ---- Schedules ----

std::string_view to_string(Schedule schedule) {
  switch (schedule) {
    case Schedule::automatic:
      return "automatic";
    case Schedule::tiles:
      return "tiles";
    case Schedule::rows:
      return "rows";
  }
  return "automatic";
}

Schedule parse_schedule(std::string_view name) {
  for (Schedule s : {Schedule::automatic, Schedule::tiles, Schedule::rows}) {
    if (name == to_string(s)) return s;
  }
  throw Error("unknown schedule '" + std::string(name) + "': expected automatic, tiles or rows");
}

// ---- Plane maps ----

void apply_plane_map(const PlaneMap& map, const Frame& input, Frame& output) {
  const float step = static_cast<float>(1 << (sample_bits(input.format()) - 8));
  const float top = static_cast<float>((1 << sample_bits(input.format())) - 1);
  for (int plane = 0; plane < 3; ++plane) {
    const bool chroma = plane > 0;
    const float scale = chroma ? map.chroma_scale : map.luma_scale;
    const float centre = chroma ? 128 * step : 0.0f;
    const float moved = centre + (chroma ? map.chroma_offset : map.luma_offset) * step + 0.5f;
    tbb::parallel_for(0, input.plane_height(plane), [&](int y) {
      for (int x = 0; x < input.plane_width(plane); ++x) {
        const float v =
            std::floor((static_cast<float>(input.sample(plane, x, y)) - centre) * scale + moved);
        output.set_sample(plane, x, y, static_cast<int>(std::clamp(v, 0.0f, top)));
      }
    });
  }
}

// ---- Filter defaults ----

std::string to_string(Size size) {
  return std::to_string(size.width) + "x" + std::to_string(size.height);
}

PixelFormat Filter::output_format(std::span<const PixelFormat> inputs) const {
  for (auto f : inputs) {
    if (f != inputs.front()) {
      throw Error("inputs mix " + std::string(to_string(inputs.front())) + " and " +
                  std::string(to_string(f)) + " frames");
    }
  }
  return inputs.empty() ? PixelFormat::rgba8 : inputs.front();
}

Size Filter::output_size(std::span<const Size> inputs) const {
  for (const Size& s : inputs) {
    if (s != inputs.front()) {
      throw Error("inputs of different sizes, " + to_string(inputs.front()) + " and " +
                  to_string(s) + " (scale, crop or pad one of them first)");
    }
  }
  return inputs.empty() ? Size{} : inputs.front();
}

RowRange Filter::input_rows(RowRange rows, int, Size in, Size) const {
  return {std::max(0, rows.lo - halo()), std::min(in.height, rows.hi + halo())};
}

void Filter::enqueue(BandContext&, std::span<const DeviceImage>, const DeviceImage&) const {
  throw Error("this filter has no device implementation of its own (it is point-wise)");
}

FrameStats Filter::reference_stats(const Frame&) const {
  throw Error("this filter computes no frame statistics");
}

// ---- Registry ----

FilterRegistry& FilterRegistry::instance() {
  static FilterRegistry registry;
  return registry;
}

void FilterRegistry::add(FilterSpec spec) {
  if (spec.name.empty() || !spec.make) throw Error("a filter needs a name and a factory");
  if (specs_.count(spec.name)) throw Error("a filter named '" + spec.name + "' already exists");
  std::string name = spec.name;
  specs_.emplace(std::move(name), std::move(spec));
}

const FilterSpec* FilterRegistry::find(std::string_view name) const {
  auto it = specs_.find(name);
  return it == specs_.end() ? nullptr : &it->second;
}

const FilterSpec& FilterRegistry::get(std::string_view name) const {
  if (const FilterSpec* spec = find(name)) return *spec;
  std::string message = "unknown filter '" + std::string(name) + "'";
  if (const std::string close = closest(name); !close.empty()) {
    message += " (did you mean '" + close + "'?)";
  }
  throw Error(message);
}

std::string FilterRegistry::closest(std::string_view name) const {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, name.size() / 3) + 1;
  for (const auto& [known, spec] : specs_) {
    const std::size_t d = edit_distance(name, known);
    if (d < best_distance) {
      best_distance = d;
      best = known;
    }
  }
  return best;
}

std::vector<const FilterSpec*> FilterRegistry::all() const {
  std::vector<const FilterSpec*> out;
  for (const auto& [name, spec] : specs_) out.push_back(&spec);
  return out;
}

detail::FilterRegistration::FilterRegistration(FilterSpec (*describe)()) {
  FilterRegistry::instance().add(describe());
}

// ---- Band context ----

BandContext::BandContext(Device& device, detail::Workspace& workspace, ProgramCache& programs,
                         int frame_width, int frame_height, int y0, int y1,
                         std::vector<cl::Event>& events, Schedule schedule,
                         const Epilogue* epilogue, bool output_to_host)
    : device_(device),
      workspace_(workspace),
      programs_(programs),
      frame_width_(frame_width),
      frame_height_(frame_height),
      y0_(y0),
      y1_(y1),
      events_(events),
      schedule_(schedule != Schedule::automatic         ? schedule
                : device.info().type == DeviceType::gpu ? Schedule::tiles
                                                        : Schedule::rows),
      epilogue_(epilogue),
      streams_output_(output_to_host && detail::has_nontemporal_stores(device.info())) {}

cl_uint BandContext::set_epilogue_args(cl::Kernel& kernel, cl_uint index) const {
  if (epilogue_) {
    for (const cl_float16& a : epilogue_->args) kernel.setArg(index++, a);
  }
  return index;
}

cl::CommandQueue& BandContext::queue() { return device_.queue(); }

cl::Program BandContext::program(std::span<const std::string> sources,
                                 const std::string& options, const std::string& generated) {
  // Every frame asks again for the programs of its passes. The workspace keeps them under what
  // tells them apart (source names, options, the generated code, the build options added to
  // every build), a few hundred bytes to a few kilobytes: the whole text and its hash for the
  // disk cache's key, tens of kilobytes, are made once, not once a pass and frame.
  std::string key;
  for (const auto& name : sources) key += name + '\n';
  key += '\0' + options + '\0' + generated + '\0' + programs_.extra_options();
  if (epilogue_) {
    for (const auto& name : epilogue_->sources) key += '\0' + name;
    key += '\0' + epilogue_->code + '\0' + epilogue_->options;
  }
  return workspace_.program(key, [&] {
    std::string text(detail::find_kernel_source("tandem.clh").source);
    std::string what;
    auto add = [&](const std::string& name) {
      text += "\n";
      text += detail::find_kernel_source(name).source;
      what += (what.empty() ? "" : "+") + name;
    };
    std::string all_options = device_options(device_.info()) + " " + options;
    if (epilogue_) {
      for (const auto& name : epilogue_->sources) {
        if (std::find(sources.begin(), sources.end(), name) == sources.end()) add(name);
      }
      text += "\n";
      text += epilogue_->code;
      all_options += " " + epilogue_->options;
    }
    for (const auto& name : sources) add(name);
    text += "\n";
    text += generated;
    return programs_.get(device_, text, all_options, what);
  });
}

cl::Kernel BandContext::kernel(const cl::Program& program, const std::string& name) {
  return workspace_.kernel(program, name);
}

DeviceImage BandContext::scratch(const void* owner, int slot, PixelFormat format, int first_row,
                                 int rows) {
  DeviceImage image;
  image.format = format;
  image.width = frame_width_;
  image.first_row = first_row;
  image.rows = rows;
  image.pitch = padded_pitch(frame_width_, format, kMinRowAlignment);
  image.buffer = workspace_.buffer(device_.context(), owner, slot,
                                   image.pitch * static_cast<std::size_t>(std::max(rows, 1)));
  return image;
}

cl::NDRange BandContext::local_size(std::size_t x_items) const {
  // PoCL compiles a kernel anew for every work-group size, and the size it picks by itself
  // follows the band's height: with the split changing, every frame could pay a compile. A
  // work-group along one row, sized by the frame's width alone, keeps one compiled kernel.
  if (device_.info().type != DeviceType::cpu || !detail::is_pocl(device_.info())) {
    return cl::NullRange;
  }
  std::size_t lx = 1;
  for (std::size_t d = std::min<std::size_t>(x_items, 64); d > 1; --d) {
    if (x_items % d == 0) {
      lx = d;
      break;
    }
  }
  return cl::NDRange(lx, 1);
}

void BandContext::enqueue(cl::Kernel& kernel, std::size_t x_items, std::size_t rows,
                          const std::string& what) {
  if (x_items == 0 || rows == 0) return;
  enqueue(kernel, cl::NDRange(x_items, rows), local_size(x_items), what);
}

void BandContext::enqueue(cl::Kernel& kernel, const cl::NDRange& global, const cl::NDRange& local,
                          const std::string& what) {
  cl::Event event;
  try {
    device_.queue().enqueueNDRangeKernel(kernel, cl::NullRange, global, local, nullptr, &event);
  } catch (const cl::Error& e) {
    throw Error(e.err(), "clEnqueueNDRangeKernel", "running " + what + " on " +
                                                       device_.info().name);
  }
  events_.push_back(event);
}

cl::Buffer BandContext::constant(const void* owner, int slot, const void* data, std::size_t bytes,
                                 std::uint64_t version) {
  return workspace_.constant(device_.context(), owner, slot, data, bytes, version);
}

// ---- Workspace ----

cl::Buffer detail::Workspace::buffer(const cl::Context& context, const void* owner, int slot,
                                     std::size_t bytes) {
  Scratch& s = scratch_[{owner, slot}];
  if (s.bytes < bytes) {
    s.buffer = cl::Buffer(context, CL_MEM_READ_WRITE, bytes);
    s.bytes = bytes;
  }
  return s.buffer;
}

cl::Buffer detail::Workspace::constant(const cl::Context& context, const void* owner, int slot,
                                       const void* data, std::size_t bytes, std::uint64_t version) {
  Constant& c = constants_[{owner, slot}];
  if (!c.buffer() || c.version != version) {
    c.buffer = cl::Buffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                          std::max<std::size_t>(bytes, 1), const_cast<void*>(data));
    c.version = version;
  }
  return c.buffer;
}

std::uint8_t* detail::Workspace::host(const void* owner, int slot, std::size_t bytes,
                                      const HostAllocator& allocate) {
  Host& h = host_[{owner, slot}];
  if (h.bytes < bytes) {
    h.memory = allocate ? allocate(bytes) : nullptr;
    if (!h.memory) h.memory.reset(new std::uint8_t[bytes], std::default_delete<std::uint8_t[]>());
    h.bytes = bytes;
  }
  return h.memory.get();
}

cl::Program detail::Workspace::program(const std::string& key,
                                      const std::function<cl::Program()>& build) {
  auto it = programs_.find(key);
  if (it == programs_.end()) it = programs_.emplace(key, build()).first;
  return it->second;
}

cl::Kernel detail::Workspace::kernel(const cl::Program& program, const std::string& name) {
  auto key = std::make_pair(program(), name);
  auto it = kernels_.find(key);
  if (it == kernels_.end()) it = kernels_.emplace(key, cl::Kernel(program, name.c_str())).first;
  return it->second;
}

}  // namespace tandem
