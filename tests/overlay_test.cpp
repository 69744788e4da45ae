// overlay with the graph's second input (a smaller, changed copy of the frame: picture in
// picture) against its host reference on every device: both formats, the picture inside, across
// every edge and outside the frame, with its alpha; co-executed bands (some holding none of the
// picture's rows) and fused equal one device unfused; the number of inputs follows file=.
// Tolerance: 1 LSB on 8-bit (host and device round the same fma()s; a tie may go either way),
// 1e-6 on float values.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_support.hpp"

namespace tandem {
namespace {

using test::run_graph;
using test::run_reference;

// The host reference of [main][pic]overlay=x=X:y=Y.
Frame overlay_reference(const Frame& main, const Frame& picture, int x, int y) {
  const FilterSpec& spec = FilterRegistry::instance().get("overlay");
  Params params(spec.params);
  params.set("x", x);
  params.set("y", y);
  auto filter = spec.make(params);
  Frame out(main.width(), main.height(), main.format());
  const Frame* inputs[] = {&main, &picture};
  filter->reference(inputs, out);
  return out;
}

// Picture in picture: a crop of the frame, saturated, blended over the frame at (x, y).
std::string picture_in_picture(int x, int y, const std::string& after = "") {
  return "[in]split[a][b];[b]crop=40:30:5:3,saturation=2[c];[a][c]overlay=x=" + std::to_string(x) +
         ":y=" + std::to_string(y) + after;
}

class OverlayTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OverlayTest, MatchesHostReference) {
  const std::vector<std::pair<int, int>> places = {
      {17, 23}, {-11, -7}, {60, 50}, {-50, 0}, {0, 200}};
  for (const Size size : {Size{71, 53}, Size{45, 33}, Size{1921, 61}}) {
    for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
      const Frame input = test::random_frame(size.width, size.height, format, 3 + size.width);
      const Frame picture = run_reference("saturation=2", run_reference("crop=40:30:5:3", input));
      for (const auto& [x, y] : places) {
        SCOPED_TRACE("at " + std::to_string(x) + "," + std::to_string(y) + " on " +
                     std::to_string(size.width) + "x" + std::to_string(size.height) + " " +
                     std::string(to_string(format)));
        const Frame got = run_graph(picture_in_picture(x, y), input, GetParam(), "single");
        const Frame want = overlay_reference(input, picture, x, y);
        EXPECT_LE(test::max_difference(got, want), format == PixelFormat::rgba8 ? 1.0 : 1e-6);
      }
    }
  }
}

TEST_P(OverlayTest, CoExecutedAndFusedEqualOneDeviceUnfused) {
  const Frame input = test::random_frame(203, 117, PixelFormat::rgba8, 8);
  const std::string graph = picture_in_picture(30, 70, ",saturation=1.3");
  const Frame single = run_graph(graph, input, GetParam(), "single");
  EXPECT_EQ(test::max_difference(run_graph(graph, input, GetParam(), "single", false), single),
            0.0);
  const std::string pair = test::same_platform_pair();
  if (pair.empty()) return;
  // The first band's 30 rows hold none of the picture's.
  for (double first : {0.15, 0.5, 0.85}) {
    EXPECT_EQ(test::max_difference(run_graph(graph, input, pair, test::split_first(first, pair)),
                                   run_graph(graph, input, pair, "single")),
              0.0)
        << "first share " << first;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryDevice, OverlayTest, ::testing::ValuesIn(test::device_ids()),
                         [](const auto& info) { return test::device_test_name(info.param); });

TEST(Overlay, FileTakesTheSecondInputsPlace) {
  EXPECT_EQ(FilterRegistry::instance().get("overlay").input_count(
                Graph::parse("overlay=file=x.png").nodes()[0].params),
            1);
  const std::string two =
      test::error_of([] { Graph::parse("overlay=x=3").validate(PixelFormat::rgba8); });
  EXPECT_NE(two.find("overlay takes 2 inputs"), std::string::npos) << two;
  const std::string extra = test::error_of([] {
    Graph::parse("[in]split[a][b];[a][b]overlay=file=x.png").validate(PixelFormat::rgba8);
  });
  EXPECT_NE(extra.find("takes 1 input"), std::string::npos) << extra;
}

}  // namespace
}  // namespace tandem
