// Images in memory the caller owns: tandem::process() on any pointer and pitch (odd widths, pitches
// that are no multiple of 64, misaligned rows, overlapping input and output), and Frame::wrap().
// Results must equal, exactly, the same graph run on the pipeline's own frames on the same device;
// bytes after each row's last pixel must stay as they were.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace tandem::test {
namespace {

constexpr std::uint8_t kUntouched = 0xA5;

// An image of `height` rows `pitch` bytes apart at `offset` bytes past a 4096-byte boundary;
// every byte starts as kUntouched.
struct Image {
  Image(std::size_t pitch, int height, std::size_t offset)
      : storage(pitch * height + offset + 4096, kUntouched), pitch(pitch), height(height) {
    const auto base = reinterpret_cast<std::uintptr_t>(storage.data());
    data = storage.data() + (4096 - base % 4096) % 4096 + offset;
  }
  std::vector<std::uint8_t> storage;
  std::uint8_t* data;
  std::size_t pitch;
  int height;
};

void fill(Image& image, const Frame& frame) {
  const std::size_t row = frame.width() * bytes_per_pixel(frame.format());
  for (int y = 0; y < frame.height(); ++y)
    std::memcpy(image.data + y * image.pitch, frame.row(y), row);
}

Frame to_frame(const Image& image, int width, PixelFormat format) {
  Frame f(width, image.height, format);
  const std::size_t row = width * bytes_per_pixel(format);
  for (int y = 0; y < image.height; ++y) std::memcpy(f.row(y), image.data + y * image.pitch, row);
  return f;
}

// Bytes of `image` outside its rows' pixels that changed.
std::size_t touched_padding(const Image& image, std::size_t row_bytes) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < image.storage.size(); ++i) {
    const std::ptrdiff_t at = image.storage.data() + i - image.data;
    const bool pixel = at >= 0 && at < static_cast<std::ptrdiff_t>(image.pitch * image.height) &&
                       static_cast<std::size_t>(at) % image.pitch < row_bytes;
    n += !pixel && image.storage[i] != kUntouched;
  }
  return n;
}

Pipeline make_pipeline(DeviceSet& devices, const std::string& graph,
                       const std::string& split = "single") {
  PipelineOptions options;
  options.split = split;
  options.persist_split = false;
  return Pipeline(devices, Graph::parse(graph), options);
}

// A row pitch that every device can use in place.
constexpr std::size_t kToPage = ~std::size_t{0};

struct Layout {
  int width;
  std::size_t in_pad, out_pad;        // bytes after a row's pixels, or kToPage: up to 4096
  std::size_t in_offset, out_offset;  // bytes past a page boundary
};

TEST(Process, AnyPitchAndAlignmentEqualsFrames) {
  const bool two = device_ids().size() >= 2;
  const std::vector<Layout> layouts = {{1, 0, 0, 0, 0},
                                       {3, 4, 12, 1, 3},
                                       {33, 0, 4, 8, 16},
                                       {45, 20, 0, 64, 0},
                                       {64, 0, 0, 0, 0},
                                       {64, 0, 0, 64, 128},  // both in place
                                       {64, 64, 36, 0, 0},
                                       {100, 112, 0, 0, 64},  // one of the two in place
                                       {1921, 4, 60, 4, 0},
                                       {1921, kToPage, kToPage, 0, 0},
                                       {33, kToPage, kToPage, 0, 0}};  // copied: odd widths
  for (const std::string graph : {"saturation=1.4", "gaussian=sigma=2,saturation=1.3"}) {
    for (PixelFormat format : {PixelFormat::rgba8, PixelFormat::rgba32f}) {
      for (const std::string& split : {std::string("single"), split_first(0.45)}) {
        if (split != "single" && !two) continue;
        DeviceSet devices = DeviceSet::open("all");
        Pipeline pipeline = make_pipeline(devices, graph, split);
        for (const Layout& l : layouts) {
          const int height = l.width > 1000 ? 37 : 11;
          SCOPED_TRACE(graph + " " + std::string(to_string(format)) + " " + split + " width " +
                       std::to_string(l.width) + " pads " + std::to_string(l.in_pad) + "," +
                       std::to_string(l.out_pad) + " offsets " + std::to_string(l.in_offset) + "," +
                       std::to_string(l.out_offset));
          const std::size_t row = l.width * bytes_per_pixel(format);
          const Frame pixels = random_frame(l.width, height, format, l.width);
          auto pitch = [&](std::size_t pad) {
            return pad == kToPage ? (row + 4095) / 4096 * 4096 : row + pad;
          };
          Image in(pitch(l.in_pad), height, l.in_offset);
          Image out(pitch(l.out_pad), height, l.out_offset);
          fill(in, pixels);
          process(pipeline, in.data, in.pitch, out.data, out.pitch, l.width, height, format);

          Frame expected;
          pipeline.process(pixels, expected);
          EXPECT_EQ(max_difference(to_frame(out, l.width, format), expected), 0.0);
          EXPECT_EQ(touched_padding(out, row), 0u);
          EXPECT_EQ(touched_padding(in, row), 0u);
          EXPECT_EQ(max_difference(to_frame(in, l.width, format), pixels), 0.0);
        }
      }
    }
  }
}

TEST(Process, InputAndOutputMayBeTheSameMemory) {
  DeviceSet devices = DeviceSet::open("all");
  // bilateral reads the input and writes the output in one kernel: in place it would read
  // pixels it has already written.
  Pipeline pipeline = make_pipeline(devices, "bilateral=sigma_s=3:sigma_r=0.3");
  for (std::size_t pad : {0u, 64u}) {
    const Frame pixels = random_frame(64, 40, PixelFormat::rgba8, 3);
    Image image(64 * 4 + pad, 40, 0);
    fill(image, pixels);
    process(pipeline, image.data, image.pitch, image.data, image.pitch, 64, 40, PixelFormat::rgba8);
    Frame expected;
    pipeline.process(pixels, expected);
    EXPECT_EQ(max_difference(to_frame(image, 64, PixelFormat::rgba8), expected), 0.0) << pad;
  }
}

TEST(Process, OutputTakesTheGraphsFormat) {
  // tonemap turns float frames into 8-bit ones: the output's rows hold 4-byte pixels.
  DeviceSet devices = DeviceSet::open("all");
  Pipeline pipeline = make_pipeline(devices, "tonemap=op=aces");
  const Frame pixels = random_frame(13, 6, PixelFormat::rgba32f, 8, 4.0f);
  Image in(13 * 16 + 8, 6, 4);
  Image out(13 * 4 + 3, 6, 1);
  fill(in, pixels);
  process(pipeline, in.data, in.pitch, out.data, out.pitch, 13, 6, PixelFormat::rgba32f);
  Frame expected;
  pipeline.process(pixels, expected);
  ASSERT_EQ(expected.format(), PixelFormat::rgba8);
  EXPECT_EQ(max_difference(to_frame(out, 13, PixelFormat::rgba8), expected), 0.0);
  EXPECT_EQ(touched_padding(out, 13 * 4), 0u);
}

TEST(Process, RefusesWhatIsNoImage) {
  DeviceSet devices = DeviceSet::open("all");
  Pipeline pipeline = make_pipeline(devices, "saturation");
  std::vector<std::uint8_t> bytes(4096);
  auto message = [&](const void* in, std::size_t in_pitch, void* out, std::size_t out_pitch, int w,
                     int h) {
    try {
      process(pipeline, in, in_pitch, out, out_pitch, w, h, PixelFormat::rgba8);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message(nullptr, 64, bytes.data(), 64, 4, 4), "process: an image pointer is null");
  EXPECT_EQ(message(bytes.data(), 64, bytes.data(), 15, 4, 4),
            "process: a pitch of 15 bytes is shorter than a row of 4 pixels");
  EXPECT_EQ(message(bytes.data(), 64, bytes.data(), 64, 0, 4),
            "process: image size 0x4 is out of range");
  EXPECT_EQ(message(bytes.data(), 64, bytes.data(), 64, 4, -1),
            "process: image size 4x-1 is out of range");
}

TEST(FrameWrap, IsAViewOfTheCallersMemory) {
  Image image(256, 10, 0);
  Frame f = Frame::wrap(image.data, 60, 10, PixelFormat::rgba8, 256);
  EXPECT_EQ(f.data(), image.data);
  EXPECT_EQ(f.row(3), image.data + 3 * 256);
  EXPECT_EQ(f.pitch(), 256u);
  EXPECT_EQ(f.capacity(), 2560u);
  EXPECT_FALSE(f.empty());

  // A pipeline writes straight into it.
  DeviceSet devices = DeviceSet::open("all");
  Pipeline pipeline = make_pipeline(devices, "saturation=0");
  const Frame input = random_frame(60, 10, PixelFormat::rgba8, 6);
  pipeline.process(input, f);
  EXPECT_EQ(f.data(), image.data);
  Frame expected;
  pipeline.process(input, expected);
  EXPECT_EQ(max_difference(to_frame(image, 60, PixelFormat::rgba8), expected), 0.0);
}

TEST(FrameWrap, RefusesRowsThatCannotBeUsedInPlace) {
  Image image(4096, 4, 0);
  EXPECT_TRUE(Frame::wrappable(image.data, 16, PixelFormat::rgba8, 64));
  EXPECT_TRUE(Frame::wrappable(image.data + 64, 4, PixelFormat::rgba32f, 64));
  EXPECT_FALSE(Frame::wrappable(image.data + 4, 16, PixelFormat::rgba8, 64));  // misaligned rows
  EXPECT_FALSE(Frame::wrappable(image.data, 16, PixelFormat::rgba8, 96));      // pitch
  EXPECT_FALSE(Frame::wrappable(image.data, 17, PixelFormat::rgba8, 64));      // shorter than a row
  EXPECT_FALSE(Frame::wrappable(nullptr, 16, PixelFormat::rgba8, 64));
  try {
    Frame::wrap(image.data, 17, 4, PixelFormat::rgba8, 64);
    FAIL() << "a pitch shorter than a row was taken";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "cannot wrap 17x4 rgba8 pixels with a pitch of 64 bytes as a frame: rows must "
                 "hold the width and start on 64-byte boundaries");
  }
  EXPECT_THROW(Frame::wrap(image.data, 0, 4, PixelFormat::rgba8, 64), Error);
}

}  // namespace
}  // namespace tandem::test
