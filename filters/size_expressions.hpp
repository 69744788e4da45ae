// The sizes and positions FFmpeg's scale, crop and pad take as expressions in the input's size
// (scale=iw/2:-2, crop=ih*4/3:ih, pad=iw+40:ih+40:20:20), evaluated in FFmpeg's order:
// w with oh unknown, h with ow, w again with oh, then x and y with both, and made integers as
// the filter does in FFmpeg (SizeRounding). What each filter makes of the values (0 is the
// input's side, -n keeps the aspect ratio, -1 centres) stays the filter's.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tandem/error.hpp"
#include "tandem/expression.hpp"
#include "tandem/filter.hpp"
#include "tandem/params.hpp"

namespace tandem {

/// The names the expressions may use: the input's sides, the output's, the input's aspect
/// ratio; sar is 1 (frames here have square pixels) and dar is a.
const std::vector<std::string>& size_names();

/// How a filter makes integers of the values, and what ow and oh then stand for, as FFmpeg's
/// filter does.
enum class SizeRounding {
  truncate_sides,  ///< scale: truncated; ow and oh are the sides made (ff_scale_eval_dimensions)
  truncate,        ///< pad: truncated; ow and oh are the values as evaluated (vf_pad)
  nearest,         ///< crop: rounded to nearest, halves to even (lrint); ow and oh as evaluated
};

/// A filter's expressions for w and h, and where it has them, x and y.
class SizeExpressions {
 public:
  /// Parses options w and h (and x and y where `position`) of `params`.
  SizeExpressions(const Params& params, SizeRounding rounding, bool position);

  struct Values {
    std::int64_t w = 0, h = 0, x = 0, y = 0;
  };
  /// The values for an input of `in`; `side(value, input side)` turns a side's integer into the
  /// side (scale: 0 is the input's). Throws Error naming the option and its expression where
  /// one has no finite value.
  template <typename Side>
  Values evaluate(Size in, Side side) const;

  /// evaluate() where 0 and -1 are the input's side and less is an error (crop, pad).
  Values evaluate(Size in) const;

  /// "w=iw/2:h=-1": the expressions, for messages.
  std::string describe() const;

 private:
  double value(int which, Size in, double ow, double oh) const;
  std::int64_t integer(double value) const;

  SizeRounding rounding_;
  std::vector<Expression> expressions_;  // w, h, then x, y where the filter has them
};

template <typename Side>
SizeExpressions::Values SizeExpressions::evaluate(Size in, Side side) const {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // What ow or oh stands for once a side is made: the side, or the value as evaluated where
  // FFmpeg's filter keeps that and the side is that value made an integer (not a special value
  // that `side` turned into the input's side).
  const auto seen = [&](double value, std::int64_t made) {
    return rounding_ == SizeRounding::truncate_sides || made != integer(value)
               ? static_cast<double>(made)
               : value;
  };
  Values v;
  // w first, for h's ow; where w needs oh it has no value yet, and h must not need ow.
  double ow = nan;
  try {
    const double w = value(0, in, nan, nan);
    ow = seen(w, side(integer(w), in.width));
  } catch (const Error&) {
  }
  const double h = value(1, in, ow, nan);
  v.h = side(integer(h), in.height);
  const double oh = seen(h, v.h);
  const double w = value(0, in, ow, oh);
  v.w = side(integer(w), in.width);
  ow = seen(w, v.w);
  if (expressions_.size() == 4) {
    v.x = integer(value(2, in, ow, oh));
    v.y = integer(value(3, in, ow, oh));
  }
  return v;
}

/// Declares w and h (and x and y) as expression parameters with these defaults and help.
ParamSpec size_param(std::string name, std::string default_text, double min, double max,
                     std::string help);

}  // namespace tandem
