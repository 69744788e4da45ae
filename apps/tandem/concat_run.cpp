// tandem concat: parts made with --segment K/N joined into one video (run.hpp).
#include <cstdio>
#include <filesystem>

#include "run.hpp"
#include "tandem/video_join.hpp"

namespace fs = std::filesystem;

namespace tandem::cli {

int run_concat(const ConcatOptions& c) {
  g_interrupted = false;
  std::error_code ec;
  if (fs::exists(c.output, ec) && !c.overwrite) {
    throw tandem::Error("output '" + c.output + "' already exists (use -y to overwrite it)");
  }
  std::vector<fs::path> parts;
  for (const std::string& p : c.parts) {
    if (fs::exists(c.output, ec) && fs::equivalent(p, c.output, ec)) {
      throw tandem::Error("'" + p + "' is both a part and the output");
    }
    parts.emplace_back(p);
  }
  tandem::JoinOptions options;
  options.streams_from = c.streams_from;
  options.no_audio = c.no_audio;
  options.no_subtitles = c.no_subtitles;
  options.no_data = c.no_data;
  options.stop = &g_interrupted;
  const tandem::JoinStats stats = tandem::join_segments(parts, c.output, options);
  if (stats.stopped) {
    std::fprintf(stderr, "tandem: interrupted by %s; nothing was left at the output\n",
                 StopOnSignals::name().c_str());
    return StopOnSignals::exit_code();
  }
  std::string streams;
  for (const std::string& s : stats.streams) streams += ", " + s;
  std::fprintf(stderr, "tandem: joined %zu parts into %s (%lld frames%s)\n", parts.size(),
               c.output.c_str(), static_cast<long long>(stats.frames), streams.c_str());
  return 0;
}

}  // namespace tandem::cli
