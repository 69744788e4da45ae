# Sourced at the start of a GPU-machine run (tools/device-run.sh, tools/device-coexec.sh): builds
# the project without OpenCV/FFmpeg/GUI into /tmp/b, runs the whole suite on every device
# (.device/check.sh ctest), and sets OUT, TANDEM_CACHE_DIR and B (tandem-bench) for what follows.
set -u
source .device/prelude.sh
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
cmake -S . -B /tmp/b -DCMAKE_BUILD_TYPE=Release -DTANDEM_WITH_OPENCV=OFF -DTANDEM_WITH_FFMPEG=OFF \
  -DTANDEM_BUILD_VIEW=OFF -DTANDEM_BUILD_TESTS=ON > /tmp/configure.txt 2>&1 || { tail -30 /tmp/configure.txt; exit 1; }
cmake --build /tmp/b > /tmp/build.txt 2>&1 || { grep -m20 -iE 'error' /tmp/build.txt; exit 1; }
echo "built $(date -u +%T)"
bash .device/check.sh ctest
echo "ctest done $(date -u +%T)"
export TANDEM_CACHE_DIR=/tmp/tandem-bench-cache
B=/tmp/b/apps/bench/tandem-bench
