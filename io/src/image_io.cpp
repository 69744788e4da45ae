#include "tandem/image_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "tandem/error.hpp"
#include "tandem/image_files.hpp"

namespace tandem {
namespace {

namespace fs = std::filesystem;

std::string lower_extension(const fs::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

void enable_openexr() {
  // OpenCV reads and writes OpenEXR only when asked to (a security default of its own).
  static const bool done = [] { return ::setenv("OPENCV_IO_ENABLE_OPENEXR", "1", 0) == 0; }();
  (void)done;
}

std::vector<char> read_bytes(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error("cannot read '" + path.string() + "': no such file");
  if (fs::is_directory(path, ec)) throw Error("cannot read '" + path.string() + "': it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error("cannot read '" + path.string() + "': " + std::strerror(errno));
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.empty()) throw Error("cannot read '" + path.string() + "': the file is empty");
  return bytes;
}

// Radiance files found in the wild may put lines such as VIEW= before the "#?RADIANCE"
// signature, which OpenCV's reader rejects; move the signature to the front.
void normalise_radiance_header(std::vector<char>& bytes) {
  const std::string_view text(bytes.data(), std::min<std::size_t>(bytes.size(), 4096));
  const auto header_end = text.find("\n\n");
  if (header_end == std::string_view::npos || text.starts_with("#?")) return;
  const auto sig = text.find("#?RADIANCE");
  const auto sig2 = text.find("#?RGBE");
  const auto at = std::min(sig, sig2);
  if (at == std::string_view::npos || at > header_end || (at > 0 && text[at - 1] != '\n')) return;
  const auto line_end = text.find('\n', at);
  std::vector<char> fixed(bytes.begin() + at, bytes.begin() + line_end + 1);
  fixed.insert(fixed.end(), bytes.begin(), bytes.begin() + at);
  fixed.insert(fixed.end(), bytes.begin() + line_end + 1, bytes.end());
  bytes.swap(fixed);
}

// libjpeg fills a truncated file with grey and only warns; refuse it instead.
bool truncated_jpeg(const std::vector<char>& bytes) {
  const auto n = bytes.size();
  if (n < 4 || static_cast<unsigned char>(bytes[0]) != 0xFF ||
      static_cast<unsigned char>(bytes[1]) != 0xD8) {
    return false;
  }
  // The end-of-image marker, allowing trailing padding some writers add.
  for (std::size_t i = n - 1; i > 0 && n - i < 4096; --i) {
    if (static_cast<unsigned char>(bytes[i - 1]) == 0xFF &&
        static_cast<unsigned char>(bytes[i]) == 0xD9) {
      return false;
    }
  }
  return true;
}

// ---- image sizes from file headers, read before anything is decoded or allocated ----

struct ImageSize {
  std::uint64_t width = 0, height = 0;
};

std::uint64_t byte_at(const std::vector<char>& b, std::size_t i) {
  return static_cast<unsigned char>(b[i]);
}
std::uint64_t be16(const std::vector<char>& b, std::size_t i) {
  return byte_at(b, i) << 8 | byte_at(b, i + 1);
}
std::uint64_t le16(const std::vector<char>& b, std::size_t i) {
  return byte_at(b, i + 1) << 8 | byte_at(b, i);
}
std::uint64_t be32(const std::vector<char>& b, std::size_t i) {
  return be16(b, i) << 16 | be16(b, i + 2);
}
std::uint64_t le32(const std::vector<char>& b, std::size_t i) {
  return le16(b, i + 2) << 16 | le16(b, i);
}
std::uint64_t abs32(std::uint64_t v) {  // a little-endian int32 field, as a magnitude
  const auto s = static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
  return s < 0 ? 0ull - static_cast<std::int64_t>(s) : static_cast<std::uint64_t>(s);
}
bool starts_with(const std::vector<char>& b, std::string_view prefix) {
  return b.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), b.begin());
}

// PNG: the IHDR chunk comes first, width and height big-endian at bytes 16 and 20.
std::optional<ImageSize> png_size(const std::vector<char>& b) {
  if (!starts_with(b, "\x89PNG\r\n\x1a\n") || b.size() < 24 ||
      std::string_view(&b[12], 4) != "IHDR") {
    return std::nullopt;
  }
  return ImageSize{be32(b, 16), be32(b, 20)};
}

// JPEG: the first start-of-frame segment (SOF0..SOF15 but DHT, JPG and DAC) before the scan.
std::optional<ImageSize> jpeg_size(const std::vector<char>& b) {
  if (!starts_with(b, "\xff\xd8")) return std::nullopt;
  std::size_t i = 2;
  while (i < b.size()) {
    if (byte_at(b, i) != 0xFF) return std::nullopt;
    while (i < b.size() && byte_at(b, i) == 0xFF) ++i;  // fill bytes
    if (i >= b.size()) return std::nullopt;
    const auto marker = byte_at(b, i++);
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8)) continue;  // no length field
    if (marker == 0xD9 || marker == 0xDA || i + 2 > b.size()) return std::nullopt;
    const auto length = be16(b, i);
    const bool sof =
        marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (sof) {
      if (i + 7 > b.size()) return std::nullopt;
      return ImageSize{be16(b, i + 5), be16(b, i + 3)};
    }
    i += length;
  }
  return std::nullopt;
}

// BMP: an OS/2 core header (16-bit sizes) or a Windows header (signed 32-bit; a negative height
// is a top-down bitmap).
std::optional<ImageSize> bmp_size(const std::vector<char>& b) {
  if (!starts_with(b, "BM") || b.size() < 26) return std::nullopt;
  if (le32(b, 14) == 12) return ImageSize{le16(b, 18), le16(b, 20)};
  return ImageSize{abs32(le32(b, 18)), abs32(le32(b, 22))};
}

// Radiance: the resolution line after the header's blank line, such as "-Y 512 +X 768".
std::optional<ImageSize> radiance_size(const std::vector<char>& b) {
  if (!starts_with(b, "#?")) return std::nullopt;
  const std::string_view text(b.data(), std::min<std::size_t>(b.size(), 1 << 16));
  const auto blank = text.find("\n\n");
  if (blank == std::string_view::npos) return std::nullopt;
  const auto line_end = text.find('\n', blank + 2);
  const std::string line(
      text.substr(blank + 2, line_end == std::string_view::npos ? 64 : line_end - blank - 2));
  char first[3], second[3];
  unsigned long long n1 = 0, n2 = 0;
  if (std::sscanf(line.c_str(), "%2s %llu %2s %llu", first, &n1, second, &n2) != 4) {
    return std::nullopt;
  }
  return first[1] == 'Y' ? ImageSize{n2, n1} : ImageSize{n1, n2};
}

// TIFF (classic, not BigTIFF): ImageWidth (256) and ImageLength (257) in the first IFD.
std::optional<ImageSize> tiff_size(const std::vector<char>& b) {
  const bool le = starts_with(b, std::string_view("II*\0", 4));
  if (!le && !starts_with(b, std::string_view("MM\0*", 4))) return std::nullopt;
  auto u16 = [&](std::size_t i) { return le ? le16(b, i) : be16(b, i); };
  auto u32 = [&](std::size_t i) { return le ? le32(b, i) : be32(b, i); };
  if (b.size() < 8) return std::nullopt;
  const std::uint64_t ifd = u32(4);
  if (ifd + 2 > b.size()) return std::nullopt;
  std::optional<std::uint64_t> width, height;
  for (std::uint64_t k = 0, n = u16(ifd); k < n; ++k) {
    const std::uint64_t e = ifd + 2 + 12 * k;
    if (e + 12 > b.size()) break;
    const auto tag = u16(e), type = u16(e + 2);
    if ((tag != 256 && tag != 257) || (type != 3 && type != 4)) continue;
    (tag == 256 ? width : height) = type == 3 ? u16(e + 8) : u32(e + 8);
  }
  if (!width || !height) return std::nullopt;
  return ImageSize{*width, *height};
}

// An OpenEXR header's name or type at `i`, ended by a zero byte, moving `i` past it; none when
// the file ends first.
std::optional<std::string_view> exr_string(const std::vector<char>& b, std::size_t& i) {
  const auto end = std::find(b.begin() + static_cast<std::ptrdiff_t>(i), b.end(), '\0');
  if (end == b.end()) return std::nullopt;
  const std::string_view out(&b[i], static_cast<std::size_t>(end - b.begin()) - i);
  i = static_cast<std::size_t>(end - b.begin()) + 1;
  return out;
}

// OpenEXR (single part): the header's dataWindow attribute, a box2i of xmin, ymin, xmax, ymax.
std::optional<ImageSize> exr_size(const std::vector<char>& b) {
  if (!starts_with(b, "\x76\x2f\x31\x01") || b.size() < 8) return std::nullopt;
  const auto flags = le32(b, 4);
  if (flags & (0x800 | 0x1000)) return std::nullopt;  // deep data or multi-part
  std::size_t i = 8;
  while (i < b.size()) {
    const auto name = exr_string(b, i);
    if (!name || name->empty()) return std::nullopt;
    const auto type = exr_string(b, i);
    if (!type || i + 4 > b.size()) return std::nullopt;
    const std::uint64_t size = le32(b, i);
    i += 4;
    if (*name == "dataWindow" && *type == "box2i" && size == 16 && i + 16 <= b.size()) {
      const auto s = [&](std::size_t at) {
        return std::int64_t(std::int32_t(std::uint32_t(le32(b, at))));
      };
      const std::int64_t w = s(i + 8) - s(i) + 1, h = s(i + 12) - s(i + 4) + 1;
      if (w < 0 || h < 0) return std::nullopt;
      return ImageSize{std::uint64_t(w), std::uint64_t(h)};
    }
    if (size > b.size() - i) return std::nullopt;
    i += size;
  }
  return std::nullopt;
}

// OpenEXR reads each header attribute into memory of the size the attribute claims, or of what
// its value says (a channel list read to its end, a preview's width x height), before any check:
// damaged files of 82 and 888 bytes made it allocate 1.9 and 2 GB (fuzz/regressions/image).
// Every attribute (every part's, for multi-part files) must fit in the file and, for the types
// OpenEXR reads by their own rules, take exactly the bytes it claims; the first that does not is
// described, or nothing is when all do (a header cut short is left to OpenCV to refuse).
std::optional<std::string> exr_damage(const std::vector<char>& b) {
  if (!starts_with(b, "\x76\x2f\x31\x01") || b.size() < 8) return std::nullopt;
  static const std::map<std::string_view, std::uint64_t> fixed = {{"box2i", 16},
                                                                  {"box2f", 16},
                                                                  {"v2i", 8},
                                                                  {"v2f", 8},
                                                                  {"v2d", 16},
                                                                  {"v3i", 12},
                                                                  {"v3f", 12},
                                                                  {"v3d", 24},
                                                                  {"m33f", 36},
                                                                  {"m33d", 72},
                                                                  {"m44f", 64},
                                                                  {"m44d", 128},
                                                                  {"int", 4},
                                                                  {"float", 4},
                                                                  {"double", 8},
                                                                  {"compression", 1},
                                                                  {"lineOrder", 1},
                                                                  {"envmap", 1},
                                                                  {"deepImageState", 1},
                                                                  {"chromaticities", 32},
                                                                  {"keycode", 28},
                                                                  {"timecode", 8},
                                                                  {"rational", 8},
                                                                  {"tiledesc", 9}};
  const bool multi_part = le32(b, 4) & 0x1000;
  // The bytes a value of `type` at `at` takes by OpenEXR's own reading; none where it reads
  // what the attribute claims.
  auto own_size = [&](std::string_view type, std::size_t at,
                      std::uint64_t claimed) -> std::optional<std::uint64_t> {
    if (const auto it = fixed.find(type); it != fixed.end()) return it->second;
    if (type == "preview") {
      if (claimed < 8) return std::uint64_t(8);
      return 8 + std::uint64_t(le32(b, at)) * le32(b, at + 4) * 4;
    }
    if (type == "chlist") {
      std::size_t i = at;
      for (;;) {  // name, then 16 bytes, until an empty name
        if (i >= at + claimed) return std::uint64_t(claimed) + 1;  // runs past its claim
        const auto name = exr_string(b, i);
        if (!name) return std::uint64_t(claimed) + 1;
        if (name->empty()) return std::uint64_t(i - at);
        i += 16;
      }
    }
    return std::nullopt;
  };
  std::size_t i = 8;
  for (;;) {  // one header, or each part's until an empty one
    bool first = true;
    for (;;) {
      const auto name = exr_string(b, i);
      if (!name) return std::nullopt;
      if (name->empty()) {
        if (first && multi_part) return std::nullopt;  // the empty header ends the parts
        break;
      }
      first = false;
      const auto type = exr_string(b, i);
      if (!type || i + 4 > b.size()) return std::nullopt;
      const std::uint64_t size = le32(b, i);
      i += 4;
      const std::string what =
          "its OpenEXR header is damaged: attribute '" + std::string(name->substr(0, 64)) + "' (" +
          std::string(type->substr(0, 32)) + ") claims " + std::to_string(size) + " bytes";
      if (size > b.size() - i) {
        return what + ", and " + std::to_string(b.size() - i) + " are left in the file";
      }
      if (const auto own = own_size(*type, i, size); own && *own != size) {
        return what + ", and its value takes " + (*own > size ? "more" : "fewer");
      }
      i += size;
    }
    if (!multi_part) return std::nullopt;
  }
}

std::optional<ImageSize> size_from_header(const std::vector<char>& b) {
  for (auto sniff : {png_size, jpeg_size, bmp_size, radiance_size, tiff_size, exr_size}) {
    if (auto size = sniff(b)) return size;
  }
  return std::nullopt;
}

void check_pixel_limit(const fs::path& path, ImageSize size, std::uint64_t max_pixels) {
  const std::uint64_t pixels = size.width != 0 && size.height > UINT64_MAX / size.width
                                   ? UINT64_MAX
                                   : size.width * size.height;
  if (max_pixels == 0 || pixels <= max_pixels) return;
  throw Error("cannot read '" + path.string() + "': the image is " + std::to_string(size.width) +
              "x" + std::to_string(size.height) + " = " + std::to_string(pixels) +
              " pixels, more than the limit of " + std::to_string(max_pixels) +
              " pixels; raise the limit with --max-pixels N (tandem) or read_image()'s max_pixels");
}

std::atomic<unsigned> temporary_files{0};

// OpenCV hands the bytes to the first of its decoders whose signature matches, and Debian's
// OpenCV has a DICOM decoder (GDCM) that takes any file with "DICM" at byte 128, asked before
// OpenEXR's and the others tandem does not document; GDCM aborts the process on some damaged
// files (fuzz/regressions/image). Such a file goes to OpenCV only when a decoder that is asked
// before DICOM's claims it: PNG, JPEG, BMP, Radiance or TIFF, by the whole signature that
// decoder checks ("#?" alone is not Radiance's: "#?I..." reached GDCM).
bool taken_for_dicom(const std::vector<char>& b) {
  if (b.size() < 132 || std::string_view(&b[128], 4) != "DICM") return false;
  using std::string_view;
  for (string_view magic :
       {string_view("\x89PNG\r\n\x1a\n"), string_view("\xff\xd8\xff"), string_view("BM"),
        string_view("#?RGBE"), string_view("#?RADIANCE"), string_view("II*\0", 4),
        string_view("MM\0*", 4)}) {
    if (starts_with(b, magic)) return false;
  }
  return true;
}

}  // namespace

namespace {

// Filters that read an image file (overlay=file=) read it here once this library is loaded.
const bool kImageFileReaderInstalled = [] {
  install_image_file_reader([](const std::string& path) { return read_image(path); });
  return true;
}();

}  // namespace

bool is_image_path(const fs::path& path) {
  static const char* known[] = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".hdr", ".pic", ".exr"};
  const std::string ext = lower_extension(path);
  return std::any_of(std::begin(known), std::end(known), [&](const char* k) { return ext == k; });
}

namespace {

// Where the number goes in an image sequence's file name: the directive's first and one past its
// last character, and its width (0: none); npos when there is none.
struct NumberField {
  std::size_t begin = std::string::npos, end = std::string::npos;
  int width = 0;
};

NumberField number_field(const std::string& name) {
  NumberField field;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] != '%') continue;
    if (i + 1 < name.size() && name[i + 1] == '%') {
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    int width = 0;
    if (j < name.size() && name[j] == '0') {
      ++j;
      if (j < name.size() && name[j] >= '1' && name[j] <= '9') width = name[j++] - '0';
    }
    if (j >= name.size() || name[j] != 'd' || field.begin != std::string::npos) {
      throw Error("output '" + name +
                  "': '%' must be one %d or %0Nd (N up to 9) numbering the "
                  "images, or %% for a '%'");
    }
    field = {i, j + 1, width};
    i = j;
  }
  return field;
}

}  // namespace

bool is_image_sequence(const fs::path& path) {
  return number_field(path.filename().string()).begin != std::string::npos;
}

fs::path image_sequence_path(const fs::path& pattern, std::int64_t number) {
  const std::string name = pattern.filename().string();
  const NumberField field = number_field(name);
  std::string digits = std::to_string(number);
  if (static_cast<int>(digits.size()) < field.width) {
    digits.insert(0, static_cast<std::size_t>(field.width) - digits.size(), '0');
  }
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (i == field.begin) {
      out += digits;
      i = field.end - 1;
    } else if (name[i] == '%') {
      out += '%';  // "%%"
      ++i;
    } else {
      out += name[i];
    }
  }
  return pattern.parent_path() / out;
}

Frame read_image(const fs::path& path, std::size_t row_alignment, std::uint64_t max_pixels) {
  enable_openexr();
  std::vector<char> bytes = read_bytes(path);
  normalise_radiance_header(bytes);
  // OpenCV's own limit (OPENCV_IO_MAX_IMAGE_PIXELS) is read once when it loads, and allocates
  // the whole image before the first row is decoded: check the header's claim first.
  if (const auto size = size_from_header(bytes)) check_pixel_limit(path, *size, max_pixels);
  if (const auto damage = exr_damage(bytes)) {
    throw Error("cannot read '" + path.string() + "': " + *damage);
  }
  if (taken_for_dicom(bytes)) {
    throw Error("cannot read '" + path.string() +
                "': not a supported image, or the file is truncated or corrupt");
  }
  if (truncated_jpeg(bytes)) {
    throw Error("cannot read '" + path.string() + "': the JPEG file is truncated");
  }
  cv::Mat m;
  try {
    m = cv::imdecode(bytes, cv::IMREAD_UNCHANGED | cv::IMREAD_ANYDEPTH | cv::IMREAD_ANYCOLOR);
  } catch (const cv::Exception&) {
    m.release();
  }
  if (m.empty()) {
    throw Error("cannot read '" + path.string() +
                "': not a supported image, or the file is truncated or corrupt");
  }
  // Formats whose header was not read above.
  check_pixel_limit(path, {std::uint64_t(m.cols), std::uint64_t(m.rows)}, max_pixels);
  const bool wide = m.depth() != CV_8U;
  if (m.depth() == CV_64F || m.depth() == CV_32S) m.convertTo(m, CV_32F);
  cv::Mat rgba;
  const int ch = m.channels();
  const int code = ch == 1 ? cv::COLOR_GRAY2RGBA : ch == 3 ? cv::COLOR_BGR2RGBA : cv::COLOR_BGRA2RGBA;
  cv::cvtColor(m, rgba, code);
  Frame frame(rgba.cols, rgba.rows, wide ? PixelFormat::rgba32f : PixelFormat::rgba8, row_alignment);
  if (wide) {
    // Integer files map their full range to 0..1; cvtColor gave alpha that range's maximum.
    const double scale = m.depth() == CV_16U ? 1.0 / 65535
                         : m.depth() == CV_16S ? 1.0 / 32767
                         : m.depth() == CV_8S  ? 1.0 / 127
                                               : 1.0;
    cv::Mat f;
    rgba.convertTo(f, CV_32FC4, scale);
    rgba = f;
  }
  const std::size_t row_bytes = static_cast<std::size_t>(rgba.cols) * bytes_per_pixel(frame.format());
  for (int y = 0; y < rgba.rows; ++y) std::memcpy(frame.row(y), rgba.ptr(y), row_bytes);
  return frame;
}

void write_image(const fs::path& path, const Frame& frame) {
  enable_openexr();
  const std::string ext = lower_extension(path);
  if (!is_image_path(path)) {
    throw Error("cannot write '" + path.string() + "': unknown image format '" + ext +
                "' (png, jpg, tif, bmp, hdr, exr)");
  }
  // First, so that an unwritable place fails before the encoding.
  AtomicFile file(path);
  const bool float_file = ext == ".hdr" || ext == ".pic" || ext == ".exr";
  const bool keeps_alpha = ext == ".png" || ext == ".tif" || ext == ".tiff" || ext == ".exr";
  const bool is_float = frame.format() == PixelFormat::rgba32f;

  cv::Mat view(frame.height(), frame.width(), is_float ? CV_32FC4 : CV_8UC4,
               const_cast<std::uint8_t*>(frame.data()), frame.pitch());
  cv::Mat pixels;
  if (float_file && !is_float) {
    view.convertTo(pixels, CV_32FC4, 1.0 / 255);
  } else if (!float_file && is_float) {
    view.convertTo(pixels, CV_8UC4, 255.0);  // saturates to 0..255
  } else {
    pixels = view;
  }
  cv::Mat bgr;
  cv::cvtColor(pixels, bgr, keeps_alpha ? cv::COLOR_RGBA2BGRA : cv::COLOR_RGBA2BGR);

  // Encoded in memory and written here rather than by cv::imwrite, whose encoders do not all
  // check their writes (its BMP writer leaves a truncated file on a full disk and reports
  // success): every byte then goes through AtomicFile's checked writes and fsync.
  std::vector<uchar> encoded;
  std::string why = "the encoder failed";
  try {
    if (cv::imencode(ext, bgr, encoded) && !encoded.empty()) why.clear();
  } catch (const cv::Exception& e) {
    why += ": " + e.err;
  } catch (const std::exception& e) {  // OpenEXR's own
    why += ": " + std::string(e.what());
  }
  if (!why.empty() && float_file) {
    // OpenCV cannot encode these formats in memory: it writes and reads back a file of its own.
    why += " (OpenCV encodes " + ext +
           " files through a temporary file in $OPENCV_TEMP_PATH, else /tmp: is it full or "
           "unwritable?)";
  }
  if (!why.empty()) throw Error("cannot write '" + path.string() + "': " + why);
  file.write(encoded.data(), encoded.size());
  file.commit();
}

AtomicFile::AtomicFile(fs::path path) : path_(std::move(path)) {
  std::error_code ec;
  const fs::file_status status = fs::status(path_, ec);  // follows a symbolic link
  if (fs::is_directory(status)) fail("it is a directory");
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd_ < 0) fail(std::strerror(errno));
    return;
  }
  const fs::path dir = path_.has_parent_path() ? path_.parent_path() : fs::path(".");
  if (!fs::exists(dir, ec)) fail("directory '" + dir.string() + "' does not exist");
  // Hidden, beside the file (a rename stays within one file system), one name per process and
  // call; the name is cut short enough to stay within NAME_MAX.
  std::string name = path_.filename().string().substr(0, 200);
  name.insert(0, 1, '.');  // (not "." + name: GCC 12's -Wrestrict false positive)
  name += ".tandem-" + std::to_string(::getpid()) + "-" + std::to_string(temporary_files++);
  temporary_ = dir / name;
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    const int error = errno;
    temporary_.clear();  // not ours to remove
    fail(std::strerror(error));
  }
}

AtomicFile::~AtomicFile() {
  discard();
}

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
  temporary_.clear();
}

void AtomicFile::fail(const std::string& why) {
  discard();
  throw Error("cannot write '" + path_.string() + "': " + why);
}

void AtomicFile::write(const void* data, std::size_t size) {
  if (fd_ < 0) fail("the file was already committed or given up");
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, bytes, std::min<std::size_t>(size, 1 << 30));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(n < 0 ? std::strerror(errno) : "nothing was written");
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
}

void AtomicFile::commit() {
  if (fd_ < 0) fail("the file was already committed or given up");
  // A file system may report a full disk or an I/O error only when the data reach the device.
  if (!temporary_.empty() && ::fsync(fd_) != 0) fail(std::strerror(errno));
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(std::strerror(errno));
  if (!temporary_.empty() && ::rename(temporary_.c_str(), path_.c_str()) != 0) {
    fail(std::strerror(errno));
  }
  temporary_.clear();
}

}  // namespace tandem
