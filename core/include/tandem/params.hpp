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

  /// "1.5", "12", "reinhard": the value as a graph string writes it.
  std::string format(double value) const;
  /// Parses and range-checks `text`; throws Error("...") describing the accepted values.
  double parse(std::string_view text) const;
  /// Range-checks `value` (a choice's index); throws Error like parse(). `text` is what the
  /// user wrote, for the message.
  double check(double value, std::string_view text = {}) const;
  /// "0..4, default 1" / "reinhard|aces|..., default reinhard".
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
  /// Sets a value after checking it against the table; throws Error when out of range.
  void set(std::string_view name, double value);
  /// Parses `text` with the parameter's spec and sets it.
  void set_text(std::string_view name, std::string_view text);
  std::span<const ParamSpec> specs() const { return specs_; }
  std::span<const double> values() const { return values_; }
  bool operator==(const Params& other) const { return values_ == other.values_; }

 private:
  std::size_t index(std::string_view name) const;
  std::span<const ParamSpec> specs_;
  std::vector<double> values_;
};

}  // namespace tandem
