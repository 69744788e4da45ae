#include "tolerance.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "test_support.hpp"

namespace tandem::test {

bool same_arithmetic(const DeviceInfo& a, const DeviceInfo& b) {
  return a.platform == b.platform && a.type == b.type && a.driver_version == b.driver_version &&
         a.vendor == b.vendor;
}

Tolerance tolerance_between(const DeviceInfo& a, const DeviceInfo& b, PixelFormat format) {
  if (same_arithmetic(a, b)) return {0, 0, "the same compiler builds the same arithmetic"};
  if (format == PixelFormat::rgba8) {
    // A float result that lands within an ulp of a .5 tie quantises to either neighbour.
    return {1, 0, "mad() contracted or not, native exp/log: 1 step where a value rounds at a tie"};
  }
  // A few ulps of float after chains of mad()/exp/log; absolute for values near 0.
  return {2e-6, 1e-5, "mad() contracted or not, exp/log within the OpenCL spec's ulps"};
}

Tolerance Tolerance::amplified(double gain, PixelFormat format) const {
  if (exact()) return *this;
  Tolerance t = *this;
  if (format == PixelFormat::rgba8) {
    t.absolute = std::ceil(absolute * gain);
  } else {
    t.absolute *= gain;
    t.relative *= gain;
  }
  t.why += ", amplified by later stages";
  return t;
}

Tolerance Tolerance::with_frame_statistics(PixelFormat format) const {
  Tolerance t = *this;
  if (format == PixelFormat::rgba8) {
    t.absolute += 1;
  } else {
    t.absolute += 2e-6;
    t.relative += 1e-5;
  }
  t.why += (t.why.empty() ? "" : "; ") +
           std::string("statistics summed in another order: one more rounding flip");
  return t;
}

Tolerance tolerance_within(const std::string& spec, PixelFormat format) {
  const std::vector<DeviceInfo> all = enumerate_devices();
  const std::vector<std::size_t> chosen = select_devices(spec, all);
  Tolerance widest{0, 0, "one device, or devices of the same arithmetic"};
  for (std::size_t i : chosen) {
    for (std::size_t j : chosen) {
      const Tolerance t = tolerance_between(all[i], all[j], format);
      if (t.absolute > widest.absolute || t.relative > widest.relative) widest = t;
    }
  }
  return widest;
}

::testing::AssertionResult within(const Frame& got, const Frame& want,
                                  const Tolerance& tolerance) {
  if (got.width() != want.width() || got.height() != want.height() ||
      got.format() != want.format()) {
    return ::testing::AssertionFailure() << "frames of different size or format";
  }
  double worst_excess = 0;
  std::size_t over = 0;
  std::ostringstream where;
  if (is_planar(want.format())) {
    // Codes: a step of the working format moves a code by one at most.
    const double allowed = tolerance.exact() ? 0.0 : std::max(1.0, tolerance.absolute);
    for (int p = 0; p < 3; ++p) {
      for (int y = 0; y < want.plane_height(p); ++y) {
        for (int x = 0; x < want.plane_width(p); ++x) {
          const double g = got.sample(p, x, y);
          const double w = want.sample(p, x, y);
          const double d = std::abs(g - w);
          if (d <= allowed) continue;
          ++over;
          if (d - allowed > worst_excess) {
            worst_excess = d - allowed;
            where.str("");
            where << "(" << x << ", " << y << ") of plane " << p << ": got " << g << ", want " << w
                  << ", allowed difference " << allowed;
          }
        }
      }
    }
  }
  for (int y = 0; y < want.height() && !is_planar(want.format()); ++y) {
    for (int i = 0; i < 4 * want.width(); ++i) {
      double g, w;
      if (want.format() == PixelFormat::rgba8) {
        g = got.row(y)[i];
        w = want.row(y)[i];
      } else {
        g = got.row_as<float>(y)[i];
        w = want.row_as<float>(y)[i];
        if (std::isnan(g) && std::isnan(w)) continue;
      }
      const double allowed = tolerance.absolute + tolerance.relative * std::abs(w);
      const double d = std::abs(g - w);
      if (!(d <= allowed)) {
        ++over;
        if (!(d - allowed <= worst_excess)) {
          worst_excess = std::isnan(d) ? INFINITY : d - allowed;
          where.str("");
          where << "(" << i / 4 << ", " << y << ") channel " << i % 4 << ": got " << g
                << ", want " << w << ", allowed difference " << allowed;
        }
      }
    }
  }
  if (over == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << over << " values beyond the tolerance (" << tolerance.why
                                       << "); worst at " << where.str();
}

}  // namespace tandem::test
