#pragma once
// Filter parameters declared as data (FFmpeg's option tables): the table drives parsing,
// validation, help text, error messages and GUI controls.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tandem {

enum class ParamType {
  real,     ///< a floating-point value in [min, max]
  integer,  ///< an integer value in [min, max]
  choice,   ///< one of `choices`, stored as its index
  text,     ///< a string, such as a file's path (Params::text()); its value is 0
  /// An arithmetic expression in `names` (Expression), held as its text like a text
  /// parameter; the filter evaluates it where the names' values are known (the frame's size)
  expression,
};

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::real;
  double default_value = 0;  ///< for a choice: index into choices
  double min = 0;
  double max = 0;
  std::string help;
  std::vector<std::string> choices;
  /// When true the minimum itself is not allowed (sigma > 0).
  bool min_exclusive = false;
  /// A text or expression parameter's default.
  std::string default_text;
  /// The names an expression parameter may use. Where max > min, an expression that is a
  /// number alone must lie in [min, max] when parsed.
  std::vector<std::string> names;

  /// Whether the value is text (Params::text()): text and expression parameters.
  bool textual() const { return type == ParamType::text || type == ParamType::expression; }

  /// "1.5", "12", "reinhard": the value as a graph string writes it (not for text parameters:
  /// Params::format()).
  std::string format(double value) const;
  /// Parses and range-checks `text`; throws Error("...") describing the accepted values. A
  /// text parameter takes any text but an empty one and gives 0; an expression parameter any
  /// expression in its names (Expression::parse) and gives 0.
  double parse(std::string_view text) const;
  /// Range-checks `value` (a choice's index); throws Error like parse(). `text` is what the
  /// user wrote, for the message.
  double check(double value, std::string_view text = {}) const;
  /// "0..4, default 1" / "reinhard|aces|..., default reinhard" / "text".
  std::string describe_range() const;
};

/// The values of one filter instance's parameters, in the order of its table.
class Params {
 public:
  Params() = default;
  /// Defaults for every parameter of `specs`.
  explicit Params(std::span<const ParamSpec> specs);

  double operator[](std::string_view name) const;
  int integer(std::string_view name) const { return static_cast<int>((*this)[name]); }
  /// A text or expression parameter's value.
  const std::string& text(std::string_view name) const;
  /// Parameter `i`'s value as a graph string writes it, quoted where it must be ('a b:c').
  std::string format(std::size_t i) const;
  /// True when parameter `i` holds its default.
  bool is_default(std::size_t i) const;
  /// Sets a value after checking it against the table; throws Error when out of range.
  void set(std::string_view name, double value);
  /// Parses `text` with the parameter's spec and sets it (a text or expression parameter to
  /// `text`).
  void set_text(std::string_view name, std::string_view text);
  std::span<const ParamSpec> specs() const { return specs_; }
  /// Numbers by the table's order (0 for text parameters).
  std::span<const double> values() const { return values_; }
  bool operator==(const Params& other) const {
    return values_ == other.values_ && texts_ == other.texts_;
  }

 private:
  std::size_t index(std::string_view name) const;
  std::span<const ParamSpec> specs_;
  std::vector<double> values_;
  std::vector<std::string> texts_;  // by the table's order; empty but for text parameters
};

}  // namespace tandem
