// tandem-bench's filter cases and OpenCV's equivalents (filter_cases.hpp).
#include "filter_cases.hpp"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>

#ifdef TANDEM_BENCH_OPENCV
#include <opencv2/imgproc.hpp>
#include <opencv2/photo.hpp>
#endif

namespace tandem::bench {

namespace {

#ifdef TANDEM_BENCH_OPENCV
// The same pixels as a frame, as OpenCV sees them (no copy).
cv::Mat as_mat(const Frame& f) {
  const int type = f.format() == PixelFormat::rgba8 ? CV_8UC4 : CV_32FC4;
  return cv::Mat(f.height(), f.width(), type, const_cast<std::uint8_t*>(f.data()), f.pitch());
}

// BT.709's luma weights of R, G, B, as saturation and eq take them.
constexpr float kLuma[3] = {0.2126f, 0.7152f, 0.0722f};
#endif

// A 33-point .cube of a smooth grade for lut3d's case, written once to the temporary directory.
std::string bench_cube() {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "tandem-bench-33.cube";
  std::ofstream out(path);
  out << "LUT_3D_SIZE 33\n";
  for (int b = 0; b < 33; ++b) {
    for (int g = 0; g < 33; ++g) {
      for (int r = 0; r < 33; ++r) {
        const double x = r / 32.0, y = g / 32.0, z = b / 32.0;
        out << std::sqrt(x) * 0.9 + 0.05 * y << ' ' << y * y << ' '
            << 0.5 + 0.5 * std::sin(3 * z + x) << '\n';
      }
    }
  }
  return path.string();
}

}  // namespace

std::vector<FilterCase> filter_cases() {
  std::vector<FilterCase> cases;
  const std::string cube = bench_cube();
  auto add = [&](std::string label, std::string graph, PixelFormat format,
                 std::vector<std::string> needs, std::string opencv_label,
                 [[maybe_unused]] auto opencv) {
    FilterCase c{std::move(label), std::move(graph), format, std::move(needs),
                 std::move(opencv_label)};
#ifdef TANDEM_BENCH_OPENCV
    c.opencv = opencv;
#endif
    cases.push_back(std::move(c));
  };
#ifdef TANDEM_BENCH_OPENCV
  // Runs fn(src, dst) over the ring's frames converted once by `convert`.
  auto on_ring = [](std::function<cv::Mat(const Frame&)> convert,
                    std::function<void(const cv::Mat&, cv::Mat&)> fn) -> OpenCvPrepare {
    return [convert, fn](const std::vector<Frame>& ring) -> OpenCvRun {
      auto src = std::make_shared<std::vector<cv::Mat>>();
      for (const Frame& f : ring) src->push_back(convert(f));
      auto dst = std::make_shared<cv::Mat>();
      return [src, dst, fn](int i) { fn((*src)[static_cast<std::size_t>(i) % src->size()], *dst); };
    };
  };
  auto view = [](const Frame& f) { return as_mat(f); };
  auto rgb = [](const Frame& f) {
    cv::Mat out;
    cv::cvtColor(as_mat(f), out, cv::COLOR_RGBA2RGB);
    return out;
  };
  auto gaussian = [&](double sigma) {
    return on_ring(view, [sigma](const cv::Mat& s, cv::Mat& d) {
      cv::GaussianBlur(s, d, cv::Size(0, 0), sigma, sigma, cv::BORDER_REFLECT_101);
    });
  };
  auto box = [&](int r) {
    return on_ring(view, [r](const cv::Mat& s, cv::Mat& d) {
      cv::blur(s, d, cv::Size(2 * r + 1, 2 * r + 1), cv::Point(-1, -1), cv::BORDER_REFLECT_101);
    });
  };
  // Our bilateral: radius ceil(2 sigma_s), range sigma on values normalised to 0..1.
  const double sigma_s = 3, sigma_r = 0.1;
  const int bilateral_d = 2 * static_cast<int>(std::ceil(2 * sigma_s)) + 1;
  auto bilateral = on_ring(rgb, [=](const cv::Mat& s, cv::Mat& d) {
    cv::bilateralFilter(s, d, bilateral_d, sigma_r * 255, sigma_s, cv::BORDER_REFLECT_101);
  });
  // out = Y + a (c - Y) with Y = 0.2126 R + 0.7152 G + 0.0722 B, as a 4x4 matrix; alpha kept.
  auto saturation_matrix = [](float a) {
    cv::Matx44f m = cv::Matx44f::zeros();
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) m(i, j) = (1 - a) * kLuma[j] + (i == j ? a : 0.0f);
    }
    m(3, 3) = 1;
    return m;
  };
  auto saturation = [&](float a) {
    const cv::Matx44f m = saturation_matrix(a);
    return on_ring(view, [m](const cv::Mat& s, cv::Mat& d) { cv::transform(s, d, m); });
  };
  // eq with gamma 1: out = l + s (c - Y), l = k (Y - 0.5) + 0.5 + b, as a 4x5 affine matrix (the
  // offset in 8-bit levels); alpha kept.
  auto eq = [&](float b, float k, float a) {
    cv::Matx<float, 4, 5> m = cv::Matx<float, 4, 5>::zeros();
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) m(i, j) = (k - a) * kLuma[j] + (i == j ? a : 0.0f);
      m(i, 4) = (0.5f * (1 - k) + b) * 255;
    }
    m(3, 3) = 1;
    return on_ring(view, [m](const cv::Mat& s, cv::Mat& d) { cv::transform(s, d, m); });
  };
  // unsharp: in + a (in - mean of the window): cv::blur, then cv::addWeighted (1 + a, -a).
  auto unsharp = [&](double a, int r) {
    return on_ring(view, [a, r](const cv::Mat& s, cv::Mat& d) {
      cv::Mat mean;
      cv::blur(s, mean, cv::Size(2 * r + 1, 2 * r + 1), cv::Point(-1, -1), cv::BORDER_REFLECT_101);
      cv::addWeighted(s, 1 + a, mean, -a, 0, d);
    });
  };
  // Non-local means with tandem's defaults' windows: 3x3 patches, an 11x11 search, h 10.
  auto denoise = on_ring(rgb, [](const cv::Mat& s, cv::Mat& d) {
    cv::fastNlMeansDenoisingColored(s, d, 10, 10, 3, 11);
  });
  // cv::resize to the size of scale=W:H with the flag's interpolation.
  auto resize = [&](int w, int h, const std::string& flags) {
    const int interpolation = flags == "bilinear"  ? cv::INTER_LINEAR
                              : flags == "lanczos" ? cv::INTER_LANCZOS4
                              : flags == "area"    ? cv::INTER_AREA
                                                   : cv::INTER_CUBIC;
    return on_ring(view, [w, h, interpolation](const cv::Mat& s, cv::Mat& d) {
      cv::resize(s, d, cv::Size(w, h), 0, 0, interpolation);
    });
  };
  auto crop = on_ring(
      view, [](const cv::Mat& s, cv::Mat& d) { s(cv::Rect(320, 180, 1280, 720)).copyTo(d); });
  auto pad = on_ring(view, [](const cv::Mat& s, cv::Mat& d) {
    cv::copyMakeBorder(s, d, 60, 1200 - s.rows - 60, 64, 2048 - s.cols - 64, cv::BORDER_CONSTANT,
                       cv::Scalar(0, 0, 0, 255));
  });
  auto rotate = on_ring(
      view, [](const cv::Mat& s, cv::Mat& d) { cv::rotate(s, d, cv::ROTATE_90_CLOCKWISE); });
  auto hflip = on_ring(view, [](const cv::Mat& s, cv::Mat& d) { cv::flip(s, d, 1); });
  // fade to black at a level: R, G, B times it, alpha kept.
  auto fade = on_ring(
      view, [](const cv::Mat& s, cv::Mat& d) { cv::multiply(s, cv::Scalar(0.4, 0.4, 0.4, 1), d); });
  // overlay picture in picture: the frame copied, then its top left 480x270 blended over
  // (1400, 760) by that picture's alpha with cv::blendLinear (weights alpha / 255 and its
  // complement, the output's alpha blended alike).
  auto overlay = on_ring(view, [](const cv::Mat& s, cv::Mat& d) {
    s.copyTo(d);
    const cv::Mat over = s(cv::Rect(0, 0, 480, 270));
    cv::Mat roi = d(cv::Rect(1400, 760, 480, 270));
    cv::Mat alpha, weight, rest, mixed;
    cv::extractChannel(over, alpha, 3);
    alpha.convertTo(weight, CV_32F, 1.0 / 255);
    cv::subtract(cv::Scalar::all(1.0), weight, rest);
    cv::blendLinear(over, roi, weight, rest, mixed);
    mixed.copyTo(roi);
  });
  // blend screen at opacity 0.5 over a saturated copy: the saturation as above (cv::transform),
  // screen as 255 - (255 - a)(255 - b) / 255 (cv::subtract, cv::multiply), the opacity by
  // cv::addWeighted.
  auto screen = [&](float a) {
    const cv::Matx44f m = saturation_matrix(a);
    return on_ring(view, [m](const cv::Mat& s, cv::Mat& d) {
      cv::Mat top, inverse_base, inverse_top, product;
      cv::transform(s, top, m);
      cv::subtract(cv::Scalar::all(255), s, inverse_base);
      cv::subtract(cv::Scalar::all(255), top, inverse_top);
      cv::multiply(inverse_base, inverse_top, product, 1.0 / 255);
      cv::subtract(cv::Scalar::all(255), product, top);
      cv::addWeighted(s, 0.5, top, 0.5, 0, d);
    });
  };
  // OpenCV has no 3D table: a direct loop over the pixels stands in (lut3d's host reference,
  // rows in parallel with TBB), on the same cores.
  auto direct_lut = [cube](const std::vector<Frame>& ring) -> OpenCvRun {
    const tandem::FilterSpec& spec = tandem::FilterRegistry::instance().get("lut3d");
    tandem::Params params(spec.params);
    params.set_text("file", cube);
    std::shared_ptr<tandem::Filter> filter = spec.make(params);
    auto out = std::make_shared<Frame>(ring[0].width(), ring[0].height(), ring[0].format());
    return [filter, out, frames = &ring](int i) {
      const Frame* inputs[] = {&(*frames)[static_cast<std::size_t>(i) % frames->size()]};
      filter->reference(inputs, *out);
    };
  };
  auto reinhard = on_ring(rgb, [](const cv::Mat& s, cv::Mat& d) {
    static const cv::Ptr<cv::TonemapReinhard> op = cv::createTonemapReinhard(2.2f, 0, 1, 0);
    op->process(s, d);
  });
  const OpenCvPrepare no_peer;
  auto drago = on_ring(rgb, [](const cv::Mat& s, cv::Mat& d) {
    static const cv::Ptr<cv::TonemapDrago> op = cv::createTonemapDrago(2.2f, 1, 0.85f);
    op->process(s, d);
  });
#else
  const int bilateral_d = 13;
  auto gaussian = [](double) { return 0; };
  auto box = [](int) { return 0; };
  auto saturation = [](float) { return 0; };
  auto eq = [](float, float, float) { return 0; };
  auto unsharp = [](double, int) { return 0; };
  auto resize = [](int, int, const std::string&) { return 0; };
  auto screen = [](float) { return 0; };
  const int direct_lut = 0, crop = 0, pad = 0, rotate = 0, hflip = 0, fade = 0, overlay = 0;
  const int bilateral = 0, reinhard = 0, drago = 0, denoise = 0, no_peer = 0;
#endif
  const PixelFormat u8 = PixelFormat::rgba8;
  const PixelFormat f32 = PixelFormat::rgba32f;
  add("gaussian sigma=2", "gaussian=sigma=2", u8, {"gaussian"},
      "cv::GaussianBlur CV_8UC4, Size(0,0), sigma 2, BORDER_REFLECT_101", gaussian(2));
  add("gaussian sigma=8", "gaussian=sigma=8", u8, {"gaussian"},
      "cv::GaussianBlur CV_8UC4, Size(0,0), sigma 8, BORDER_REFLECT_101", gaussian(8));
  add("box radius=1", "box=radius=1", u8, {"box"}, "cv::blur CV_8UC4, 3x3, BORDER_REFLECT_101",
      box(1));
  add("box radius=64", "box=radius=64", u8, {"box"},
      "cv::blur CV_8UC4, 129x129, BORDER_REFLECT_101", box(64));
  add("bilateral defaults", "bilateral", u8, {"bilateral"},
      "cv::bilateralFilter CV_8UC3 (OpenCV takes 1 or 3 channels, tandem does 4), d " +
          std::to_string(bilateral_d) + ", sigmaColor 25.5, sigmaSpace 3, BORDER_REFLECT_101",
      bilateral);
  add("unsharp", "unsharp", u8, {"unsharp"},
      "cv::blur CV_8UC4 5x5 BORDER_REFLECT_101, then cv::addWeighted(src, 2, mean, -1)",
      unsharp(1, 2));
  add("denoise", "denoise", u8, {"denoise"},
      "cv::fastNlMeansDenoisingColored CV_8UC3, h 10, hColor 10, template 3, search 11 (in "
      "CIELAB, sliding sums: a patch's distance costs a constant, where tandem's kernel "
      "compares the 9 pixels of each patch)",
      denoise);
  add("saturation 1.3", "saturation=1.3", u8, {"saturation"},
      "cv::transform CV_8UC4 with the 4x4 matrix of Y + 1.3 (c - Y)", saturation(1.3f));
  add("eq", "eq=brightness=0.05:contrast=1.2:saturation=1.3", u8, {"eq"},
      "cv::transform CV_8UC4 with the 4x5 affine matrix of eq's gamma-1 curve",
      eq(0.05f, 1.2f, 1.3f));
  // Sizes of their own, whatever --size says: 1080p input frames down by half (OpenCV and tandem
  // both take 2x2 blocks there), up to 2160p, and down to 720p (by 2/3: taps from the table).
  add("scale=960:540 bilinear", "scale=960:540:flags=bilinear", u8, {"scale"},
      "cv::resize CV_8UC4 to 960x540, INTER_LINEAR", resize(960, 540, "bilinear"));
  add("scale=3840:2160 bicubic", "scale=3840:2160:flags=bicubic", u8, {"scale"},
      "cv::resize CV_8UC4 to 3840x2160, INTER_CUBIC", resize(3840, 2160, "bicubic"));
  add("scale=1280:720 bilinear", "scale=1280:720:flags=bilinear", u8, {"scale"},
      "cv::resize CV_8UC4 to 1280x720, INTER_LINEAR", resize(1280, 720, "bilinear"));
  add("crop 1280x720", "crop=1280:720:320:180", u8, {"crop"},
      "cv::Mat ROI 1280x720 at 320,180, copyTo", crop);
  add("pad 2048x1200", "pad=2048:1200:64:60", u8, {"pad"},
      "cv::copyMakeBorder CV_8UC4 to 2048x1200, BORDER_CONSTANT", pad);
  add("transpose clock", "transpose=clock", u8, {"transpose"},
      "cv::rotate CV_8UC4, ROTATE_90_CLOCKWISE", rotate);
  add("hflip", "hflip", u8, {"hflip"}, "cv::flip CV_8UC4, 1", hflip);
  add("fade", "fade=nb_frames=100000:start_frame=0", u8, {"fade"},
      "cv::multiply CV_8UC4 by Scalar(0.4, 0.4, 0.4, 1) (one frame of a fade: tandem takes its "
      "level from the frame number)",
      fade);
  add("overlay picture in picture",
      "[in]split[a][b];[b]crop=480:270:0:0[c];[a][c]overlay=x=1400:y=760", u8,
      {"split", "crop", "overlay"},
      "the frame copied (copyTo), its top left 480x270 blended over (1400, 760) by its alpha: "
      "cv::extractChannel, convertTo CV_32F, cv::blendLinear",
      overlay);
  add("lut3d 33 tetrahedral", "lut3d=file=" + cube, u8, {"lut3d"},
      "a direct loop over the pixels, tetrahedral (lut3d's host reference, TBB: OpenCV has no "
      "3D table)",
      direct_lut);
  add("tonemap reinhard", "tonemap", f32, {"tonemap"},
      "cv::TonemapReinhard(gamma 2.2, intensity 0, light_adapt 1, color_adapt 0) CV_32FC3 -> "
      "CV_32FC3 (a related global operator, not the same curve; tandem writes 8-bit sRGB)",
      reinhard);
  add("tonemap drago", "tonemap=op=drago", f32, {"tonemap"},
      "cv::TonemapDrago(gamma 2.2, saturation 1, bias 0.85) CV_32FC3 -> CV_32FC3 (a related "
      "operator, not the same curve; tandem writes 8-bit sRGB)",
      drago);
  // Curves OpenCV does not have: tandem's kernel time against the copy alone.
  for (const char* op : {"aces", "hable", "bt2390", "mobius"}) {
    add(std::string("tonemap ") + op, std::string("tonemap=op=") + op, f32, {"tonemap"}, "",
        no_peer);
  }
  add("blend screen", "[in]split[a][b];[a]saturation=1.5[s];[b][s]blend=mode=screen:opacity=0.5",
      u8, {"split", "saturation", "blend"},
      "cv::transform (saturation 1.5), then 255 - (255 - a)(255 - b) / 255 by cv::subtract and "
      "cv::multiply, mixed by cv::addWeighted(0.5, 0.5)",
      screen(1.5f));
  return cases;
}

}  // namespace tandem::bench
