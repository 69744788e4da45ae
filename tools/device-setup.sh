#!/usr/bin/env bash
# Prepares .device/ for the GPU machine (../shared/device/README.md): TBB and GoogleTest, which
# that machine lacks, plus the header-only libraries tandem-bench and the library's JSON need
# there (CLI11, nlohmann-json), as Debian packages. Run once here, then carry .device/ and run
# `bash .device/check.sh` there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
EXTRA_DEBS="nlohmann-json3-dev libcli11-dev ${EXTRA_DEBS:-}" bash "$root/../shared/device/setup.sh"
