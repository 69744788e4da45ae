#pragma once
// Shared helpers of the test suites: random frames, comparisons, and running a graph on one
// chosen device.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tandem/tandem.hpp"

namespace tandem::test {

/// Ids ("0.0", ...) of every OpenCL device present; the suites run each kernel on each.
std::vector<std::string> device_ids();

/// A frame of uniformly random pixels; float frames hold values in [0, scale).
Frame random_frame(int width, int height, PixelFormat format, std::uint32_t seed,
                   float scale = 1.0f, std::size_t row_alignment = 256);

/// Largest absolute difference of any channel (in 8-bit steps for rgba8, raw for float).
double max_difference(const Frame& a, const Frame& b);
/// Number of channel values that differ by more than `tolerance`.
std::size_t count_differences(const Frame& a, const Frame& b, double tolerance);

/// Runs `graph` on `input` with the devices of `devices` and split policy `split`.
Frame run_graph(const std::string& graph, const Frame& input, const std::string& devices,
                const std::string& split = "adaptive", bool fuse = true);

/// The host reference of a single-filter, single-input graph node.
Frame run_reference(const std::string& graph, const Frame& input);

/// Awkward sizes every kernel is checked on.
struct Size {
  int width, height;
};
inline const std::vector<Size> kAwkwardSizes = {{1, 1}, {3, 7}, {64, 64}, {1921, 1081}};

/// The message of the tandem::Error `f` throws, or "(no error)".
std::string error_of(const std::function<void()>& f);

}  // namespace tandem::test
