#include "test_support.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>

#include "quirks.hpp"

namespace tandem::test {

std::vector<std::string> device_ids() {
  std::vector<std::string> ids;
  for (const auto& d : enumerate_devices()) ids.push_back(d.id);
  return ids;
}

std::size_t device_count(const std::string& spec) {
  return select_devices(spec, enumerate_devices()).size();
}

std::string split_first(double first, const std::string& spec) {
  const std::size_t n = device_count(spec);
  if (n == 1) return "single";
  std::ostringstream split;
  split.precision(17);
  split << "static:" << first;
  for (std::size_t d = 1; d < n; ++d) split << "," << (1 - first) / static_cast<double>(n - 1);
  return split.str();
}

std::string same_platform_pair() {
  const std::vector<DeviceInfo> all = enumerate_devices();
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::size_t j = i + 1; j < all.size(); ++j) {
      if (all[i].platform_index == all[j].platform_index && !detail::wants_own_context(all[i]) &&
          !detail::wants_own_context(all[j])) {
        return all[i].id + "," + all[j].id;
      }
    }
  }
  return "";
}

Frame random_frame(int width, int height, PixelFormat format, std::uint32_t seed, float scale,
                   std::size_t row_alignment) {
  Frame f(width, height, format, row_alignment);
  std::mt19937 rng(seed);
  if (is_planar(format)) {
    for (int p = 0; p < 3; ++p) {
      for (int y = 0; y < f.plane_height(p); ++y) {
        for (int x = 0; x < f.plane_width(p); ++x) {
          f.set_sample(p, x, y, static_cast<int>(rng() >> (32 - sample_bits(format))));
        }
      }
    }
    return f;
  }
  for (int y = 0; y < height; ++y) {
    if (format == PixelFormat::rgba8) {
      std::uint8_t* row = f.row(y);
      for (int i = 0; i < 4 * width; ++i) row[i] = static_cast<std::uint8_t>(rng() >> 24);
    } else {
      std::uniform_real_distribution<float> dist(0.0f, scale);
      float* row = f.row_as<float>(y);
      for (int i = 0; i < 4 * width; ++i) row[i] = dist(rng);
    }
  }
  return f;
}

namespace {

template <typename Fn>
void for_each_value(const Frame& a, const Frame& b, Fn fn) {
  if (a.width() != b.width() || a.height() != b.height() || a.format() != b.format()) {
    throw Error("frames of different size or format compared");
  }
  if (is_planar(a.format())) {
    for (int p = 0; p < 3; ++p) {
      for (int y = 0; y < a.plane_height(p); ++y) {
        for (int x = 0; x < a.plane_width(p); ++x)
          fn(std::abs(a.sample(p, x, y) - b.sample(p, x, y)));
      }
    }
    return;
  }
  for (int y = 0; y < a.height(); ++y) {
    for (int i = 0; i < 4 * a.width(); ++i) {
      if (a.format() == PixelFormat::rgba8) {
        fn(std::abs(int(a.row(y)[i]) - int(b.row(y)[i])));
      } else {
        const float u = a.row_as<float>(y)[i];
        const float v = b.row_as<float>(y)[i];
        fn(std::isnan(u) != std::isnan(v) ? INFINITY : std::abs(double(u) - double(v)));
      }
    }
  }
}

}  // namespace

std::string device_test_name(const std::string& id) {
  std::string name = "device_" + id;
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

double max_difference(const Frame& a, const Frame& b) {
  double worst = 0;
  for_each_value(a, b, [&](double d) { worst = std::max(worst, d); });
  return worst;
}

double max_relative_difference(const Frame& a, const Frame& b) {
  double worst = 0;
  for (int y = 0; y < a.height(); ++y) {
    for (int i = 0; i < 4 * a.width(); ++i) {
      const double u = a.row_as<float>(y)[i];
      const double v = b.row_as<float>(y)[i];
      const double d = std::abs(u - v) / std::max(1.0, std::abs(v));
      worst = std::max(worst, std::isnan(d) ? INFINITY : d);
    }
  }
  return worst;
}

Frame smooth_frame(int width, int height, PixelFormat format, std::uint32_t seed) {
  Frame frame(width, height, format);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> noise(-3.0f, 3.0f);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < 4; ++c) {
        const float v =
            128.0f + 100.0f * std::sin(x / (11.0f + 5 * c)) * std::cos(y / 23.0f) + noise(rng);
        if (format == PixelFormat::rgba8) {
          frame.row(y)[4 * x + c] = static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
        } else {
          frame.row_as<float>(y)[4 * x + c] = v / 64.0f;
        }
      }
    }
  }
  return frame;
}

std::size_t count_differences(const Frame& a, const Frame& b, double tolerance) {
  std::size_t n = 0;
  for_each_value(a, b, [&](double d) { n += d > tolerance; });
  return n;
}

Frame run_graph(const std::string& graph, const Frame& input, const std::string& devices,
                const std::string& split, bool fuse) {
  PipelineOptions options;
  options.split = split;
  options.fuse = fuse;
  return run_graph(graph, input, devices, options);
}

Frame run_graph(const std::string& graph, const Frame& input, const std::string& devices,
                PipelineOptions options) {
  DeviceSet set = DeviceSet::open(devices);
  options.persist_split = false;
  Pipeline pipeline(set, Graph::parse(graph), options);
  Frame output;
  pipeline.process(input, output);
  return output;
}

Frame run_reference(const std::string& graph, const Frame& input) {
  Graph g = Graph::parse(graph);
  if (g.nodes().size() != 1) throw Error("run_reference takes a single filter");
  const GraphNode& node = g.nodes()[0];
  auto filter = node.spec->make(node.params);
  const PixelFormat format = filter->output_format(std::vector<PixelFormat>{input.format()});
  const Size size = filter->output_size(std::vector<Size>{{input.width(), input.height()}});
  Frame output(size.width, size.height, format);
  const Frame* inputs[] = {&input};
  filter->reference(inputs, output);
  return output;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

void enqueue_row_copies(BandContext& ctx, const DeviceImage& input, const DeviceImage& output) {
  const std::size_t row_bytes = static_cast<std::size_t>(ctx.frame_width()) * 4;
  for (int y = ctx.y0(); y < ctx.y1(); ++y) {
    ctx.queue().enqueueCopyBuffer(input.buffer, output.buffer, (y - input.first_row) * input.pitch,
                                  (y - output.first_row) * output.pitch, row_bytes);
  }
}

void copy_rgba8(const Frame& input, Frame& output) {
  for (int y = 0; y < output.height(); ++y) {
    std::memcpy(output.row(y), input.row(y), static_cast<std::size_t>(output.width()) * 4);
  }
}

ScopedCacheDir::ScopedCacheDir(const std::string& name)
    : dir_(std::filesystem::temp_directory_path() /
           ("tandem-" + name + "-" + std::to_string(::getpid()))) {
  std::filesystem::remove_all(dir_);
  if (const char* old = std::getenv("TANDEM_CACHE_DIR")) saved_ = old;
  ::setenv("TANDEM_CACHE_DIR", dir_.c_str(), 1);
}

ScopedCacheDir::~ScopedCacheDir() {
  if (saved_) {
    ::setenv("TANDEM_CACHE_DIR", saved_->c_str(), 1);
  } else {
    ::unsetenv("TANDEM_CACHE_DIR");
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

}  // namespace tandem::test
