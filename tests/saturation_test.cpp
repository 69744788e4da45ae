// saturation against its host reference on awkward sizes, on every OpenCL device present.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace tandem {
namespace {

using test::kAwkwardSizes;

class SaturationTest : public ::testing::TestWithParam<std::string> {};

// Tolerance: the kernel uses mad(), which a device may or may not fuse; the reference fuses.
// Where a device does not, a value can land on the other side of a rounding boundary: 1 LSB.
// Such pixels must stay rare.
TEST_P(SaturationTest, MatchesHostReferenceOnAwkwardSizes) {
  const std::string device = GetParam();
  for (const auto& size : kAwkwardSizes) {
    for (double amount : {0.0, 0.5, 1.4, 4.0}) {
      for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
        SCOPED_TRACE(std::to_string(size.width) + "x" + std::to_string(size.height) + " " +
                     std::string(to_string(format)) + " amount " + std::to_string(amount));
        const Frame input = test::random_frame(size.width, size.height, format, 7 + size.width);
        const std::string graph = "saturation=amount=" + std::to_string(amount);
        const Frame got = test::run_graph(graph, input, device, "single");
        const Frame want = test::run_reference(graph, input);
        if (format == PixelFormat::rgba8) {
          EXPECT_LE(test::max_difference(got, want), 1.0);
          EXPECT_LE(test::count_differences(got, want, 0.0),
                    static_cast<std::size_t>(size.width) * size.height * 4 / 1000);
        } else {
          EXPECT_LE(test::max_difference(got, want), 1e-5);
        }
      }
    }
  }
}

TEST_P(SaturationTest, OneIsIdentityAndZeroIsGrey) {
  const Frame input = test::random_frame(333, 77, PixelFormat::rgba8, 3);
  const Frame same = test::run_graph("saturation=1", input, GetParam(), "single");
  EXPECT_EQ(test::max_difference(same, input), 0.0);

  const Frame grey = test::run_graph("saturation=0", input, GetParam(), "single");
  for (int y = 0; y < grey.height(); ++y) {
    for (int x = 0; x < grey.width(); ++x) {
      const std::uint8_t* p = grey.row(y) + 4 * x;
      ASSERT_EQ(p[0], p[1]);
      ASSERT_EQ(p[1], p[2]);
      ASSERT_EQ(p[3], input.row(y)[4 * x + 3]);  // alpha unchanged
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryDevice, SaturationTest, ::testing::ValuesIn(test::device_ids()),
                         [](const auto& info) {
                           std::string name = "device_" + info.param;
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace tandem
