#!/usr/bin/env bash
# The README's test command: install, build, and run every test suite with ctest. The suites
# run once on PoCL's default device and once with two PoCL devices in one platform, which
# exercises the shared-context co-execution path.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/install-deps.sh"
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$root/build"
export TANDEM_CACHE_DIR="$root/build/test-cache"
cd "$root/build"
echo "== ctest on the default OpenCL devices"
ctest --output-on-failure -j2
echo "== ctest with two PoCL devices in one platform (POCL_DEVICES=\"pthread basic\")"
POCL_DEVICES="pthread basic" ctest --output-on-failure -j2
