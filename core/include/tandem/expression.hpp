#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tandem {

/// An arithmetic expression over named values, as FFmpeg's filters take their sizes and
/// offsets (scale=iw/2:-2): numbers, the names it was parsed with, + - * / ^ (a power; as in
/// FFmpeg, powers go left to right and -2^2 is -4), signs, parentheses, and the functions abs,
/// ceil, floor, max, min, round and trunc. Parsed once, evaluated as often as the values change.
class Expression {
 public:
  /// Parses `text`, which may use `names`. Throws Error saying what is wrong and where: a
  /// name it does not know (with the names it does), a function it does not know, a missing
  /// parenthesis or operand.
  static Expression parse(std::string_view text, std::span<const std::string> names);

  /// The value with values[i] for the i-th name it was parsed with (NaN in, NaN out).
  double evaluate(std::span<const double> values) const;
  /// Whether it reads the i-th name.
  bool uses(std::size_t name) const;
  /// Whether it reads no name (a number, or arithmetic on numbers).
  bool constant() const;
  /// The text it was parsed from.
  const std::string& text() const { return text_; }

 private:
  enum class Op { number, name, negate, add, subtract, multiply, divide, power, call };
  struct Step {
    Op op;
    double number = 0;  // Op::number
    int index = 0;      // Op::name: the name's; Op::call: the function's
  };
  class Parser;

  std::string text_;
  std::vector<Step> program_;  // postfix: operands before their operator
};

}  // namespace tandem
