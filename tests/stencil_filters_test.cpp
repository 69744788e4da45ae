// The stencil filters (gaussian, box, bilateral, unsharp) against their host references on every device,
// on awkward sizes, both pixel formats, radii larger than the image; and the halo property: a
// frame computed in bands (chunks on one device, or split across devices), each band with its
// halo, gives the same result as the whole frame at once.
//
// Tolerances:
//  - gaussian rgba8: exact. Its weights are multiples of 1/256, so every sum of both passes is
//    exact in float on device and host alike.
//  - box rgba8: exact. Sums are integers on both sides.
//  - bilateral rgba8: 1 LSB. The device's exp() may differ from the host's by a few ulp, which
//    moves a value lying within ~1e-4 of a rounding boundary to the other side.
//  - unsharp rgba8: 1 LSB. Its sums are integers on both sides, but a device may contract the
//    mean's product into the difference after it (PoCL 5 contracts across statements) where the
//    host rounds it first, which can move a value on a rounding boundary.
//  - rgba32f: 1e-5 relative (to max(1, |reference|); values are in [0, 4)). The kernels sum in
//    float, in places in another order than the host and with fused multiply-adds, and their
//    exp() and division may be a few ulp off: results move by a few ulp (up to 4e-7 seen on
//    PoCL); the margin is for devices whose arithmetic differs more.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace tandem::test {
namespace {

constexpr float kFloatScale = 4.0f;       // float frames hold values in [0, 4)
constexpr double kFloatTolerance = 1e-5;  // relative, see above

// Largest |a - b| / max(1, |b|) over all values of two float frames.
// Checks `actual` against `expected` with the tolerance of the format; returns the difference
// (in LSB for rgba8, relative for rgba32f) for the log.
double expect_close(const Frame& actual, const Frame& expected, double tolerance8) {
  EXPECT_EQ(actual.width(), expected.width());
  EXPECT_EQ(actual.height(), expected.height());
  EXPECT_EQ(actual.format(), expected.format());
  if (actual.format() == PixelFormat::rgba8) {
    const double d = max_difference(actual, expected);
    EXPECT_LE(d, tolerance8);
    return d;
  }
  const double d = max_relative_difference(actual, expected);
  EXPECT_LE(d, kFloatTolerance);
  return d;
}

Frame input_frame(int width, int height, PixelFormat format, std::uint32_t seed) {
  return random_frame(width, height, format, seed, kFloatScale);
}

// The references of a chain, filter after filter, each on the previous one's output.
Frame reference_chain(const std::vector<std::string>& filters, const Frame& input) {
  Frame frame = run_reference(filters.front(), input);
  for (std::size_t i = 1; i < filters.size(); ++i) frame = run_reference(filters[i], frame);
  return frame;
}

std::string join(const std::vector<std::string>& filters) {
  std::string graph;
  for (const auto& f : filters) {
    if (!graph.empty()) graph += ',';
    graph += f;
  }
  return graph;
}

struct Case {
  std::string graph;
  double tolerance8;  // LSB
  bool large = true;  // also on 1921x1081
};

void check_against_reference(const std::vector<Case>& cases,
                             Schedule schedule = Schedule::automatic) {
  const PixelFormat formats[] = {PixelFormat::rgba8, PixelFormat::rgba32f};
  for (const std::string& device : device_ids()) {
    for (PixelFormat format : formats) {
      std::uint32_t seed = 1;
      for (const Size& size : kAwkwardSizes) {
        const bool large = size.width * size.height > 1000000;
        const Frame input = input_frame(size.width, size.height, format, seed++);
        for (const Case& c : cases) {
          if (large && !c.large) continue;
          SCOPED_TRACE(c.graph + " on " + std::to_string(size.width) + "x" +
                       std::to_string(size.height) + " " + std::string(to_string(format)) +
                       ", device " + device + ", schedule " + std::string(to_string(schedule)));
          const Frame expected = run_reference(c.graph, input);
          PipelineOptions options;
          options.split = "single";
          options.schedule = schedule;
          const Frame actual = run_graph(c.graph, input, device, options);
          const double d = expect_close(actual, expected, c.tolerance8);
          std::printf("  %-34s %4dx%-4d %-7s device %s: max difference %g\n", c.graph.c_str(),
                      size.width, size.height, std::string(to_string(format)).c_str(),
                      device.c_str(), d);
        }
      }
    }
  }
}

TEST(Gaussian, MatchesReferenceOnEveryDevice) {
  // sigma 12 reaches 36 (rgba8) and 48 (rgba32f) pixels, sigma 64 reaches 192 and 256: far past
  // the sides of the small frames, where reflect-101 folds more than once.
  check_against_reference({{"gaussian=sigma=0.5", 0},
                           {"gaussian=sigma=2", 0},
                           {"gaussian=sigma=12", 0},
                           {"gaussian=sigma=64", 0, false}});
}

TEST(Box, MatchesReferenceOnEveryDevice) {
  check_against_reference({{"box=radius=1", 0},
                           {"box=radius=3", 0},
                           {"box=radius=64", 0},
                           {"box=radius=129", 0},  // 32-bit column sums between the passes
                           {"box=radius=256", 0, false}});
}

// The rows schedule keeps 8-bit column sums in 16 bits up to radius 128, where a white
// column's sum is 257 * 255 = 65535, the largest they hold; past it, in 32 bits. A white frame
// stays white at both radii, on every device and in both schedules.
TEST(Box, WhiteStaysWhiteAtTheLargestSixteenBitSums) {
  Frame white(300, 290, PixelFormat::rgba8);
  for (int y = 0; y < white.height(); ++y) {
    std::fill(white.row(y), white.row(y) + 4 * white.width(), std::uint8_t{255});
  }
  for (const std::string& device : device_ids()) {
    for (Schedule schedule : kForcedSchedules) {
      for (const char* graph : {"box=radius=128", "box=radius=129"}) {
        PipelineOptions options;
        options.split = "single";
        options.schedule = schedule;
        const Frame out = run_graph(graph, white, device, options);
        EXPECT_EQ(count_differences(out, white, 0), 0u)
            << graph << " on " << device << ", schedule " << to_string(schedule);
      }
    }
  }
}

TEST(Unsharp, MatchesReferenceOnEveryDevice) {
  check_against_reference({{"unsharp", 1},
                           {"unsharp=amount=2.5:radius=5", 1},
                           {"unsharp=amount=-1:radius=11", 1, false}});
}

// A stencil's epilogue runs the chain after it as the chain's own pass would: fused equals
// unfused to the bit, in both schedules.
TEST(Unsharp, FusedEqualsUnfused) {
  const Frame input = input_frame(333, 77, PixelFormat::rgba8, 5);
  for (Schedule schedule : kForcedSchedules) {
    for (const std::string& device : device_ids()) {
      SCOPED_TRACE(device + " " + std::string(to_string(schedule)));
      PipelineOptions fused;
      fused.split = "single";
      fused.schedule = schedule;
      PipelineOptions apart = fused;
      apart.fuse = false;
      const std::string graph = "unsharp=amount=1.5:radius=3,saturation=1.3";
      EXPECT_EQ(max_difference(run_graph(graph, input, device, fused),
                               run_graph(graph, input, device, apart)),
                0.0);
    }
  }
}

TEST(Bilateral, MatchesReferenceOnEveryDevice) {
  // The large frame only with a small window: the host reference is slow.
  check_against_reference({{"bilateral=sigma_s=1.5:sigma_r=0.1", 1},
                           {"bilateral=sigma_s=3:sigma_r=0.1", 1, false},
                           {"bilateral=sigma_s=0.5:sigma_r=0.02", 1, false},
                           {"bilateral=sigma_s=16:sigma_r=1", 1, false}});
}

TEST(Bilateral, KeepsEdgesAndSmoothsFlatAreas) {
  // A noisy step from dark to bright: the bilateral filter removes most of the noise on both
  // sides and leaves the step as sharp as it was; a Gaussian of the same reach blurs it.
  const int width = 64, height = 32;
  Frame input(width, height, PixelFormat::rgba8);
  Frame noise = random_frame(width, height, PixelFormat::rgba8, 7);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < 4; ++c) {
        const int base = x < width / 2 ? 60 : 190;
        input.row(y)[4 * x + c] =
            static_cast<std::uint8_t>(c == 3 ? 255 : base + noise.row(y)[4 * x + c] % 11 - 5);
      }
    }
  }
  const std::string device = device_ids().front();
  const Frame smooth = run_graph("bilateral=sigma_s=3:sigma_r=0.1", input, device, "single");
  const Frame blurred = run_graph("gaussian=sigma=3", input, device, "single");
  auto spread = [&](const Frame& f, int x0, int x1) {
    int lo = 255, hi = 0;
    for (int y = 0; y < height; ++y) {
      for (int x = x0; x < x1; ++x) {
        lo = std::min<int>(lo, f.row(y)[4 * x]);
        hi = std::max<int>(hi, f.row(y)[4 * x]);
      }
    }
    return hi - lo;
  };
  EXPECT_EQ(spread(input, 0, 24), 10);
  EXPECT_LE(spread(smooth, 0, 24), 5);  // flat side: noise halved at least
  EXPECT_LE(spread(smooth, 40, 64), 5);
  // The step: the pixels next to it stay on their side.
  for (int y = 0; y < height; ++y) {
    EXPECT_LE(smooth.row(y)[4 * (width / 2 - 1)], 70);
    EXPECT_GE(smooth.row(y)[4 * (width / 2)], 180);
    EXPECT_EQ(smooth.row(y)[4 * 5 + 3], 255);  // alpha passes through
  }
  EXPECT_GT(blurred.row(0)[4 * (width / 2 - 1)], 100);  // the Gaussian does blur it
}

TEST(Stencils, RejectParametersOutOfRange) {
  EXPECT_THROW(Graph::parse("gaussian=sigma=0"), Error);
  EXPECT_THROW(Graph::parse("gaussian=sigma=65"), Error);
  EXPECT_THROW(Graph::parse("box=radius=0"), Error);
  EXPECT_THROW(Graph::parse("box=radius=257"), Error);
  EXPECT_THROW(Graph::parse("bilateral=sigma_s=0.4"), Error);
  EXPECT_THROW(Graph::parse("bilateral=sigma_r=0"), Error);
  EXPECT_NO_THROW(Graph::parse("gaussian=sigma=64,box=radius=256,bilateral=sigma_s=16:sigma_r=1"));
}

// A filter reading the source may see the whole frame (devices sharing the host's memory map
// all of it), so only a filter after another shows a halo too small: each comes second too.
// Parameters the tests above use too, so that their programs come from the cache.
const std::vector<std::vector<std::string>> kChains = {
    {"gaussian=sigma=12"},
    {"box=radius=64"},
    {"bilateral=sigma_s=3:sigma_r=0.1"},
    {"box=radius=3", "gaussian=sigma=12"},
    {"gaussian=sigma=2", "box=radius=64"},
    {"gaussian=sigma=2", "box=radius=3"},
    {"box=radius=3", "bilateral=sigma_s=3:sigma_r=0.1", "gaussian=sigma=2"},
    {"gaussian=sigma=2", "unsharp=amount=1.5:radius=3"},
};

struct BandRun {
  Size size;
  std::vector<std::vector<std::string>> chains;
  std::vector<std::string> splits;
};

// Runs every chain of `runs` on `devices` with each split, against the chain on one device and
// against the references.
void check_bands(const std::string& devices, const std::vector<BandRun>& runs,
                 Schedule schedule = Schedule::automatic) {
  const std::string one = device_ids().front();
  const PixelFormat formats[] = {PixelFormat::rgba8, PixelFormat::rgba32f};
  for (PixelFormat format : formats) {
    std::uint32_t seed = 100;
    for (const BandRun& run : runs) {
      const Frame input = input_frame(run.size.width, run.size.height, format, seed++);
      for (const auto& chain : run.chains) {
        const std::string graph = join(chain);
        const Frame single = run_graph(graph, input, one, "single");
        const Frame expected = reference_chain(chain, input);
        // Gaussian and box compute exactly on rgba8, so bands from any device equal one device
        // and the reference to the bit; bilateral may differ by 1 where devices' exp() differ,
        // and a linear stage after it (weights summing to 1) keeps that within 1; unsharp by 1
        // where a device contracts its multiply-add (see the top of this file).
        const double tolerance8 = graph.find("bilateral") != std::string::npos ||
                                          graph.find("unsharp") != std::string::npos
                                      ? 1
                                      : 0;
        for (const std::string& split : run.splits) {
          SCOPED_TRACE(graph + " split " + split + " on " + std::to_string(run.size.width) + "x" +
                       std::to_string(run.size.height) + " " + std::string(to_string(format)) +
                       ", devices " + devices + ", schedule " + std::string(to_string(schedule)));
          PipelineOptions options;
          options.split = split;
          options.schedule = schedule;
          const Frame banded = run_graph(graph, input, devices, options);
          expect_close(banded, single, tolerance8);
          expect_close(banded, expected, tolerance8);
        }
      }
    }
  }
}

// One device computing a frame in chunks of rows, each with its halo, equals it computing the
// whole frame. Chains only, where every filter but the first reads an intermediate that holds
// just the rows of its chunk and halo. (Few band heights: PoCL builds each kernel again for
// every new one.)
TEST(Stencils, ChunksOnOneDeviceEqualTheWholeFrame) {
  const std::vector<std::vector<std::string>> chains(kChains.begin() + 3, kChains.end());
  check_bands(device_ids().front(),
              {{{3, 7}, chains, {"chunks:2"}}, {{333, 271}, chains, {"chunks:50"}}});
}

// Bands computed on different devices, each with its halo, equal the whole frame computed on
// one. Uneven splits put band borders at odd rows; 0.01 leaves a band thinner than every halo.
TEST(Stencils, BandsAcrossDevicesEqualTheWholeFrame) {
  if (device_ids().size() < 2) {
    GTEST_SKIP() << "needs two OpenCL devices; run with POCL_DEVICES=\"pthread basic\"";
  }
  // Splits are built for however many devices there are: the first fraction to the first
  // device, the rest shared by the others.
  const std::string s30 = split_first(0.3), s01 = split_first(0.01), s50 = split_first(0.5),
                    s90 = split_first(0.9);
  check_bands("all", {
                         {{3, 7}, kChains, {s30, s01}},
                         {{64, 64}, kChains, {s50, "chunks:7"}},
                         {{333, 271}, kChains, {s30, s90, "chunks:50"}},
                         {{1921, 1081}, {{"gaussian=sigma=2", "box=radius=3"}}, {s30}},
                     });
}

// The tiled schedule (GPUs' own) forced on every device: gaussian and box within its reach on
// 8-bit frames (gaussian up to radius 24; box up to 8 in the separable tile, up to 128 in
// box_sliding), exact as the rows schedule, also on frames smaller than one tile; float frames
// and larger radii fall back to rows. bilateral runs bilateral_tiled on both formats.
TEST(Stencils, TiledScheduleMatchesReferenceOnEveryDevice) {
  check_against_reference({{"gaussian=sigma=0.5", 0},
                           {"gaussian=sigma=2", 0},
                           {"gaussian=sigma=2.5", 0},
                           {"gaussian=sigma=8", 0, false},    // radius 24: the tile's reach
                           {"gaussian=sigma=8.5", 0, false},  // radius 26: rows
                           {"box=radius=1", 0},
                           {"box=radius=8", 0},
                           // Past the tile's reach: box_sliding's column walks and prefix sums
                           // in local memory up to radius 128, running sums beyond.
                           {"box=radius=9", 0, false},
                           {"box=radius=64", 0},
                           {"box=radius=128", 0, false},
                           {"box=radius=129", 0, false},
                           // bilateral_tiled up to radius 8, four pixels a work-item past it.
                           {"bilateral=sigma_s=1.5:sigma_r=0.1", 1},
                           {"bilateral=sigma_s=3:sigma_r=0.1", 1, false},
                           {"bilateral=sigma_s=4:sigma_r=0.1", 1, false},  // radius 8
                           {"bilateral=sigma_s=4.5:sigma_r=0.1", 1, false},
                           // unsharp_tiled on 8-bit frames; float frames take rows.
                           {"unsharp", 1},
                           {"unsharp=amount=2.5:radius=5", 1}},
                          Schedule::tiles);
}

// Bands of the tiled schedule, each with its halo, equal the whole frame: tiles start at each
// band's first row and end past its last.
TEST(Stencils, TiledBandsEqualTheWholeFrame) {
  const std::vector<std::vector<std::string>> chains = {
      {"box=radius=3", "gaussian=sigma=2"},
      {"gaussian=sigma=2.5", "box=radius=1"},
      {"gaussian=sigma=2", "box=radius=64"},
      {"gaussian=sigma=8", "saturation=1.3"},
      {"box=radius=3", "bilateral=sigma_s=3:sigma_r=0.1", "gaussian=sigma=2"},
      {"box=radius=1", "unsharp=amount=1.5:radius=3"},
  };
  check_bands(device_ids().front(),
              {{{3, 7}, chains, {"chunks:2"}}, {{333, 271}, chains, {"chunks:50"}}},
              Schedule::tiles);
  if (device_ids().size() > 1) {
    check_bands("all", {{{333, 271}, chains, {split_first(0.3), split_first(0.01)}}},
                Schedule::tiles);
  }
}

}  // namespace
}  // namespace tandem::test
