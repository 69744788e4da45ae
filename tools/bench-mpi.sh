#!/usr/bin/env bash
# tandem-mpi's wall time on 1, 2 and 4 ranks of this machine against one tandem process, on one
# 1080p H.264 video with AAC (decode, filter, libx264 encode, join), and from the per-segment
# times of its report an estimate of N machines for a one-hour 1080p video.
# Usage: tools/bench-mpi.sh [BUILD_DIR] [SECONDS_OF_VIDEO]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
length=${2:-12}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
graph="gaussian=sigma=2,saturation=1.3"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); commit $(git -C "$root" rev-parse --short HEAD)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command: tools/bench-mpi.sh $* (mpirun --oversubscribe --bind-to none -n N); graph \"$graph\", output libx264 crf 23 (.mp4)"
ffmpeg -v error -f lavfi -i testsrc2=size=1920x1080:rate=25 -f lavfi -i sine=frequency=440 \
  -t "$length" -c:v libx264 -preset medium -crf 23 -g 50 -pix_fmt yuv420p -c:a aac -shortest \
  "$work/in.mp4"
frames=$((length * 25))
echo "input: testsrc2 1920x1080, 25 fps, $frames frames, a key frame every 50, H.264 + AAC"

seconds() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>"$work/last.log" || { cat "$work/last.log" >&2; return 1; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }'
}

# Warm the program cache and the page cache first: every run below finds them warm.
"$build/tandem" -y -i "$work/in.mp4" -o "$work/warm.mp4" -f "$graph" --crf 23 --frames 10 \
  2>/dev/null
single=$(seconds "$build/tandem" -y -i "$work/in.mp4" -o "$work/single.mp4" -f "$graph" --crf 23)
echo "tandem, one process: $single s ($(awk -v f=$frames -v s="$single" 'BEGIN{printf "%.1f", f/s}') fps)"
for n in 1 2 4; do
  t=$(seconds mpirun --oversubscribe --bind-to none -n $n "$build/tandem-mpi" -y -i "$work/in.mp4" \
        -o "$work/mpi-$n.mp4" -f "$graph" --crf 23 --report "$work/mpi-$n.json")
  echo "tandem-mpi, $n rank(s): $t s (mpirun's own start and end included); $(jq -r '"\(.segments | length) segments, \(.wall_ms / 1000 | . * 100 | round / 100) s from rank 0 start to output"' "$work/mpi-$n.json")"
done
echo
echo "per-segment times on 1 rank (frames, seconds, fps):"
jq -r '.segments[] | "  segment \(.index): \(.frames) frames, \(.seconds | . * 100 | round / 100) s, \(.frames / .seconds | . * 10 | round / 10) fps"' "$work/mpi-1.json"
# Estimate: a one-hour 1080p video at 25 fps is 90000 frames. A segment's time on one rank is
# fitted as a fixed part (opening the devices, the encoder's start and its flush at the end) and
# a time per frame, by least squares over the segments above; N machines, four segments each,
# take 90000 / N frames' time and four fixed parts each, plus rank 0's key-frame scan and join
# (measured here, scaled from these frames to 90000).
jq -r '
  .segments as $s | ($s | length) as $n
  | ([$s[].frames] | add / $n) as $mx | ([$s[].seconds] | add / $n) as $my
  | ([$s[] | (.frames - $mx) * (.seconds - $my)] | add) as $sxy
  | ([$s[] | (.frames - $mx) * (.frames - $mx)] | add) as $sxx
  | (if $sxx > 0 then $sxy / $sxx else $my / $mx end) as $per_frame
  | ([($my - $per_frame * $mx), 0] | max) as $fixed
  | (90000 / .frames) as $scale
  | ((.index_ms + .join_ms) / 1000 * $scale) as $serial
  | "segment time fitted on 1 rank: \($fixed | . * 100 | round / 100) s fixed + \($per_frame * 1000 | . * 10 | round / 10) ms a frame (\(1 / $per_frame | . * 10 | round / 10) fps); rank 0 alone: key-frame scan \(.index_ms | round) ms and join \(.join_ms | round) ms for \(.frames) frames",
    "estimate for one hour of 1080p (90000 frames) on N machines like this one (2 cores, no GPU):",
    ( [1, 4, 16, 64][] as $m
      | (90000 / $m * $per_frame + 4 * $fixed + $serial) as $t
      | "  N = \($m): \($t / 60 | . * 10 | round / 10) min (\(90000 / $m / 4 | floor) frames a segment)"
    )' "$work/mpi-1.json"
