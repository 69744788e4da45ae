#pragma once
// The JSON layout tandem writes (the run report, tandem-bench's documents): one member per line,
// one line per element of a list of objects, every other value on one line, numbers to six
// significant digits. Header-only over nlohmann::json; private to the library and its apps.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

namespace tandem::detail::json {

using Json = nlohmann::ordered_json;  // members in the order written, not sorted

// Non-finite numbers become null (JSON has no NaN); bytes that are not UTF-8 become U+FFFD
// rather than an exception, since device names come from drivers.
inline std::string compact(const Json& v) {
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Six significant digits, as the report always had: times in ms made from nanosecond counters
// read 0.033099, not 0.033098999999999996.
inline double six_digits(double v) {
  if (!std::isfinite(v)) return v;
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 6).ptr;
  std::from_chars(buf, end, v);
  return v;
}

inline bool is_object_list(const Json& v) {
  return v.is_array() && !v.empty() && v.front().is_object();
}

// dump(2) would give every number of split_trace a line of its own; this keeps one member per
// line and one line per device, every value on one line.
inline void lay_out(const Json& v, int depth, std::string& out) {
  const std::string indent(2 * static_cast<std::size_t>(depth), ' ');
  if (v.is_object() && !v.empty() &&
      (depth == 0 || std::any_of(v.begin(), v.end(), [](const Json& m) {
         return m.is_object() || is_object_list(m);
       }))) {
    out += "{";
    bool first = true;
    for (const auto& [key, member] : v.items()) {
      out += (first ? "\n  " : ",\n  ") + indent + compact(Json(key)) + ": ";
      lay_out(member, depth + 1, out);
      first = false;
    }
    out += "\n" + indent + "}";
  } else if (is_object_list(v)) {
    out += "[";
    for (std::size_t i = 0; i < v.size(); ++i)
      out += (i ? ",\n  " : "\n  ") + indent + compact(v[i]);
    out += "\n" + indent + "]";
  } else {
    out += compact(v);
  }
}

}  // namespace tandem::detail::json
