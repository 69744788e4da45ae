// Filters a program registers at run time (tandem/user_filter.hpp) behave like built-in ones:
// graph strings, validation and its messages, every device, co-execution and fusion.
//  - test_levels: point-wise, (c - black) / (white - black) on R, G, B, through an args()
//    function that hands the kernel black and 1 / (white - black).
//  - test_vmean: a stencil with its own kernel, the mean of 2 radius + 1 rows (reflect-101).
//
// Tolerances: host and kernel do the same float operations in the same order (no mad(), which
// may or may not fuse), so 8-bit results may differ by 1 LSB only where a device's division or
// rounding differs by an ulp at a rounding boundary, rarely (1 in 10000 values, plus one), and
// float results by 1e-6 relative. Co-execution and fusion: exact equality (see fusion_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace tandem::test {
namespace {

constexpr char kLevelsSource[] = R"(
inline float4 test_levels(float4 px, float16 p) {
  return (float4)((px.xyz - p.s0) * p.s1, px.w);
}
)";

constexpr char kVmeanSource[] = R"(
#if PIXEL_RGBA8
#define PIXEL uchar
#define LOAD(p) convert_float4(vload4(0, (p)))
#define STORE(v, p) vstore4(convert_uchar4_sat_rte(v), 0, (p))
#else
#define PIXEL float
#define LOAD(p) vload4(0, (p))
#define STORE(v, p) vstore4((v), 0, (p))
#endif

__kernel void test_vmean(const __global PIXEL* restrict in, int in_first, int in_pitch,
                         __global PIXEL* restrict out, int out_first, int out_pitch,
                         int height, int y0) {
  const int x = (int)get_global_id(0);
  const int y = y0 + (int)get_global_id(1);
  float4 sum = 0.0f;
  for (int k = -RADIUS; k <= RADIUS; ++k) {
    const int row = tandem_reflect101(y + k, height);
    sum += LOAD(in + (size_t)(row - in_first) * in_pitch + 4 * x);
  }
  STORE(sum * (1.0f / (2 * RADIUS + 1)), out + (size_t)(y - out_first) * out_pitch + 4 * x);
}
)";

class VerticalMean final : public Filter {
 public:
  explicit VerticalMean(const Params& params) : radius_(params.integer("radius")) {}

  int halo() const override { return radius_; }

  void enqueue(BandContext& ctx, std::span<const DeviceImage> inputs,
               const DeviceImage& output) const override {
    static const std::vector<std::string> kSources{"test_vmean.cl"};
    cl::Program program = ctx.program(
        kSources, "-DRADIUS=" + std::to_string(radius_) +
                      " -DPIXEL_RGBA8=" + (inputs[0].format == PixelFormat::rgba8 ? "1" : "0"));
    cl::Kernel kernel = ctx.kernel(program, "test_vmean");
    cl_uint arg = set_image_args(kernel, 0, inputs[0]);
    arg = set_image_args(kernel, arg, output);
    kernel.setArg(arg++, ctx.frame_height());
    kernel.setArg(arg++, ctx.y0());
    ctx.enqueue(kernel, static_cast<std::size_t>(ctx.frame_width()),
                static_cast<std::size_t>(ctx.y1() - ctx.y0()), "test_vmean");
  }

  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    const Frame& in = *inputs[0];
    const bool u8 = in.format() == PixelFormat::rgba8;
    const float scale = 1.0f / static_cast<float>(2 * radius_ + 1);
    for (int y = 0; y < in.height(); ++y) {
      for (int i = 0; i < 4 * in.width(); ++i) {
        float sum = 0;
        for (int k = -radius_; k <= radius_; ++k) {
          const int row = reflect101(y + k, in.height());
          sum += u8 ? in.row(row)[i] : in.row_as<float>(row)[i];
        }
        if (u8) {
          output.row(y)[i] =
              static_cast<std::uint8_t>(std::nearbyint(std::min(sum * scale, 255.0f)));
        } else {
          output.row_as<float>(y)[i] = sum * scale;
        }
      }
    }
  }

 private:
  int radius_;
};

constexpr char kDefinedSource[] = R"(
inline float4 test_defined(float4 px, float16 p) {
  return (float4)(px.xyz * TEST_FACTOR, px.w);
}
)";

// A point-wise filter of its own class whose source needs a build option
// (PointwiseStage::defines): R, G and B halved.
class Defined final : public Filter {
 public:
  Defined() : stage_{"test_defined.cl", "test_defined", {}, {"-DTEST_FACTOR=0.5f"}} {}

  const PointwiseStage* pointwise() const override { return &stage_; }

  void reference(std::span<const Frame* const> inputs, Frame& output) const override {
    const Frame& in = *inputs[0];
    for (int y = 0; y < in.height(); ++y) {
      for (int x = 0; x < in.width(); ++x) {
        for (int c = 0; c < 4; ++c) {
          const float v = in.row_as<float>(y)[4 * x + c];
          output.row_as<float>(y)[4 * x + c] = c < 3 ? v * 0.5f : v;
        }
      }
    }
  }

 private:
  PointwiseStage stage_;
};

// The same table as saturation's, so that their messages can be compared.
std::vector<ParamSpec> amount_table() {
  return FilterRegistry::instance().get("saturation").params;
}

PointwiseFilterSpec scale_filter(const std::string& name, const char* factor) {
  return {
      .name = name,
      .help = "scales R, G and B",
      .source = std::string(
                    "inline float4 test_scale(float4 px, float16 p) { return (float4)(px.xyz * ") +
                factor + "f, px.w); }",
      .function = "test_scale",
      .reference = [f = std::stof(factor)](Pixel px, std::span<const float>) {
        return Pixel{px.r * f, px.g * f, px.b * f, px.a};
      }};
}

void register_test_filters() {
  static const bool done = [] {
    register_filter(PointwiseFilterSpec{
        .name = "test_levels",
        .help = "stretches [black, white] to [0, 1]",
        .params = {{.name = "black",
                    .type = ParamType::real,
                    .default_value = 0,
                    .min = 0,
                    .max = 0.45,
                    .help = "becomes 0"},
                   {.name = "white",
                    .type = ParamType::real,
                    .default_value = 1,
                    .min = 0.55,
                    .max = 1,
                    .help = "becomes 1"}},
        .source = kLevelsSource,
        .function = "test_levels",
        .args =
            [](const Params& p) {
              return std::vector<float>{static_cast<float>(p["black"]),
                                        1.0f / static_cast<float>(p["white"] - p["black"])};
            },
        .reference =
            [](Pixel px, std::span<const float> p) {
              return Pixel{(px.r - p[0]) * p[1], (px.g - p[0]) * p[1], (px.b - p[0]) * p[1], px.a};
            },
    });
    register_kernel_source("test_vmean.cl", kVmeanSource);
    register_kernel_source("test_defined.cl", kDefinedSource);
    register_filter(FilterSpec{
        .name = "test_defined",
        .help = "halves R, G and B, by a factor its build option defines",
        .make = [](const Params&) { return std::make_unique<Defined>(); },
    });
    register_filter(FilterSpec{
        .name = "test_vmean",
        .help = "the mean of 2 radius + 1 rows",
        .params = {{.name = "radius",
                    .type = ParamType::integer,
                    .default_value = 1,
                    .min = 1,
                    .max = 16,
                    .help = "rows on each side"}},
        .make = [](const Params& p) { return std::make_unique<VerticalMean>(p); },
    });
    // Identical to saturation but for its name and kernel.
    register_filter(PointwiseFilterSpec{
        .name = "test_amount",
        .help = "saturation's table",
        .params = amount_table(),
        .source = "inline float4 test_amount(float4 px, float16 p) { return px; }",
        .function = "test_amount",
        .reference = [](Pixel px, std::span<const float>) { return px; },
    });
    // Two sources that differ in one constant and define the same function: programs must be
    // told apart by their text, not by a name.
    register_filter(scale_filter("test_quarter", "0.25"));
    register_filter(scale_filter("test_three_quarters", "0.75"));
    return true;
  }();
  (void)done;
}

void expect_close(const Frame& actual, const Frame& expected) {
  ASSERT_EQ(actual.format(), expected.format());
  if (actual.format() == PixelFormat::rgba8) {
    EXPECT_LE(max_difference(actual, expected), 1.0);
    const std::size_t values = static_cast<std::size_t>(actual.width()) * actual.height() * 4;
    EXPECT_LE(count_differences(actual, expected, 0.0), values / 10000 + 1);
  } else {
    double worst = 0;
    for (int y = 0; y < actual.height(); ++y) {
      for (int i = 0; i < 4 * actual.width(); ++i) {
        const double u = actual.row_as<float>(y)[i];
        const double v = expected.row_as<float>(y)[i];
        worst = std::max(worst, std::abs(u - v) / std::max(1.0, std::abs(v)));
      }
    }
    EXPECT_LE(worst, 1e-6);
  }
}

std::string parse_error(const std::string& graph) {
  try {
    Graph::parse(graph);
  } catch (const Error& e) {
    return e.what();
  }
  return "(parsed)";
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

class UserFilterTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { register_test_filters(); }
};

TEST_P(UserFilterTest, PointwiseMatchesItsReference) {
  for (const Size& size : kAwkwardSizes) {
    for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
      const Frame input = random_frame(size.width, size.height, format, 7 + size.width, 1.5f);
      for (const char* graph : {"test_levels", "test_levels=0.1:0.8", "test_levels=white=0.6"}) {
        SCOPED_TRACE(std::string(graph) + " " + std::to_string(size.width) + "x" +
                     std::to_string(size.height) + " " + std::string(to_string(format)));
        expect_close(run_graph(graph, input, GetParam(), "single"), run_reference(graph, input));
      }
    }
  }
}

TEST_P(UserFilterTest, StencilMatchesItsReference) {
  for (const Size& size : kAwkwardSizes) {
    for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
      const Frame input = random_frame(size.width, size.height, format, 3 + size.height);
      // Radii past the height of the small frames reflect more than once.
      for (const char* graph : {"test_vmean", "test_vmean=radius=5"}) {
        SCOPED_TRACE(std::string(graph) + " " + std::to_string(size.width) + "x" +
                     std::to_string(size.height) + " " + std::string(to_string(format)));
        expect_close(run_graph(graph, input, GetParam(), "single"), run_reference(graph, input));
      }
    }
  }
}

// A stage's build options reach its kernel alone and as a stencil's epilogue.
TEST_P(UserFilterTest, AStagesDefinesReachItsKernel) {
  const Frame input = random_frame(37, 9, PixelFormat::rgba32f, 4);
  expect_close(run_graph("test_defined", input, GetParam(), "single"),
               run_reference("test_defined", input));
  const Frame smoothed = run_graph("box=radius=1", input, GetParam(), "single");
  expect_close(run_graph("box=radius=1,test_defined", input, GetParam(), "single"),
               run_reference("test_defined", smoothed));
}

TEST_P(UserFilterTest, ProgramsAreToldApartByTheirSourceText) {
  const Frame input = random_frame(37, 5, PixelFormat::rgba32f, 2);
  for (const char* graph : {"test_quarter", "test_three_quarters", "test_quarter"}) {
    SCOPED_TRACE(graph);
    expect_close(run_graph(graph, input, GetParam(), "single"), run_reference(graph, input));
  }
}

INSTANTIATE_TEST_SUITE_P(EveryDevice, UserFilterTest, ::testing::ValuesIn(device_ids()),
                         [](const auto& info) {
                           std::string name = "device_" + info.param;
                           for (char& c : name)
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

class UserFilter : public ::testing::Test {
 protected:
  void SetUp() override { register_test_filters(); }
};

TEST_F(UserFilter, CoExecutionEqualsOneDevice) {
  const std::vector<std::string> graphs = {"test_levels=0.2:0.7", "test_vmean=3",
                                           "test_vmean=2,test_levels=0.1,saturation=1.3"};
  const bool two = device_ids().size() >= 2;
  for (const std::string& graph : graphs) {
    for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
      const Frame input = random_frame(1921, 83, format, 5);
      const Frame single = run_graph(graph, input, "all", "single");
      std::vector<std::string> splits = {"chunks:7"};
      if (two) splits.insert(splits.end(), {split_first(0.37), split_first(0.012), "adaptive"});
      // Rows of other kinds of device may differ by the tolerance of their kinds; saturation=1.3
      // after the levels scales a flip.
      const Tolerance tolerance = tolerance_within("all", format).amplified(1.3, format);
      for (const std::string& split : splits) {
        SCOPED_TRACE(graph + " " + std::string(to_string(format)) + " " + split);
        EXPECT_TRUE(within(run_graph(graph, input, "all", split), single, tolerance));
      }
    }
  }
  if (!two)
    GTEST_SKIP() << "only chunks ran: static splits need two OpenCL devices "
                    "(POCL_DEVICES=\"pthread basic\")";
}

TEST_F(UserFilter, FusedWithBuiltInsEqualsUnfused) {
  for (const std::string graph :
       {"test_levels=0.05:0.9,saturation=1.4", "saturation=0.6,test_levels=0.2,test_levels=0:0.8",
        "[in]split[a][b];[a]test_levels=0.3[l];[l][b]blend=mode=screen[out]"}) {
    for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
      SCOPED_TRACE(graph + " " + std::string(to_string(format)));
      const Frame input = random_frame(333, 41, format, 12);
      const Frame fused = run_graph(graph, input, "all", "single", true);
      EXPECT_EQ(max_difference(fused, run_graph(graph, input, "all", "single", false)), 0.0);
    }
  }
  // And the chain is what the filters do one after the other.
  const Frame input = random_frame(64, 9, PixelFormat::rgba8, 4);
  const Frame levels = run_reference("test_levels=0.05:0.9", input);
  expect_close(run_graph("test_levels=0.05:0.9,saturation=1.4", input, "all", "single"),
               run_reference("saturation=1.4", levels));
}

TEST_F(UserFilter, BadValuesGiveTheMessagesOfBuiltIns) {
  // Each message is one line, then the graph with a caret under the offending token.
  for (const std::string options :
       {"=9", "=amount=-1", "=amount=abc", "=amunt=2", "=1:2", "=amount=1:amount=2"}) {
    SCOPED_TRACE(options);
    const std::string builtin = parse_error("saturation" + options);
    const std::string user = parse_error("test_amount" + options);
    ASSERT_NE(builtin, "(parsed)");
    EXPECT_EQ(first_line(user), replace_all(first_line(builtin), "saturation", "test_amount"));
    EXPECT_EQ(std::count(user.begin(), user.end(), '\n'), 2) << user;
    EXPECT_EQ(user.substr(user.rfind('\n') + 1).size(),
              builtin.substr(builtin.rfind('\n') + 1).size() + 1)  // one letter longer
        << user;
  }
  EXPECT_EQ(first_line(parse_error("test_levls=0.1")),
            "unknown filter 'test_levls' (did you mean 'test_levels'?)");
  EXPECT_EQ(first_line(parse_error("test_levels=white=0.5")).rfind("test_levels: ", 0), 0u);
  EXPECT_EQ(first_line(parse_error("test_vmean=radius=2.5")).rfind("test_vmean: ", 0), 0u);
}

TEST_F(UserFilter, NamesAreTakenOnce) {
  EXPECT_EQ(error_of([] { register_filter(scale_filter("test_levels", "2")); }),
            "a filter named 'test_levels' already exists");
  EXPECT_EQ(error_of([] { register_filter(scale_filter("saturation", "2")); }),
            "a filter named 'saturation' already exists");
  EXPECT_EQ(error_of([] {
              register_filter(FilterSpec{.name = "test_vmean", .make = [](const Params& p) {
                                           return std::make_unique<VerticalMean>(p);
                                         }});
            }),
            "a filter named 'test_vmean' already exists");
  EXPECT_EQ(error_of([] { register_kernel_source("test_vmean.cl", "// again"); }),
            "an OpenCL source named 'test_vmean.cl' is already registered");
  EXPECT_EQ(error_of([] { register_kernel_source("saturation.cl", "// mine"); }),
            "an OpenCL source named 'saturation.cl' is built into tandem");
  // A filter whose source name is taken is not registered at all.
  EXPECT_EQ(error_of([] { register_filter(scale_filter("test_vmean", "2")); }),
            "a filter named 'test_vmean' already exists");
  register_kernel_source("test_orphan.cl", "// taken before the filter");
  EXPECT_EQ(error_of([] { register_filter(scale_filter("test_orphan", "2")); }),
            "an OpenCL source named 'test_orphan.cl' is already registered");
  EXPECT_EQ(FilterRegistry::instance().find("test_orphan"), nullptr);
}

TEST_F(UserFilter, IncompleteSpecsAreRefused) {
  PointwiseFilterSpec spec = scale_filter("test_incomplete", "2");
  spec.reference = nullptr;
  EXPECT_NE(error_of([&] { register_filter(spec); }).find("needs a name, an OpenCL source"),
            std::string::npos);
  spec = scale_filter("test_many", "2");
  spec.args = [](const Params&) { return std::vector<float>(17, 1.0f); };
  EXPECT_EQ(
      error_of([&] { register_filter(spec); }),
      "test_many: 17 kernel arguments, but a point-wise stage takes at most 16 (one float16)");
  EXPECT_EQ(FilterRegistry::instance().find("test_many"), nullptr);
}

TEST_F(UserFilter, ABuildErrorCarriesTheLog) {
  PointwiseFilterSpec spec = scale_filter("test_broken", "1");
  spec.source = "inline float4 test_scale(float4 px, float16 p) { return px * undefined_thing; }";
  register_filter(spec);
  DeviceSet devices = DeviceSet::open("all");
  PipelineOptions options;
  options.persist_split = false;
  Pipeline pipeline(devices, Graph::parse("saturation=1.2,test_broken"), options);
  Frame output;
  try {
    pipeline.process(random_frame(16, 16, PixelFormat::rgba8, 1), output);
    FAIL() << "a broken source built";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), CL_BUILD_PROGRAM_FAILURE);
    EXPECT_NE(std::string(e.what()).find("building saturation.cl+test_broken.cl"),
              std::string::npos)
        << e.what();
    EXPECT_NE(e.build_log().find("undefined_thing"), std::string::npos) << e.build_log();
    // The source is at fault, not a device: none leaves the split.
    EXPECT_EQ(std::string(e.what()).find("every device failed"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(pipeline.report().fallbacks.empty());
}

}  // namespace
}  // namespace tandem::test
