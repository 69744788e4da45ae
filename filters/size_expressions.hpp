// The sizes and positions FFmpeg's scale, crop and pad take as expressions in the input's size
// (scale=iw/2:-2, crop=ih*4/3:ih, pad=iw+40:ih+40:20:20), evaluated in FFmpeg's order:
// w with oh unknown, h with ow, w again with oh, then x and y with both; each truncated to an
// integer, as FFmpeg's (int) casts do. What each filter makes of the values (0 is the input's
// side, -n keeps the aspect ratio, -1 centres) stays the filter's.
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

/// A filter's expressions for w and h, and where it has them, x and y.
class SizeExpressions {
 public:
  /// Parses options w and h (and x and y where `position`) of `params`; `filter` names the
  /// filter in errors.
  SizeExpressions(const Params& params, std::string filter, bool position);

  struct Values {
    std::int64_t w = 0, h = 0, x = 0, y = 0;
  };
  /// The values for an input of `in`; `side(value, input side)` turns a side's value into the
  /// side that ow or oh then stand for (scale: 0 is the input's). Throws Error naming the
  /// filter, the option and its expression where one has no finite value.
  template <typename Side>
  Values evaluate(Size in, Side side) const;

  /// evaluate() where 0 and -1 are the input's side and less is an error (crop, pad).
  Values evaluate(Size in) const;

  /// "w=iw/2:h=-1": the expressions, for messages.
  std::string describe() const;

 private:
  std::int64_t value(int which, Size in, double ow, double oh) const;

  std::string filter_;
  std::vector<Expression> expressions_;  // w, h, then x, y where the filter has them
};

template <typename Side>
SizeExpressions::Values SizeExpressions::evaluate(Size in, Side side) const {
  Values v;
  // The first w may need oh, which needs w: then h must not need ow.
  double ow = std::numeric_limits<double>::quiet_NaN();
  try {
    ow = static_cast<double>(side(value(0, in, ow, ow), in.width));
  } catch (const Error&) {
  }
  v.h = side(value(1, in, ow, std::numeric_limits<double>::quiet_NaN()), in.height);
  v.w = side(value(0, in, ow, static_cast<double>(v.h)), in.width);
  if (expressions_.size() == 4) {
    v.x = value(2, in, static_cast<double>(v.w), static_cast<double>(v.h));
    v.y = value(3, in, static_cast<double>(v.w), static_cast<double>(v.h));
  }
  return v;
}

/// Declares w and h (and x and y) as expression parameters with these defaults and help.
ParamSpec size_param(std::string name, std::string default_text, double min, double max,
                     std::string help);

}  // namespace tandem
