#pragma once
// Learned splits kept across runs: one small file per device set, graph, frame size and format
// in the cache directory's splits/, written to a temporary name and renamed into place.
#include <filesystem>
#include <string>
#include <vector>

namespace tandem::detail {

class SplitStore {
 public:
  /// The store of the cache directory (ProgramCache::default_directory()); none when caching is
  /// off, and then it loads nothing and saves nothing.
  SplitStore();
  /// The name of the file kept for a run of `graph` on `devices` (DeviceSet::key()).
  static std::string key(const std::string& devices, const std::string& graph, int width,
                         int height, const std::string& format);
  /// The fractions saved under `key`; empty when there are none or not `count` of them.
  std::vector<double> load(const std::string& key, std::size_t count) const;
  /// Saves `fractions` under `key`; a failure only costs the learning next time.
  void save(const std::string& key, const std::vector<double>& fractions) const;

 private:
  std::filesystem::path dir_;  // empty: no store
};

}  // namespace tandem::detail
