// tandem-bench's filter cases: each filter's graph on a synthetic 1080p frame, and with OpenCV
// compiled in, OpenCV's equivalent on the same cores, run in the same process (run_filters() in
// filters_mode.cpp times both).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tandem/tandem.hpp"

#ifdef TANDEM_BENCH_OPENCV
#include <opencv2/core.hpp>
#endif

namespace tandem::bench {

#ifdef TANDEM_BENCH_OPENCV
// OpenCV's counterpart of a case: `prepare` converts the ring once (untimed) and returns what
// one timed frame runs.
using OpenCvRun = std::function<void(int)>;
using OpenCvPrepare = std::function<OpenCvRun(const std::vector<Frame>&)>;
#endif

struct FilterCase {
  std::string label;
  std::string graph;
  PixelFormat format;
  std::vector<std::string> needs;
  std::string opencv_label;  // what the OpenCV side runs, empty: no counterpart
#ifdef TANDEM_BENCH_OPENCV
  OpenCvPrepare opencv;
#endif
};

/// Every case, in the order the report lists them.
std::vector<FilterCase> filter_cases();

}  // namespace tandem::bench
