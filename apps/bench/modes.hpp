// tandem-bench's modes, one file each: each prints its report on stdout after the header and,
// with --json, writes its numbers to a file. Each returns the process's exit status.
#pragma once

#include "bench_support.hpp"

namespace tandem::bench {

class BinaryDump;

/// Each device's copy bandwidth, then every filter case and fused chain on each device alone;
/// `dump`, when not null, takes each program built (filters_mode.cpp).
int run_filters(const Options& o, const Machine& machine, BinaryDump* dump);

/// The graph on each device alone, then on all of them together (coexec_mode.cpp).
int run_coexec(const Options& o, const Machine& machine);

/// A stream of frames one at a time against pipelined (stream_mode.cpp).
int run_stream(const Options& o, const Machine& machine);

}  // namespace tandem::bench
