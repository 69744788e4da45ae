#include "tandem/image_io.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "tandem/error.hpp"

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

}  // namespace

bool is_image_path(const fs::path& path) {
  static const char* known[] = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".hdr", ".pic", ".exr"};
  const std::string ext = lower_extension(path);
  return std::any_of(std::begin(known), std::end(known), [&](const char* k) { return ext == k; });
}

Frame read_image(const fs::path& path, std::size_t row_alignment) {
  enable_openexr();
  std::vector<char> bytes = read_bytes(path);
  normalise_radiance_header(bytes);
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
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw Error("cannot write '" + path.string() + "': directory '" + dir.string() + "' does not exist");
  }
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

  // Hidden, beside the output, with the output's extension so OpenCV picks the same encoder.
  std::string tmp_name = path.stem().string();
  tmp_name.insert(0, 1, '.');
  tmp_name += ".tandem-" + std::to_string(::getpid()) + ext;
  const fs::path tmp = dir / tmp_name;
  bool ok = false;
  std::string why = "the encoder failed";
  try {
    ok = cv::imwrite(tmp.string(), bgr);
  } catch (const cv::Exception& e) {
    why = e.what();
  }
  if (ok) {
    fs::rename(tmp, path, ec);
    if (!ec) return;
    why = ec.message();
  } else if (::access(dir.c_str(), W_OK) != 0) {
    why = std::strerror(errno);
  }
  fs::remove(tmp, ec);
  throw Error("cannot write '" + path.string() + "': " + why);
}

}  // namespace tandem
