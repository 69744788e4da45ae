#include "tandem/params.hpp"

#include <charconv>
#include <cmath>
#include <optional>

#include "tandem/error.hpp"
#include "tandem/expression.hpp"

namespace tandem {
namespace {

// The shortest text that reads back as the same double, so printed graphs round-trip.
std::string number(double v) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, result.ptr);
}

}  // namespace

std::string ParamSpec::format(double value) const {
  if (textual()) throw Error("internal: '" + name + "' is text (Params::format)");
  if (type == ParamType::choice) return choices.at(static_cast<std::size_t>(value));
  if (type == ParamType::integer) return std::to_string(static_cast<long long>(value));
  return number(value);
}

std::string ParamSpec::describe_range() const {
  std::string range;
  if (type == ParamType::text) {
    return default_text.empty() ? "text, required" : "text, default '" + default_text + "'";
  }
  if (type == ParamType::expression) {
    std::string in;
    for (const auto& n : names) in += (in.empty() ? "" : ", ") + n;
    return "a number" + (max > min ? " " + number(min) + ".." + number(max) : std::string()) +
           " or an expression in " + in + ", default '" + default_text + "'";
  }
  if (type == ParamType::choice) {
    for (const auto& c : choices) range += (range.empty() ? "" : "|") + c;
  } else {
    range = (min_exclusive ? "> " + number(min) + " up to " : number(min) + "..") + number(max);
    if (type == ParamType::integer) range += " (integer)";
  }
  return range + ", default " + format(default_value);
}

double ParamSpec::parse(std::string_view text) const {
  auto fail = [&](std::string_view why) -> double {
    throw Error("invalid value '" + std::string(text) + "' for '" + name + "': " +
                std::string(why) + " (" + describe_range() + ")");
  };
  if (type == ParamType::choice) {
    for (std::size_t i = 0; i < choices.size(); ++i) {
      if (choices[i] == text) return static_cast<double>(i);
    }
    // FFmpeg's options take a choice's index too (transpose=1).
    std::size_t index = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), index);
    if (ec == std::errc() && ptr == text.data() + text.size() && index < choices.size()) {
      return static_cast<double>(index);
    }
    return fail("not one of the choices");
  }
  if (textual()) {
    if (text.empty()) return fail("empty");
    if (text.find('\'') != std::string_view::npos) return fail("a graph cannot quote a quote");
    if (type == ParamType::expression) {
      std::optional<Expression> e;
      try {
        e = Expression::parse(text, names);
      } catch (const Error& error) {
        throw Error("invalid value '" + std::string(text) + "' for '" + name +
                    "': " + error.what());
      }
      // A number alone is held to the range now; expressions once their names have values.
      if (max > min && e->constant()) {
        const double v = e->evaluate({});
        if (!(v >= min && v <= max)) return fail("out of range");
      }
    }
    return 0.0;
  }
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) {
    return fail(type == ParamType::integer ? "not an integer" : "not a number");
  }
  return check(value, text);
}

double ParamSpec::check(double value, std::string_view text) const {
  const std::string shown = text.empty() ? number(value) : std::string(text);
  auto fail = [&](std::string_view why) -> double {
    throw Error("invalid value '" + shown + "' for '" + name + "': " + std::string(why) + " (" +
                describe_range() + ")");
  };
  if (!std::isfinite(value)) return fail("not a number");
  if (textual()) return value == 0 ? value : fail("a text parameter's value is 0");
  if (type == ParamType::choice) {
    if (value < 0 || value >= static_cast<double>(choices.size()) || value != std::floor(value)) {
      return fail("not one of the choices");
    }
    return value;
  }
  if (type == ParamType::integer && value != std::floor(value)) return fail("not an integer");
  if (value < min || value > max || (min_exclusive && value == min)) return fail("out of range");
  return value;
}

Params::Params(std::span<const ParamSpec> specs) : specs_(specs) {
  values_.reserve(specs.size());
  texts_.reserve(specs.size());
  for (const auto& s : specs) {
    values_.push_back(s.textual() ? 0.0 : s.default_value);
    texts_.push_back(s.default_text);
  }
}

std::size_t Params::index(std::string_view name) const {
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    if (specs_[i].name == name) return i;
  }
  std::string known;
  for (const auto& s : specs_) known += (known.empty() ? "" : ", ") + s.name;
  throw Error("unknown option '" + std::string(name) + "'" +
              (known.empty() ? " (this filter takes no options)" : " (options: " + known + ")"));
}

double Params::operator[](std::string_view name) const { return values_[index(name)]; }

const std::string& Params::text(std::string_view name) const {
  const std::size_t i = index(name);
  if (!specs_[i].textual()) throw Error("internal: '" + specs_[i].name + "' is no text");
  return texts_[i];
}

std::string Params::format(std::size_t i) const {
  if (!specs_[i].textual()) return specs_[i].format(values_[i]);
  // The graph parser's delimiters and spaces need quotes (a path with none needs none).
  const std::string& t = texts_[i];
  return t.find_first_of(" \t\n=:,;[]'") == std::string::npos ? t : "'" + t + "'";
}

bool Params::is_default(std::size_t i) const {
  return specs_[i].textual() ? texts_[i] == specs_[i].default_text
                             : values_[i] == specs_[i].default_value;
}

void Params::set(std::string_view name, double value) {
  const std::size_t i = index(name);
  values_[i] = specs_[i].check(value);
}

void Params::set_text(std::string_view name, std::string_view text) {
  const std::size_t i = index(name);
  values_[i] = specs_[i].parse(text);
  if (specs_[i].textual()) texts_[i] = std::string(text);
}

}  // namespace tandem
