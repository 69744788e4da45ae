#!/usr/bin/env bash
# The whole suite on the GPU machine in parts that fit its calls: builds /tmp/b (no OpenCV, FFmpeg
# or GUI; kept while the machine stays warm), then runs, 16 at once in ctest's own order, every
# test whose name is not in DONE (a file of test names, one a line; missing: none), until LIMIT
# seconds after the start. $OUT/ctest.txt is the log, with the output of every test that
# failed; $OUT/passed.txt lists the tests that passed or were skipped, to append to DONE for the
# next call:
#   bash tools/device-ctest.sh [LIMIT=580] [DONE=.device/done.txt]
# On cold program caches the suite takes two or three such calls on the H100 machine (its PoCL
# tests compile for minutes). Do not order it longest first: sixteen of the heaviest PoCL tests
# at once took 450-560 s each, against 165-300 s beside lighter ones
# (bench-results/2026-11-27-h100-s24-suite.txt).
set -u
source .device/prelude.sh
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
t0=$(date +%s)
limit=${1:-580}
done_file=$(realpath -m "${2:-.device/done.txt}")
export TANDEM_CACHE_DIR=/tmp/tandem-cache
if [ ! -f /tmp/b/CMakeCache.txt ]; then
  cmake -S . -B /tmp/b -DCMAKE_BUILD_TYPE=Release -DTANDEM_WITH_OPENCV=OFF -DTANDEM_WITH_FFMPEG=OFF \
    -DTANDEM_BUILD_VIEW=OFF -DTANDEM_BUILD_TESTS=ON > "$OUT/configure.txt" 2>&1 ||
    { tail -20 "$OUT/configure.txt"; exit 1; }
fi
cmake --build /tmp/b > "$OUT/build.txt" 2>&1 || { grep -m20 -iE 'error' "$OUT/build.txt"; exit 1; }
{ nvidia-smi -L; nproc; } > "$OUT/machine.txt" 2>&1
echo "built at +$(( $(date +%s) - t0 )) s"
[ -f "$done_file" ] || : > "$done_file"
ids=$(cd /tmp/b && ctest -N | sed -nE 's/^ *Test +#([0-9]+): (.*)$/\1 \2/p' |
      awk 'FILENAME == ARGV[1] { done[$1] = 1; next } !($2 in done) { printf "%s,", $1 }' \
        "$done_file" -)
echo "to run: $(echo "$ids" | tr ',' '\n' | grep -c .)"
[ -n "$ids" ] || exit 0
left=$(( limit - ($(date +%s) - t0) ))
[ "$left" -ge 30 ] || { echo "no time left for the tests (limit $limit s)"; exit 1; }
(cd /tmp/b && timeout "$left" ctest -j16 --output-on-failure -I "0,0,0,${ids%,}" > "$OUT/ctest.txt" 2>&1)
echo "ctest rc $? at +$(( $(date +%s) - t0 )) s"
sed -nE 's/.*Test +#[0-9]+: (\S+) \.+ *(\*\*\*Skipped|Passed).*/\1/p' "$OUT/ctest.txt" > "$OUT/passed.txt"
echo "passed or skipped: $(wc -l < "$OUT/passed.txt")"
grep -E '\*\*\*Failed|Exception|\*\*\*Timeout' "$OUT/ctest.txt" | head
