#pragma once
// How far the outputs of one graph may differ between two OpenCL devices, stated once for every
// suite, with the reason. Same arithmetic on the same kind of device is exact; across kinds,
// compilers are free to contract a*b+c into fma (mad() lets them) and to use their own exp/log,
// so a value that lands on a rounding tie may round the other way.
#include <string>

#include <gtest/gtest.h>

#include "tandem/tandem.hpp"

namespace tandem::test {

struct Tolerance {
  double absolute = 0;  ///< 8-bit steps for rgba8; raw value for float formats
  double relative = 0;  ///< of the expected value (float formats)
  std::string why;

  bool exact() const { return absolute == 0 && relative == 0; }
  /// After stages that scale a difference by up to `gain` (saturation=2.5 turns one step into
  /// up to three once rounded).
  Tolerance amplified(double gain, PixelFormat format) const;
  /// Frame statistics summed in another order (per band, per chunk) move a tonemap's
  /// log-average in its last bits: one more rounding flip, even on one kind of device.
  Tolerance with_frame_statistics(PixelFormat format) const;
};

/// Devices run the same arithmetic when the same compiler builds for the same kind of device:
/// same platform, device type and driver version (PoCL's pthread and basic devices, two GPUs of
/// one model).
bool same_arithmetic(const DeviceInfo& a, const DeviceInfo& b);

/// The tolerance between outputs of devices `a` and `b` for frames of `format`.
Tolerance tolerance_between(const DeviceInfo& a, const DeviceInfo& b, PixelFormat format);

/// The widest tolerance between any two devices `spec` opens (as DeviceSet::open): what a frame
/// co-executed on them may differ from a single device's output.
Tolerance tolerance_within(const std::string& spec, PixelFormat format);

/// Every value of `got` within `tolerance` of `want`; the failure names the worst value. Plane
/// formats compare codes: within the tolerance's steps, or one code, where it is not exact.
::testing::AssertionResult within(const Frame& got, const Frame& want, const Tolerance& tolerance);

}  // namespace tandem::test
