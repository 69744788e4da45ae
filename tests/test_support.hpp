#pragma once
// Shared helpers of the test suites: random frames, comparisons, and running a graph on one
// chosen device.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tandem/tandem.hpp"
#include "tolerance.hpp"

namespace tandem::test {

/// Ids ("0.0", ...) of every OpenCL device present; the suites run each kernel on each.
std::vector<std::string> device_ids();

/// "device_0_1" for device id "0.1": a test name for INSTANTIATE_TEST_SUITE_P.
std::string device_test_name(const std::string& id);

/// Number of devices DeviceSet::open(spec) opens.
std::size_t device_count(const std::string& spec = "all");

/// A static split of the devices `spec` opens: `first` to the first device and the rest shared
/// evenly by the others ("single" when it opens one device). Splits are built from the number
/// of devices opened, never written for two.
std::string split_first(double first, const std::string& spec = "all");

/// A device spec ("0.0,0.1") naming two devices of one platform that share one context (NVIDIA's
/// GPUs get one each, core/src/quirks.hpp); empty when no platform has two such.
std::string same_platform_pair();

/// A frame of uniformly random pixels (plane formats: codes of their depth); float frames hold
/// values in [0, scale).
Frame random_frame(int width, int height, PixelFormat format, std::uint32_t seed,
                   float scale = 1.0f, std::size_t row_alignment = 256);

/// Largest absolute difference of any channel (in 8-bit steps for rgba8, raw for float) or
/// sample of a plane.
double max_difference(const Frame& a, const Frame& b);
/// Largest |a - b| / max(1, |b|) over the values of two rgba32f frames (NaN counts as infinite).
double max_relative_difference(const Frame& a, const Frame& b);
/// Low frequencies with a little noise: long ramps, where a rounding difference would show as a
/// step, unlike on white noise (rgba8 levels, or those / 64 in rgba32f).
Frame smooth_frame(int width, int height, PixelFormat format, std::uint32_t seed);
/// Number of channel values that differ by more than `tolerance`.
std::size_t count_differences(const Frame& a, const Frame& b, double tolerance);

/// Runs `graph` on `input` with the devices of `devices` and split policy `split`.
Frame run_graph(const std::string& graph, const Frame& input, const std::string& devices,
                const std::string& split = "adaptive", bool fuse = true);
/// Runs `graph` on `input` with the devices of `devices` and `options` (split learned by
/// an earlier run is never used: persist_split is turned off).
Frame run_graph(const std::string& graph, const Frame& input, const std::string& devices,
                PipelineOptions options);
/// The schedules a stencil can run in, forced (tests check each on every device).
inline const std::vector<Schedule> kForcedSchedules = {Schedule::tiles, Schedule::rows};

/// The host reference of a single-filter, single-input graph node.
Frame run_reference(const std::string& graph, const Frame& input);

/// Awkward sizes every kernel is checked on.
inline const std::vector<Size> kAwkwardSizes = {{1, 1}, {3, 7}, {64, 64}, {1921, 1081}};

/// The message of the tandem::Error `f` throws, or "(no error)".
std::string error_of(const std::function<void()>& f);

/// Enqueues copies of the rows of `ctx`'s band from `input` to `output` (RGBA8), one command a
/// row: what the suites' test filters that copy their input enqueue.
void enqueue_row_copies(BandContext& ctx, const DeviceImage& input, const DeviceImage& output);
/// Copies the RGBA8 pixels of `input` into `output`: those filters' host reference.
void copy_rgba8(const Frame& input, Frame& output);

/// TANDEM_CACHE_DIR pointed at a fresh directory of the process's own while it lives (built
/// programs and learned splits go there), then set back and the directory removed, a test that
/// fails early included.
class ScopedCacheDir {
 public:
  explicit ScopedCacheDir(const std::string& name);
  ~ScopedCacheDir();
  ScopedCacheDir(const ScopedCacheDir&) = delete;
  ScopedCacheDir& operator=(const ScopedCacheDir&) = delete;
  const std::filesystem::path& path() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::optional<std::string> saved_;
};

}  // namespace tandem::test
