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
# The suites are listed when ctest starts (DISCOVERY_MODE PRE_TEST), in its environment; the lists
# are forgotten before each run so that suites parameterised by device get a case per device.
echo "== ctest on the default OpenCL devices"
rm -f tests/*_tests.cmake
ctest --output-on-failure -j2
echo "== ctest with two PoCL devices in one platform (POCL_DEVICES=\"pthread basic\")"
rm -f tests/*_tests.cmake
POCL_DEVICES="pthread basic" ctest --output-on-failure -j2
