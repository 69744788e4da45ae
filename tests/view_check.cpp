// Checks a tandem-view screenshot, knowing only the window layout that apps/tandem-view/view.hpp
// documents (Layout) and the colours of the devices in the plots:
//   view_check SHOT [INPUT EXPECTED]
// - the output panel is more saturated than the input panel (the test's graph saturates);
// - with INPUT and EXPECTED (the tandem command line's output of the same graph): the input
//   panel shows INPUT and the output panel EXPECTED, scaled as the layout says, and the output
//   panel is much closer to EXPECTED than to INPUT, and the bar beside the output picture (which
//   device computed which rows) is in the devices' colours from its top to its bottom;
// - the split plot is filled with the devices' colours (any number of devices), and the
//   busy-time plot has lines of those colours across most of its width.
// Prints what it measured; exits non-zero when a check fails.
#include <algorithm>
#include <cstdio>
#include <string>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

// Layout::picture: the picture fitted and centred in its half of the top 60%, inside an 8 px
// margin under a 24 px label; shrunk by 2 px here to stay clear of the filtered edges.
cv::Rect picture(const cv::Mat& shot, int panel, cv::Size size) {
  const float width = shot.cols, height = shot.rows;
  const float top = static_cast<int>(height * 0.6f), half = static_cast<int>(width / 2);
  const float x0 = panel ? half : 0, x1 = panel ? width : half;
  const float area_x = x0 + 8, area_y = 32, area_w = x1 - x0 - 16, area_h = top - 8 - area_y;
  const float scale = std::min(area_w / size.width, area_h / size.height);
  const int dw = static_cast<int>(size.width * scale + 0.5f);
  const int dh = static_cast<int>(size.height * scale + 0.5f);
  const int px = static_cast<int>(area_x + (area_w - dw) / 2);
  const int py = static_cast<int>(area_y + (area_h - dh) / 2);
  return cv::Rect(px, py, dw, dh);
}

// The plot colours of the devices (kDeviceColours in view.cpp, repeated past the fourth), in BGR.
const cv::Scalar kDevices[] = {{40, 140, 240}, {230, 150, 60}, {110, 200, 90}, {200, 90, 200}};

// Layout::plot: two plots side by side in the bottom 140 px of the right half, 8 px margins.
cv::Rect plot(const cv::Mat& shot, int index) {
  const int x0 = shot.cols / 2 + 8, x1 = shot.cols - 8, middle = (x0 + x1) / 2;
  const int left = index ? middle + 4 : x0, right = index ? x1 : middle - 4;
  return cv::Rect(left, shot.rows - 148, right - left, 140);
}

cv::Rect inset(cv::Rect r) {
  return cv::Rect(r.x + 2, r.y + 2, r.width - 4, r.height - 4);
}

double mean_saturation(const cv::Mat& bgr) {
  cv::Mat hsv;
  cv::cvtColor(bgr, hsv, cv::COLOR_BGR2HSV);
  return cv::mean(hsv)[1];
}

// Mean absolute difference per channel between `region` and `reference` scaled to its drawn size.
double difference(const cv::Mat& shot, cv::Rect drawn, const cv::Mat& reference) {
  cv::Mat scaled;
  cv::resize(reference, scaled, drawn.size(), 0, 0, cv::INTER_LINEAR);
  const cv::Rect inner(2, 2, drawn.width - 4, drawn.height - 4);
  cv::Mat diff;
  cv::absdiff(shot(inset(drawn)), scaled(inner), diff);
  const cv::Scalar m = cv::mean(diff);
  return (m[0] + m[1] + m[2]) / 3;
}

// The pixels of `region` within 40 of a device's colour in every channel.
cv::Mat device_pixels(const cv::Mat& region) {
  cv::Mat mask = cv::Mat::zeros(region.size(), CV_8U), one;
  for (const cv::Scalar& bgr : kDevices) {
    cv::inRange(region, bgr - cv::Scalar::all(40), bgr + cv::Scalar::all(40), one);
    mask |= one;
  }
  return mask;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 4) {
    std::fprintf(stderr, "usage: view_check SHOT [INPUT EXPECTED]\n");
    return 2;
  }
  const cv::Mat shot = cv::imread(argv[1], cv::IMREAD_COLOR);
  if (shot.empty()) {
    std::fprintf(stderr, "view_check: cannot read '%s'\n", argv[1]);
    return 2;
  }
  std::printf("screenshot %dx%d\n", shot.cols, shot.rows);

  const bool references = argc == 4;
  cv::Mat input, expected;
  cv::Size size;
  if (references) {
    input = cv::imread(argv[2], cv::IMREAD_COLOR);
    expected = cv::imread(argv[3], cv::IMREAD_COLOR);
    if (input.empty() || expected.empty()) {
      std::fprintf(stderr, "view_check: cannot read '%s' or '%s'\n", argv[2], argv[3]);
      return 2;
    }
    size = input.size();
  } else {
    // The picture's size is unknown: the middle half of each panel lies inside any picture
    // whose aspect ratio is between 1:1 and 2:1.
    size = cv::Size(16, 9);
  }
  const cv::Rect in_rect = picture(shot, 0, size), out_rect = picture(shot, 1, size);
  const auto middle = [&](cv::Rect r) {
    return references ? inset(r)
                      : cv::Rect(r.x + r.width / 4, r.y + r.height / 4, r.width / 2, r.height / 2);
  };
  const double s_in = mean_saturation(shot(middle(in_rect)));
  const double s_out = mean_saturation(shot(middle(out_rect)));
  check(s_out > 1.2 * s_in && s_out > 20,
        "output panel more saturated than input panel: " + std::to_string(s_out) + " vs " +
            std::to_string(s_in));

  if (references) {
    const double in_diff = difference(shot, in_rect, input);
    const double out_diff = difference(shot, out_rect, expected);
    const double out_vs_input = difference(shot, out_rect, input);
    check(in_diff < 3,
          "input panel shows the input (mean difference " + std::to_string(in_diff) + ")");
    check(out_diff < 3, "output panel shows the expected output (mean difference " +
                            std::to_string(out_diff) + ")");
    check(out_vs_input > 3 * out_diff && out_vs_input > 6,
          "output panel differs from the input (mean difference " + std::to_string(out_vs_input) +
              ")");
    // The bar is 4 px wide, 2 px left of the picture: its middle two columns, clear of rounding.
    const cv::Rect bar(out_rect.x - 5, out_rect.y + 1, 2, out_rect.height - 2);
    const cv::Mat bands = device_pixels(shot(bar));
    const double coloured = cv::countNonZero(bands) / double(bands.total());
    check(coloured > 0.95,
          "bar of bands beside the output in the devices' colours: " + std::to_string(coloured));
  }

  const cv::Mat split = device_pixels(shot(plot(shot, 0)));
  const double filled = cv::countNonZero(split) / double(split.total());
  check(filled > 0.9, "split plot filled with the devices' colours: " + std::to_string(filled));
  cv::Mat columns;
  cv::reduce(device_pixels(shot(plot(shot, 1))), columns, 0, cv::REDUCE_MAX);
  const double spanned = cv::countNonZero(columns) / double(columns.total());
  check(spanned > 0.5, "busy-time plot has the devices' lines across " + std::to_string(spanned) +
                           " of its width");
  return failures ? 1 : 0;
}
