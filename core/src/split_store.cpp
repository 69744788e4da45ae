// Learned splits kept across runs (split_store.hpp).
#include "split_store.hpp"

#include <fstream>
#include <sstream>
#include <system_error>

#include "tandem/program_cache.hpp"

namespace tandem::detail {

SplitStore::SplitStore() : dir_(ProgramCache::default_directory()) {
  if (!dir_.empty()) dir_ /= "splits";
}

std::string SplitStore::key(const std::string& devices, const std::string& graph, int width,
                            int height, const std::string& format) {
  std::ostringstream s;
  s << std::hex
    << fnv1a64(devices + "|" + graph + "|" + std::to_string(width) + "x" + std::to_string(height) +
               "|" + format);
  return s.str();
}

std::vector<double> SplitStore::load(const std::string& key, std::size_t count) const {
  if (dir_.empty()) return {};
  std::ifstream in(dir_ / (key + ".txt"));
  std::vector<double> fractions;
  double f = 0;
  while (in >> f) fractions.push_back(f);
  if (fractions.size() != count) return {};
  return fractions;
}

void SplitStore::save(const std::string& key, const std::vector<double>& fractions) const {
  if (dir_.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  const auto path = dir_ / (key + ".txt");
  const auto tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp);
    for (double f : fractions) out << f << "\n";
    if (!out) return;
  }
  std::filesystem::rename(tmp, path, ec);
}

}  // namespace tandem::detail
