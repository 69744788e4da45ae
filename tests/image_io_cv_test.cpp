// Image files in and out (tandem/image_io.hpp): every format written and read back; the pixel
// limit read from each format's header before anything is decoded; writes that fail on a full
// disk (/dev/full) with one clear error and nothing left behind; AtomicFile itself.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "tandem/image_io.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<char>;

class ImageIo : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tandem-image-io-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The names in the test's directory, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  // A 64x48 frame written by write_image() as `name` (float pixels for .hdr and .exr).
  fs::path sample(const std::string& name) {
    const bool wide = name.ends_with(".hdr") || name.ends_with(".exr");
    const fs::path path = dir_ / name;
    write_image(path, random_frame(64, 48, wide ? PixelFormat::rgba32f : PixelFormat::rgba8, 7));
    return path;
  }
  fs::path dir_;
};

Bytes read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& path, const Bytes& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void put_be(Bytes& b, std::size_t at, std::uint32_t v, int n) {
  for (int i = 0; i < n; ++i) b[at + i] = static_cast<char>(v >> (8 * (n - 1 - i)));
}
std::uint32_t le32(const Bytes& b, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}
void put_le(Bytes& b, std::size_t at, std::uint32_t v, int n) {
  for (int i = 0; i < n; ++i) b[at + i] = static_cast<char>(v >> (8 * i));
}
std::size_t find(const Bytes& b, const std::string& what) {
  const auto at = std::search(b.begin(), b.end(), what.begin(), what.end());
  EXPECT_NE(at, b.end()) << "no '" << what << "' in the file";
  return at - b.begin();
}

const char* const kFormats[] = {"png", "jpg", "tif", "bmp", "hdr", "exr"};

TEST_F(ImageIo, EveryFormatRoundTripsAndLeavesOnlyItsFile) {
  for (const std::string ext : kFormats) {
    SCOPED_TRACE(ext);
    const fs::path path = sample("a." + ext);
    const Frame back = read_image(path);
    EXPECT_EQ(back.width(), 64);
    EXPECT_EQ(back.height(), 48);
    fs::remove(path);
    EXPECT_TRUE(entries().empty());
  }
}

// Each sniffed header, as written by OpenCV's own encoders, gives the image's true size: the
// limit refuses one pixel fewer than the image has and takes exactly as many.
TEST_F(ImageIo, PixelLimitCountsTheRealSizeOfEveryFormat) {
  std::vector<fs::path> files;
  for (const std::string ext : kFormats) files.push_back(sample("a." + ext));
  // PPM's header is not read: it is checked after decoding.
  files.push_back(dir_ / "a.ppm");
  ASSERT_TRUE(cv::imwrite(files.back().string(), cv::Mat(48, 64, CV_8UC3, cv::Scalar(1, 2, 3))));
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.filename().string());
    EXPECT_EQ(read_image(path, kMinRowAlignment, 64 * 48).width(), 64);
    const std::string error = error_of([&] { read_image(path, kMinRowAlignment, 64 * 48 - 1); });
    EXPECT_NE(error.find("the image is 64x48 = 3072 pixels, more than the limit of 3071 pixels; "
                         "raise the limit with --max-pixels"),
              std::string::npos)
        << error;
  }
}

// Files that hold nothing but a header claiming 640x480: refused by the limit with that size,
// which only the header can have given, since without a limit the decoder refuses the file.
TEST_F(ImageIo, PixelLimitIsCheckedFromTheHeaderBeforeDecoding) {
  std::vector<fs::path> headers;
  auto keep = [&](const std::string& name, const Bytes& bytes) {
    headers.push_back(dir_ / name);
    write_file(headers.back(), bytes);
  };
  {  // PNG: signature and IHDR
    Bytes b = read_file(sample("a.png"));
    b.resize(33);
    put_be(b, 16, 640, 4);
    put_be(b, 20, 480, 4);
    keep("h.png", b);
  }
  {  // JPEG: up to the end of the baseline start-of-frame segment
    Bytes b = read_file(sample("a.jpg"));
    const std::size_t sof = find(b, "\xff\xc0");
    put_be(b, sof + 5, 480, 2);
    put_be(b, sof + 7, 640, 2);
    b.resize(sof + 2 + ((std::uint8_t(b[sof + 2]) << 8) | std::uint8_t(b[sof + 3])));
    keep("h.jpg", b);
  }
  {  // BMP: file and info headers
    Bytes b = read_file(sample("a.bmp"));
    b.resize(54);
    put_le(b, 18, 640, 4);
    put_le(b, 22, 480, 4);
    keep("h.bmp", b);
  }
  {  // Radiance: the header and the resolution line
    Bytes b = read_file(sample("a.hdr"));
    b.resize(find(b, "\n\n") + 2);
    const std::string resolution = "-Y 480 +X 640\n";
    b.insert(b.end(), resolution.begin(), resolution.end());
    keep("h.hdr", b);
  }
  {  // OpenEXR: the header up to its dataWindow
    Bytes b = read_file(sample("a.exr"));
    const std::string attribute("dataWindow\0box2i\0", 17);
    const std::size_t value = find(b, attribute) + attribute.size() + 4;
    put_le(b, value, 0, 4);
    put_le(b, value + 4, 0, 4);
    put_le(b, value + 8, 639, 4);
    put_le(b, value + 12, 479, 4);
    b.resize(value + 16);
    keep("h.exr", b);
  }
  {  // TIFF (OpenCV writes the directory after the pixels): a directory of two entries alone
    Bytes b(8 + 2 + 2 * 12 + 4, 0);
    const std::string header("II*\0\x08\0\0\0", 8);
    std::copy(header.begin(), header.end(), b.begin());
    put_le(b, 8, 2, 2);
    put_le(b, 10, 256, 2), put_le(b, 12, 4, 2), put_le(b, 14, 1, 4), put_le(b, 18, 640, 4);
    put_le(b, 22, 257, 2), put_le(b, 24, 3, 2), put_le(b, 26, 1, 4), put_le(b, 30, 480, 2);
    keep("h.tif", b);
  }
  for (const fs::path& path : headers) {
    SCOPED_TRACE(path.filename().string());
    const std::string limited = error_of([&] { read_image(path, kMinRowAlignment, 1000); });
    EXPECT_NE(limited.find("the image is 640x480 = 307200 pixels, more than the limit of 1000"),
              std::string::npos)
        << limited;
    const std::string unlimited = error_of([&] { read_image(path, kMinRowAlignment, 0); });
    EXPECT_EQ(unlimited.find("limit"), std::string::npos) << unlimited;
    EXPECT_NE(unlimited.find("cannot read"), std::string::npos) << unlimited;
  }
}

// OpenEXR allocates what a header attribute claims before reading it: a claim past the end of
// the file is refused before OpenCV sees the file (an 888-byte file once asked for 2 GB).
TEST_F(ImageIo, AnOpenExrAttributeClaimingMoreThanTheFileIsRefused) {
  Bytes b = read_file(sample("a.exr"));
  const std::size_t at = find(b, std::string("compression\0compression\0", 24));
  put_le(b, at + 24, 2128478213u, 4);
  const fs::path path = dir_ / "damaged.exr";
  write_file(path, b);
  const std::string message = error_of([&] { read_image(path); });
  EXPECT_NE(message.find("OpenEXR header is damaged"), std::string::npos) << message;
  EXPECT_NE(message.find("'compression' (compression) claims 2128478213 bytes"), std::string::npos)
      << message;
  // The file as written reads.
  EXPECT_EQ(read_image(sample("b.exr")).width(), 64);
}

// OpenEXR reads a channel list to its end whatever the attribute claims: a list longer than its
// claim is refused (an 82-byte file once made OpenEXR allocate 1.9 GB past it).
TEST_F(ImageIo, AnOpenExrChannelListLongerThanItsClaimIsRefused) {
  Bytes b = read_file(sample("a.exr"));
  const std::size_t at = find(b, std::string("channels\0chlist\0", 16));
  put_le(b, at + 16, static_cast<std::uint32_t>(le32(b, at + 16) - 1), 4);
  const fs::path path = dir_ / "damaged.exr";
  write_file(path, b);
  const std::string message = error_of([&] { read_image(path); });
  EXPECT_NE(message.find("'channels' (chlist) claims"), std::string::npos) << message;
  EXPECT_NE(message.find("its value takes more"), std::string::npos) << message;
}

TEST_F(ImageIo, DefaultLimitRefusesAPngClaiming30000x30000) {
  Bytes b = read_file(sample("a.png"));
  b.resize(33);
  put_be(b, 16, 30000, 4);
  put_be(b, 20, 30000, 4);
  write_file(dir_ / "big.png", b);
  const std::string error = error_of([&] { read_image(dir_ / "big.png"); });
  EXPECT_NE(error.find("30000x30000 = 900000000 pixels, more than the limit of 268435456 pixels"),
            std::string::npos)
      << error;
}

// /dev/full fails every write with ENOSPC: a full disk, deterministically and without mount
// rights. Each format's file reaches it through a symbolic link (a device is written in place).
TEST_F(ImageIo, AFullDiskFailsEveryFormatWithOneClearError) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  for (const std::string ext : kFormats) {
    SCOPED_TRACE(ext);
    const fs::path link = dir_ / ("full." + ext);
    fs::create_symlink("/dev/full", link);
    const std::string error =
        error_of([&] { write_image(link, random_frame(64, 48, PixelFormat::rgba8, 3)); });
    EXPECT_EQ(error, "cannot write '" + link.string() + "': No space left on device");
    EXPECT_EQ(entries(), std::vector<std::string>{link.filename().string()});
    fs::remove(link);
  }
  AtomicFile full("/dev/full");
  const std::string error = error_of([&] { full.write(std::string(1 << 20, 'x')); });
  EXPECT_EQ(error, "cannot write '/dev/full': No space left on device");
}

TEST_F(ImageIo, AtomicFileAppearsWholeOnCommitAndNothingIsLeftOtherwise) {
  const fs::path path = dir_ / "report.json";
  {
    AtomicFile file(path);
    file.write("{\"a\": ");
    EXPECT_FALSE(fs::exists(path));
    file.write("1}\n");
    file.commit();
    EXPECT_NE(error_of([&] { file.write("more"); }), "(no error)");
  }
  EXPECT_EQ(entries(), std::vector<std::string>{"report.json"});
  Bytes content = read_file(path);
  EXPECT_EQ(std::string(content.begin(), content.end()), "{\"a\": 1}\n");
  {
    AtomicFile file(path);  // replaces the file only when committed
    file.write("partial");
    EXPECT_EQ(entries().size(), 2u);
  }
  EXPECT_EQ(entries(), std::vector<std::string>{"report.json"});
  content = read_file(path);
  EXPECT_EQ(std::string(content.begin(), content.end()), "{\"a\": 1}\n");

  EXPECT_EQ(error_of([&] { AtomicFile file(dir_); }),
            "cannot write '" + dir_.string() + "': it is a directory");
  EXPECT_EQ(error_of([&] { AtomicFile file(dir_ / "no" / "r.json"); }),
            "cannot write '" + (dir_ / "no" / "r.json").string() + "': directory '" +
                (dir_ / "no").string() + "' does not exist");
}

// Image sequences are named as FFmpeg's image2 names them: one %d or %0Nd, %% a literal '%'.
TEST(ImageSequence, NamesFramesAsFfmpegDoes) {
  EXPECT_TRUE(is_image_sequence("out/f%03d.png"));
  EXPECT_TRUE(is_image_sequence("f%d.jpg"));
  EXPECT_FALSE(is_image_sequence("still.jpg"));
  EXPECT_FALSE(is_image_sequence("100%%.png"));
  EXPECT_FALSE(is_image_sequence("a%d/still.png"));  // only the file name numbers
  EXPECT_EQ(image_sequence_path("out/f%03d.png", 7), std::filesystem::path("out/f007.png"));
  EXPECT_EQ(image_sequence_path("f%03d.png", 1234), std::filesystem::path("f1234.png"));
  EXPECT_EQ(image_sequence_path("f%d.png", 12), std::filesystem::path("f12.png"));
  EXPECT_EQ(image_sequence_path("%%f%02d.png", 3), std::filesystem::path("%f03.png"));
  for (const char* bad : {"f%x.png", "f%3d.png", "f%d%d.png", "f%.png", "f%"}) {
    EXPECT_THROW(is_image_sequence(bad), Error) << bad;
  }
}

}  // namespace
}  // namespace tandem::test
