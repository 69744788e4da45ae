#!/usr/bin/env bash
# tandem against ffmpeg's own filters on one 1080p H.264 video, end to end (decode, filter,
# libx264 encode), on this machine. Usage: tools/bench-video.sh [BUILD_DIR] [ROUNDS]
# Prints the date, machine and load, each tool's wall time per round (the rounds alternate so that
# both see the same load) and their medians, tandem's time per stage from its --report, and
# ffmpeg's decode-only and decode+encode times, which bound what any filter can gain, and both
# tools' decode+filter times without an encoder.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
rounds=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
graph="gaussian=sigma=2,saturation=1.3"
x264=(-c:v libx264 -preset medium -crf 23)

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command: tools/bench-video.sh $* ; tandem graph \"$graph\", ffmpeg -vf gblur=sigma=2,eq=saturation=1.3; both encode ${x264[*]}"
ffmpeg -v error -f lavfi -i testsrc2=size=1920x1080:rate=25 -f lavfi -i sine=frequency=440 \
  -t 4 -c:v libx264 -preset medium -crf 23 -pix_fmt yuv420p -c:a aac -shortest "$work/in.mp4"
echo "input: testsrc2 1920x1080, 25 fps, 100 frames, H.264 (libx264 medium crf 23) + AAC"

seconds() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>"$work/last.log"
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }'
}
median() { sort -n | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

: >"$work/ffmpeg.txt"; : >"$work/tandem.txt"
for r in $(seq "$rounds"); do
  f=$(seconds ffmpeg -y -v error -i "$work/in.mp4" -vf gblur=sigma=2,eq=saturation=1.3 \
        "${x264[@]}" -c:a copy "$work/ff.mp4")
  t=$(seconds "$build/tandem" -y -i "$work/in.mp4" -o "$work/td.mp4" -f "$graph" \
        --codec libx264 --crf 23)
  cp "$work/last.log" "$work/tandem.log"
  echo "round $r: ffmpeg $f s, tandem $t s"
  echo "$f" >>"$work/ffmpeg.txt"; echo "$t" >>"$work/tandem.txt"
done
ff=$(median <"$work/ffmpeg.txt"); td=$(median <"$work/tandem.txt")
echo "median: ffmpeg $ff s, tandem $td s; tandem is $(awk -v f="$ff" -v t="$td" 'BEGIN { printf "%.2f", f / t }')x ffmpeg's speed"
echo "tandem, last round, its own summary (device times are profiling events; host stages overlap):"
sed 's/^/  /' "$work/tandem.log"
echo "bounds (ffmpeg, one run each):"
echo "  decode only: $(seconds ffmpeg -y -v error -i "$work/in.mp4" -f null -) s"
echo "  decode + libx264 encode, no filter: $(seconds ffmpeg -y -v error -i "$work/in.mp4" "${x264[@]}" -an "$work/enc.mp4") s"
echo "  decode + ffmpeg's filters, no encode: $(seconds ffmpeg -y -v error -i "$work/in.mp4" -vf gblur=sigma=2,eq=saturation=1.3 -f null -) s"
echo "  decode + tandem's filters, no encode (raw YUV4MPEG2 planes to /dev/null): $(seconds "$build/tandem" -i "$work/in.mp4" -o - --pix-fmt yuv420p -f "$graph") s"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
