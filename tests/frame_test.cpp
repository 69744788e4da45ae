#include <gtest/gtest.h>

#include <cstdint>

#include "tandem/error.hpp"
#include "tandem/frame.hpp"

namespace tandem {
namespace {

TEST(Frame, PageAlignedStorageAndPaddedPitch) {
  for (std::size_t align : {64u, 128u, 1024u, 4096u}) {
    for (int width : {1, 3, 17, 1920, 1921}) {
      for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
        Frame f(width, 5, format, align);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(f.data()) % kPageSize, 0u);
        EXPECT_EQ(f.pitch() % align, 0u);
        EXPECT_EQ(f.pitch() % 64, 0u);
        EXPECT_GE(f.pitch(), ((width + 3) / 4) * 4 * bytes_per_pixel(format));
        EXPECT_EQ(f.capacity() % kPageSize, 0u);
        EXPECT_GE(f.capacity(), f.pitch() * 5);
        // Every row boundary is a valid sub-buffer origin for this alignment.
        for (int y = 0; y < 5; ++y) {
          EXPECT_EQ((f.row(y) - f.data()) % static_cast<std::ptrdiff_t>(align), 0);
        }
      }
    }
  }
}

TEST(Frame, RejectsBadSizes) {
  EXPECT_THROW(Frame(0, 10, PixelFormat::rgba8), Error);
  EXPECT_THROW(Frame(10, -1, PixelFormat::rgba8), Error);
  EXPECT_THROW(Frame(1 << 20, 1, PixelFormat::rgba8), Error);
}

TEST(Frame, PitchRoundsUpToEveryAlignment) {
  // 1024-byte alignment (PoCL) with 128: the least common multiple governs.
  EXPECT_EQ(padded_pitch(1, PixelFormat::rgba8, 1024), 1024u);
  EXPECT_EQ(padded_pitch(1920, PixelFormat::rgba8, 64), 7680u);
  EXPECT_EQ(padded_pitch(1921, PixelFormat::rgba8, 64), 7744u);
  EXPECT_EQ(padded_pitch(1921, PixelFormat::rgba8, 4096), 8192u);
  EXPECT_EQ(padded_pitch(3, PixelFormat::rgba32f, 128), 128u);
}

}  // namespace
}  // namespace tandem
