#include "size_expressions.hpp"

#include <cmath>
#include <limits>

#include "tandem/error.hpp"

namespace tandem {
namespace {

constexpr const char* kOptions[] = {"w", "h", "x", "y"};

}  // namespace

const std::vector<std::string>& size_names() {
  static const std::vector<std::string> names = {"iw",    "ih",    "in_w", "in_h", "ow", "oh",
                                                 "out_w", "out_h", "a",    "sar",  "dar"};
  return names;
}

SizeExpressions::SizeExpressions(const Params& params, SizeRounding rounding, bool position)
    : rounding_(rounding) {
  for (int i = 0; i < (position ? 4 : 2); ++i) {
    expressions_.push_back(Expression::parse(params.text(kOptions[i]), size_names()));
  }
}

double SizeExpressions::value(int which, Size in, double ow, double oh) const {
  const Expression& e = expressions_[static_cast<std::size_t>(which)];
  const double a = static_cast<double>(in.width) / in.height;
  const double values[] = {static_cast<double>(in.width),
                           static_cast<double>(in.height),
                           static_cast<double>(in.width),
                           static_cast<double>(in.height),
                           ow,
                           oh,
                           ow,
                           oh,
                           a,
                           1.0,
                           a};
  const double v = e.evaluate(values);
  if (std::isfinite(v) && std::abs(v) <= 1e9) return v;
  const bool sizes = e.uses(4) || e.uses(5) || e.uses(6) || e.uses(7);
  throw Error(std::string(kOptions[which]) + "=" + e.text() + " of a " + to_string(in) +
              " input is " +
              (std::isnan(v)   ? "not a number"
               : std::isinf(v) ? "infinite"
                               : "too large") +
              (std::isnan(v) && sizes && which < 2
                   ? " (w may use oh or h ow, not both, and neither its own side)"
                   : ""));
}

std::int64_t SizeExpressions::integer(double value) const {
  return static_cast<std::int64_t>(rounding_ == SizeRounding::nearest ? std::nearbyint(value)
                                                                      : value);
}

SizeExpressions::Values SizeExpressions::evaluate(Size in) const {
  return evaluate(in, [&](std::int64_t v, int input) -> std::int64_t {
    if (v < -1) {
      throw Error(describe() + " of a " + to_string(in) + " input makes a side of " +
                  std::to_string(v));
    }
    return v <= 0 ? input : v;
  });
}

std::string SizeExpressions::describe() const {
  std::string text;
  for (std::size_t i = 0; i < expressions_.size(); ++i) {
    text += std::string(i > 0 ? ":" : "") + kOptions[i] + "=" + expressions_[i].text();
  }
  return text;
}

ParamSpec size_param(std::string name, std::string default_text, double min, double max,
                     std::string help) {
  return {.name = std::move(name),
          .type = ParamType::expression,
          .min = min,
          .max = max,
          .help = std::move(help),
          .default_text = std::move(default_text),
          .names = size_names()};
}

}  // namespace tandem
