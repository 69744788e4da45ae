// RunReport as JSON, written by nlohmann::json (escaping, number syntax, NaN and UTF-8 are its
// work).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "tandem/pipeline.hpp"

namespace tandem {
namespace {

using Json = nlohmann::ordered_json;  // members in the order written, not sorted

// Non-finite numbers become null (JSON has no NaN); bytes that are not UTF-8 become U+FFFD
// rather than an exception, since device names come from drivers.
std::string compact(const Json& v) {
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Six significant digits, as the report always had: times in ms made from nanosecond counters
// read 0.033099, not 0.033098999999999996.
double six_digits(double v) {
  if (!std::isfinite(v)) return v;
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 6).ptr;
  std::from_chars(buf, end, v);
  return v;
}

bool is_object_list(const Json& v) {
  return v.is_array() && !v.empty() && v.front().is_object();
}

// dump(2) would give every number of split_trace a line of its own; this keeps one member per
// line and one line per device, every value on one line.
void lay_out(const Json& v, int depth, std::string& out) {
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

}  // namespace

std::string RunReport::to_json() const {
  Json j;
  j["frames"] = frames;
  j["wall_ms"] = six_digits(wall_ms);
  j["devices"] = Json::array();
  for (const DeviceReport& d : devices) {
    j["devices"].push_back({{"id", d.id},
                            {"name", d.name},
                            {"type", std::string(to_string(d.type))},
                            {"share", six_digits(d.share)},
                            {"busy_ms", six_digits(d.busy_ms)},
                            {"upload_ms", six_digits(d.upload_ms)},
                            {"kernel_ms", six_digits(d.kernel_ms)},
                            {"download_ms", six_digits(d.download_ms)},
                            {"failed", d.failed}});
  }
  j["split_trace"] = Json::array();
  for (const auto& frame : split_trace) {
    Json fractions = Json::array();
    for (double f : frame) fractions.push_back(six_digits(f));
    j["split_trace"].push_back(std::move(fractions));
  }
  j["fallbacks"] = fallbacks;
  std::string out;
  lay_out(j, 0, out);
  return out + "\n";
}

}  // namespace tandem
