// Fusing point-wise chains into one kernel changes nothing: fused and unfused runs give exactly
// equal frames (between stages with 8-bit results the fused kernel quantises as a stored frame
// would). And co-execution changes nothing: a frame split across two devices equals the frame
// computed on one, exactly, for point-wise chains (also those needing frame statistics, which
// are reduced per row and so do not depend on where the bands fall).
//
// Tolerance: none (exact equality) on one device, and across devices of one platform and driver
// (one compiler, one math library: PoCL's pthread and basic devices). A GPU beside a CPU may
// differ in the last ulp of pow() or log() and in whether mad() fuses: there each band must
// equal exactly what its device computes alone, and chains with frame statistics (whose per-row
// sums then come from both devices) stay within 2 LSB, rarely (see the test).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "test_support.hpp"

namespace tandem::test {
namespace {

struct Chain {
  std::string graph;
  PixelFormat format;
  bool frame_stats = false;  ///< a filter of the chain adapts to frame statistics
  bool stencil = false;      ///< starts with a stencil, which runs the chain in its last kernel
};

// Float frames look like radiance maps (up to ~300) for the tone-mapping chains; 8-bit ones are
// uniformly random.
Frame input_for(const Chain& chain, int width, int height) {
  if (chain.format == PixelFormat::rgba8) return random_frame(width, height, chain.format, 31);
  Frame f(width, height, PixelFormat::rgba32f, 256);
  std::mt19937 rng(32);
  std::uniform_real_distribution<float> log_value(-7.0f, 5.7f);
  for (int y = 0; y < height; ++y) {
    for (int i = 0; i < 4 * width; ++i) f.row_as<float>(y)[i] = std::exp(log_value(rng));
  }
  return f;
}

const std::vector<Chain>& chains() {
  static const std::vector<Chain> all = {
      {"saturation=1.3,saturation=0.7", PixelFormat::rgba8},
      {"saturation=1.3,saturation=0.7", PixelFormat::rgba32f},
      {"tonemap=op=aces,saturation=1.2", PixelFormat::rgba32f},
      {"tonemap=op=hable:exposure=1,saturation=0.8,saturation=1.5", PixelFormat::rgba32f},
      {"saturation=1.5,tonemap=op=reinhard:white=4,saturation=1.2", PixelFormat::rgba32f, true},
      {"tonemap=op=drago,saturation=1.1", PixelFormat::rgba8, true},
      // Statistics gathered by a stage inside the chain, of its quantised 8-bit input.
      {"saturation=1.4,tonemap=op=drago:exposure=1", PixelFormat::rgba8, true},
      // A stencil after the statistics: bands compute their neighbours' rows too, which must
      // not count twice.
      {"tonemap=op=reinhard,gaussian=sigma=1.5", PixelFormat::rgba32f, true},
      // blend fused into the chain producing its base, the source as its second input.
      {"[in]split[a][b];[a]saturation=2[s];[s][b]blend=mode=screen:opacity=0.7[out]",
       PixelFormat::rgba8},
      {"[in]split[a][b];[a]saturation=2[s];[s][b]blend=mode=multiply:opacity=0.35[out]",
       PixelFormat::rgba32f},
      // blend fused into the chain producing its layer, the source as its base.
      {"[in]split[a][b];[a]saturation=1.5[s];[b][s]blend=mode=screen:opacity=0.5[out]",
       PixelFormat::rgba8},
      {"[in]split[a][b];[a]saturation=0.4,saturation=1.5[s];[b][s]blend=mode=multiply:opacity=0.8"
       "[out]",
       PixelFormat::rgba32f},
      // A split after a fused chain: both branches read its result.
      {"[in]saturation=2,split[a][b];[a]saturation=0.5[c];[c][b]blend=mode=add:opacity=0.4,"
       "saturation=1.1[out]",
       PixelFormat::rgba8},
      {"[in]tonemap=op=aces,split[a][b];[a]saturation=1.7[c];[b][c]blend=mode=normal:opacity=0.6"
       "[out]",
       PixelFormat::rgba32f},
      // Stencils with the point-wise chain after them in their last kernel (both schedules).
      {"gaussian=sigma=2,saturation=1.3", PixelFormat::rgba8, false, true},
      {"gaussian=sigma=2,saturation=1.3,saturation=0.6", PixelFormat::rgba32f, false, true},
      {"box=radius=1,saturation=1.5,saturation=0.8", PixelFormat::rgba8, false, true},
      {"box=radius=3,tonemap=op=aces", PixelFormat::rgba32f, false, true},
      {"bilateral=sigma_s=1.5:sigma_r=0.1,saturation=1.2", PixelFormat::rgba8, false, true},
      // The blur's result read twice: the chain after it cannot run in its kernel.
      {"[in]gaussian=sigma=1,split[a][b];[a]saturation=2[c];[c][b]blend=mode=screen:opacity=0.5"
       "[out]",
       PixelFormat::rgba8, false, true},
  };
  return all;
}

std::string describe(const Chain& chain, int width, int height) {
  return chain.graph + " on " + std::to_string(width) + "x" + std::to_string(height) + " " +
         std::string(to_string(chain.format));
}

TEST(FusionTest, FusedEqualsUnfused) {
  for (const std::string& device : device_ids()) {
    for (const Chain& chain : chains()) {
      const std::vector<Schedule> schedules =
          chain.stencil ? kForcedSchedules : std::vector<Schedule>{Schedule::automatic};
      for (Schedule schedule : schedules) {
        for (const Size& size : {Size{3, 7}, Size{1921, 1081}}) {
          SCOPED_TRACE(describe(chain, size.width, size.height) + " on device " + device +
                       ", schedule " + std::string(to_string(schedule)));
          const Frame input = input_for(chain, size.width, size.height);
          PipelineOptions options;
          options.split = "single";
          options.schedule = schedule;
          const Frame fused = run_graph(chain.graph, input, device, options);
          options.fuse = false;
          const Frame unfused = run_graph(chain.graph, input, device, options);
          EXPECT_EQ(max_difference(fused, unfused), 0.0);
        }
      }
    }
  }
}

// The passes a graph is lowered to: the point-wise filters after a stencil join it, unless
// something else reads the stencil's result or fusion is off.
TEST(FusionTest, StencilsTakeThePointwiseChainAfterThem) {
  auto passes = [](const std::string& graph, bool fuse) {
    DeviceSet set = DeviceSet::open(device_ids().front());
    PipelineOptions options;
    options.split = "single";
    options.fuse = fuse;
    options.persist_split = false;
    Pipeline pipeline(set, Graph::parse(graph), options);
    Frame output;
    pipeline.process(random_frame(9, 5, PixelFormat::rgba8, 41), output);
    return pipeline.passes();
  };
  using Passes = std::vector<std::string>;
  EXPECT_EQ(passes("gaussian=sigma=2,saturation=1.3,saturation=0.7", true),
            (Passes{"stencil: gaussian saturation saturation"}));
  EXPECT_EQ(passes("gaussian=sigma=2,saturation=1.3", false),
            (Passes{"stencil: gaussian", "point-wise: saturation"}));
  EXPECT_EQ(passes("box=radius=2,saturation=1.3,bilateral,saturation=0.5", true),
            (Passes{"stencil: box saturation", "stencil: bilateral saturation"}));
  // Frame statistics are reduced in fused point-wise kernels, one stage's a kernel: a stage
  // that needs them joins a point-wise chain but not a stencil's, nor a chain that has one.
  EXPECT_EQ(passes("box=radius=2,tonemap=op=reinhard,saturation=1.1", true),
            (Passes{"stencil: box", "point-wise: tonemap saturation"}));
  EXPECT_EQ(passes("saturation=1.3,tonemap,saturation=0.9", true),
            (Passes{"point-wise: saturation tonemap saturation"}));
  EXPECT_EQ(passes("tonemap,saturation=1.2,tonemap=op=drago", true),
            (Passes{"point-wise: tonemap saturation", "point-wise: tonemap"}));
  EXPECT_EQ(
      passes("[in]box=radius=1,split[a][b];[a]saturation=2[c];[c][b]blend=mode=add[out]", true),
      (Passes{"stencil: box", "point-wise: saturation blend"}));
  // A blend joins the chain that makes either of its inputs; the other is read as it is.
  EXPECT_EQ(passes("[in]split[a][b];[a]saturation=1.5[s];[b][s]blend=mode=screen[out]", true),
            (Passes{"point-wise: saturation blend"}));
  EXPECT_EQ(
      passes("[in]box=radius=1,split[a][b];[a]saturation=2[c];[b][c]blend=mode=add[out]", true),
      (Passes{"stencil: box", "point-wise: saturation blend"}));
  // The layer read twice: the blend cannot run in the kernel that makes it.
  EXPECT_EQ(passes("[in]split[a][b];[a]saturation=1.5,split[c][d];[b][c]blend=mode=screen[e];"
                   "[e][d]blend=mode=add[out]",
                   true),
            (Passes{"point-wise: saturation", "point-wise: blend blend"}));
}

// Regression: a fused kernel of hundreds of stages took PoCL minutes to compile (400 stages,
// over 120 s). Chains are cut into kernels of at most 16 stages; the output does not change.
TEST(FusionTest, LongChainsFuseIntoKernelsOfAtMostSixteenStages) {
  std::string graph;
  for (int i = 0; i < 40; ++i) graph += std::string(i ? "," : "") + (i % 2 ? "saturation=1.2" : "saturation=0.85");
  const Frame input = random_frame(67, 5, PixelFormat::rgba8, 40);
  DeviceSet set = DeviceSet::open(device_ids().front());
  PipelineOptions options;
  options.split = "single";
  options.persist_split = false;
  Pipeline pipeline(set, Graph::parse(graph), options);
  Frame fused;
  pipeline.process(input, fused);
  const std::vector<std::string> passes = pipeline.passes();
  ASSERT_EQ(passes.size(), 3u);
  for (const std::string& pass : passes) {
    const auto stages = std::count(pass.begin(), pass.end(), ' ');
    EXPECT_LE(stages, 16) << pass;
  }
  EXPECT_EQ(passes[0], "point-wise: saturation saturation saturation saturation saturation "
                       "saturation saturation saturation saturation saturation saturation "
                       "saturation saturation saturation saturation saturation");
  EXPECT_EQ(max_difference(fused, run_graph(graph, input, device_ids().front(), "single", false)),
            0.0);
}

// Largest difference of rows [y0, y1) of two frames (in 8-bit steps, or raw for float), and
// the number of values that differ at all.
std::pair<double, std::size_t> row_difference(const Frame& a, const Frame& b, int y0, int y1) {
  double worst = 0;
  std::size_t count = 0;
  for (int y = y0; y < y1; ++y) {
    for (int i = 0; i < 4 * a.width(); ++i) {
      const double d = a.format() == PixelFormat::rgba8
                           ? std::abs(int(a.row(y)[i]) - int(b.row(y)[i]))
                           : std::abs(double(a.row_as<float>(y)[i]) - b.row_as<float>(y)[i]);
      worst = std::max(worst, d);
      count += d != 0;
    }
  }
  return {worst, count};
}

TEST(FusionTest, CoExecutedEqualsSingleDevice) {
  const std::vector<DeviceInfo> devices = enumerate_devices();
  if (devices.size() < 2) {
    GTEST_SKIP() << "needs two OpenCL devices (POCL_DEVICES=\"pthread basic\" gives two)";
  }
  // 0.37 to the first device, the rest shared by the others: uneven bands on odd rows.
  std::vector<double> fractions = {0.37};
  std::string split = "static:0.37";
  for (std::size_t d = 1; d < devices.size(); ++d) {
    fractions.push_back(0.63 / static_cast<double>(devices.size() - 1));
    split += ',';
    split += std::to_string(fractions.back());
  }
  // Devices of one platform and driver run one compiler and one math library: their results are
  // bit-identical, so the shared frame must equal a single device's. Otherwise (a GPU beside a
  // CPU) each device still computes its own band exactly as it computes that band alone; only
  // frame statistics mix the devices' per-row sums, which moves the log-average in its last
  // bits: then at most 2 LSB (one rounding flip, doubled at most by a later stage), and rare.
  const bool one_compiler = std::all_of(devices.begin(), devices.end(), [&](const DeviceInfo& d) {
    return same_arithmetic(d, devices[0]);
  });
  for (const Chain& chain : chains()) {
    for (const Size& size : {Size{3, 7}, Size{1921, 1081}}) {
      SCOPED_TRACE(describe(chain, size.width, size.height));
      const Frame input = input_for(chain, size.width, size.height);
      // What each device computes alone (one device's frame when they all agree).
      std::vector<Frame> alone;
      if (one_compiler) {
        alone.push_back(run_graph(chain.graph, input, "all", "single"));
      } else {
        for (const DeviceInfo& d : devices)
          alone.push_back(run_graph(chain.graph, input, d.id, "single"));
      }
      const std::vector<int> bounds = band_boundaries(size.height, fractions, 1);
      for (bool fuse : {true, false}) {
        SCOPED_TRACE(fuse ? "fused" : "unfused");
        const Frame shared = run_graph(chain.graph, input, "all", split, fuse);
        if (one_compiler) {
          EXPECT_EQ(max_difference(shared, alone[0]), 0.0);
          continue;
        }
        for (std::size_t d = 0; d < devices.size(); ++d) {
          SCOPED_TRACE("band of device " + devices[d].id);
          const auto [worst, count] = row_difference(shared, alone[d], bounds[d], bounds[d + 1]);
          if (!chain.frame_stats) {
            EXPECT_EQ(worst, 0.0);
          } else {
            EXPECT_LE(worst, 2.0);
            EXPECT_LE(count, static_cast<std::size_t>(size.width) * size.height * 4 / 10000 + 1);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace tandem::test
