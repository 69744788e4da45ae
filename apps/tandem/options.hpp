#pragma once
// The options of a tandem run on the command line, shared by tandem and tandem-mpi.
#include <CLI/CLI.hpp>

#include "run.hpp"

namespace tandem::cli {

/// Adds -i, -o, -f and every option of a run to `app`, filling `o`.
void add_run_options(CLI::App& app, RunOptions& o);

/// Throws CLI::ParseError for FFmpeg's spellings of options (-an, -crf: one dash) before
/// CLI11 reads them as clusters of short flags (-hwaccel as -h: the whole help and exit 0).
void check_dashes(const CLI::App& app, int argc, char** argv);

}  // namespace tandem::cli
