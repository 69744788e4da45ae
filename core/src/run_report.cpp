// RunReport as JSON, written by nlohmann::json (escaping, number syntax, NaN and UTF-8 are its
// work).
#include <string>

#include "json_layout.hpp"
#include "tandem/pipeline.hpp"

namespace tandem {
namespace {

using namespace detail::json;

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
                            {"fixed_bands", d.fixed_bands},
                            {"fixed_ms", six_digits(d.fixed_ms)},
                            {"failed", d.failed}});
  }
  j["split_trace"] = Json::array();
  for (const auto& frame : split_trace) {
    Json fractions = Json::array();
    for (double f : frame) fractions.push_back(six_digits(f));
    j["split_trace"].push_back(std::move(fractions));
  }
  j["learned_split"] = Json::array();
  for (double f : learned_split) j["learned_split"].push_back(six_digits(f));
  j["fallbacks"] = fallbacks;
  j["scheduler"] = scheduler;
  j["decisions"] = decisions;
  std::string out;
  lay_out(j, 0, out);
  return out + "\n";
}

}  // namespace tandem
