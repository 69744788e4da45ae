// denoise (non-local means) against its host reference on awkward sizes, both pixel formats,
// both kernels, on every OpenCL device present; that it raises a noisy picture's PSNR against
// the clean one; and co-executed bands (each with its halo of search + patch rows) against one
// device.
//
// Tolerance: the device's exp() may differ from the host's by a few ulp, which moves an 8-bit
// result lying on a rounding boundary by 1 (rare) and a float one by a few ulp.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "test_support.hpp"

namespace tandem {
namespace {

class DenoiseTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DenoiseTest, MatchesHostReferenceOnAwkwardSizes) {
  // The heavy filter: the host reference takes seconds a megapixel, so no 1921x1081 here.
  const std::vector<Size> sizes = {{1, 1}, {3, 7}, {64, 64}, {257, 67}};
  for (const auto& size : sizes) {
    for (const std::string graph : {"denoise", "denoise=strength=25:patch=2:search=3",
                                    "denoise=strength=40:patch=4:search=2"}) {
      for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
        SCOPED_TRACE(std::to_string(size.width) + "x" + std::to_string(size.height) + " " +
                     std::string(to_string(format)) + " " + graph);
        const Frame input = test::random_frame(size.width, size.height, format, 3 + size.width);
        const Frame want = test::run_reference(graph, input);
        // Both kernels on every device: denoise_nlm (tiles) and, on 8 bits, denoise_blocks4 (rows).
        for (Schedule schedule : test::kForcedSchedules) {
          SCOPED_TRACE("schedule " + std::string(to_string(schedule)));
          PipelineOptions options;
          options.split = "single";
          options.schedule = schedule;
          const Frame got = test::run_graph(graph, input, GetParam(), options);
          if (format == PixelFormat::rgba8) {
            EXPECT_LE(test::max_difference(got, want), 1.0);
            EXPECT_LE(test::count_differences(got, want, 0.0),
                      static_cast<std::size_t>(size.width) * size.height * 4 / 1000 + 1);
          } else {
            EXPECT_LE(test::max_difference(got, want), 1e-5);
          }
        }
      }
    }
  }
}

// Smooth shapes and ramps, and the same with Gaussian noise of deviation 10 levels.
std::pair<Frame, Frame> clean_and_noisy(int width, int height) {
  Frame clean(width, height, PixelFormat::rgba8), noisy(width, height, PixelFormat::rgba8);
  std::mt19937 rng(11);
  std::normal_distribution<float> noise(0.0f, 10.0f);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const bool disc = (x - 60) * (x - 60) + (y - 40) * (y - 40) < 900;
      const float v[3] = {disc ? 200.0f : 40.0f + x, 80.0f + y, disc ? 60.0f : 180.0f - x / 2.0f};
      for (int c = 0; c < 4; ++c) {
        const float value = c < 3 ? v[c] : 255.0f;
        clean.row(y)[4 * x + c] = static_cast<std::uint8_t>(value);
        noisy.row(y)[4 * x + c] = static_cast<std::uint8_t>(
            std::clamp(std::nearbyint(value + (c < 3 ? noise(rng) : 0.0f)), 0.0f, 255.0f));
      }
    }
  }
  return {std::move(clean), std::move(noisy)};
}

double psnr(const Frame& a, const Frame& b) {
  double sum = 0;
  for (int y = 0; y < a.height(); ++y) {
    for (int x = 0; x < a.width(); ++x) {
      for (int c = 0; c < 3; ++c) {
        const double d = a.row(y)[4 * x + c] - b.row(y)[4 * x + c];
        sum += d * d;
      }
    }
  }
  return 10 * std::log10(255.0 * 255.0 / (sum / (3.0 * a.width() * a.height())));
}

TEST_P(DenoiseTest, RaisesThePsnrOfANoisyPicture) {
  const auto [clean, noisy] = clean_and_noisy(160, 90);
  const Frame denoised = test::run_graph("denoise=strength=12", noisy, GetParam(), "single");
  const double before = psnr(noisy, clean), after = psnr(denoised, clean);
  std::printf("PSNR against the clean picture: noisy %.2f dB, denoised %.2f dB\n", before, after);
  EXPECT_GT(after, before + 5.0);
  // Alpha is kept.
  for (int x = 0; x < 160; ++x) ASSERT_EQ(denoised.row(7)[4 * x + 3], 255);
}

INSTANTIATE_TEST_SUITE_P(EveryDevice, DenoiseTest, ::testing::ValuesIn(test::device_ids()),
                         [](const auto& info) {
                           std::string name = "device_" + info.param;
                           for (char& c : name)
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

// Bands on several devices, each reading its halo, equal one device's frame: exact between
// devices of one kind, within the tolerance of their kinds otherwise.
TEST(DenoiseCoexec, BandsEqualOneDevice) {
  if (test::device_count() < 2) GTEST_SKIP() << "needs two OpenCL devices";
  const Frame input = test::random_frame(301, 97, PixelFormat::rgba8, 4);
  const std::string graph = "denoise=strength=20:patch=1:search=4";
  const Frame one = test::run_graph(graph, input, test::device_ids().front(), "single");
  for (const std::string& split : {test::split_first(0.3), test::split_first(0.02)}) {
    SCOPED_TRACE(split);
    const Frame co = test::run_graph(graph, input, "all", split);
    EXPECT_LE(test::max_difference(co, one), 1.0);
    EXPECT_LE(test::count_differences(co, one, 0.0), 301u * 97 * 4 / 1000 + 1);
  }
}

}  // namespace
}  // namespace tandem
