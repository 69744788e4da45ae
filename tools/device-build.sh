# Sourced at the start of a GPU-machine benchmark run (tools/device-run.sh and the other
# tools/device-*.sh): builds the project without OpenCV/FFmpeg/GUI into /tmp/b (kept while the
# machine stays warm) and sets OUT, TANDEM_CACHE_DIR and B (tandem-bench) for what follows. The
# suite is not run here: on cold program caches it takes two or three calls of its own
# (tools/device-ctest.sh).
set -u
source .device/prelude.sh
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
if [ ! -f /tmp/b/CMakeCache.txt ]; then
  cmake -S . -B /tmp/b -DCMAKE_BUILD_TYPE=Release -DTANDEM_WITH_OPENCV=OFF -DTANDEM_WITH_FFMPEG=OFF \
    -DTANDEM_BUILD_VIEW=OFF -DTANDEM_BUILD_TESTS=ON > "$OUT/configure.txt" 2>&1 ||
    { tail -30 "$OUT/configure.txt"; exit 1; }
fi
# BUILD_TARGET=tandem_bench builds tandem-bench alone.
cmake --build /tmp/b ${BUILD_TARGET:+--target "$BUILD_TARGET"} > "$OUT/build.txt" 2>&1 ||
  { grep -m20 -iE 'error' "$OUT/build.txt"; exit 1; }
echo "built $(date -u +%T)"
export TANDEM_CACHE_DIR=/tmp/tandem-bench-cache
B=/tmp/b/apps/bench/tandem-bench
