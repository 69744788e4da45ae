// overlay=file=: a picture read from an image file (here a PNG with alpha, through tandem_io)
// blends as the same picture given as the graph's second input does, on every device and
// co-executed; a file that cannot be read is an error naming it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "tandem/image_io.hpp"
#include "test_support.hpp"

namespace tandem {
namespace {

namespace fs = std::filesystem;

class OverlayFileTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OverlayFileTest, EqualsTheSamePictureAsASecondInput) {
  const fs::path logo =
      fs::temp_directory_path() / ("tandem-logo-" + std::to_string(::getpid()) + ".png");
  const Frame picture = test::random_frame(37, 21, PixelFormat::rgba8, 4);  // random alpha too
  write_image(logo, picture);
  const Frame input = test::random_frame(150, 90, PixelFormat::rgba8, 5);
  const std::string graph = "overlay=file=" + logo.string() + ":x=101:y=-4,saturation=1.2";
  // The same picture as the second input: the frame cropped to the picture's size, with the
  // picture's pixels written into it on the host first.
  Frame both = input;
  for (int y = 0; y < 21; ++y) std::copy_n(picture.row(y), 37 * 4, both.row(y));
  const Frame want = test::run_graph(
      "[in]split[a][b];[b]crop=37:21:0:0[c];[a][c]overlay=x=101:y=-4,saturation=1.2", both,
      GetParam(), "single");
  Frame got = test::run_graph(graph, input, GetParam(), "single");
  // The rows the picture was written into differ, outside its place in the output.
  for (int y = 0; y < 21; ++y) std::copy_n(picture.row(y), 37 * 4, got.row(y));
  Frame want_top = want;
  for (int y = 0; y < 21; ++y) std::copy_n(picture.row(y), 37 * 4, want_top.row(y));
  EXPECT_EQ(test::max_difference(got, want_top), 0.0);
  const std::string pair = test::same_platform_pair();
  if (!pair.empty()) {
    EXPECT_EQ(
        test::max_difference(test::run_graph(graph, input, pair, test::split_first(0.3, pair)),
                             test::run_graph(graph, input, pair, "single")),
        0.0);
  }
  fs::remove(logo);
  const std::string missing = test::error_of(
      [] { Graph::parse("overlay=file=/nonexistent/logo.png").validate(PixelFormat::rgba8); });
  EXPECT_NE(missing.find("/nonexistent/logo.png"), std::string::npos) << missing;
}

INSTANTIATE_TEST_SUITE_P(EveryDevice, OverlayFileTest, ::testing::ValuesIn(test::device_ids()),
                         [](const auto& info) { return test::device_test_name(info.param); });

}  // namespace
}  // namespace tandem
