#!/usr/bin/env bash
# A video in segments, end to end: `tandem --segment K/N` and `tandem concat`, then tandem-mpi
# under mpirun on this machine. The joined video equals the single run's: every frame (FFV1,
# within the co-execution tolerance: PSNR of 50 dB or more, in practice infinite), the same
# frame timestamps, the audio packets byte for byte. Errors say what is wrong and leave nothing
# at the output; a rank killed mid-run has its segments redone; an interrupted run leaves nothing.
#   segments_test.sh path/to/tandem [path/to/tandem-mpi path/to/mpirun]
set -u
tandem=$1
mpi=${2:-}
mpirun=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() {
  fail=$((fail + 1))
  echo "FAIL $1"
  [ -f "$work/stderr" ] && sed 's/^/     stderr: /' "$work/stderr"
}

# same_video NAME A B: A's frames within 50 dB PSNR of B's, same video timestamps, same audio
# packets.
same_video() {
  local name=$1 a=$2 b=$3 problems=""
  for f in "$a" "$b"; do
    ffprobe -v error -select_streams v -show_entries packet=pts_time -of csv=p=0 "$f" |
      sort -g >"$f.pts"
    ffmpeg -v error -i "$f" -map 0:a -c copy -f framemd5 - | grep -v '^#' >"$f.audio"
  done
  cmp -s "$a.pts" "$b.pts" || problems+=" video timestamps differ;"
  [ "$(wc -l <"$a.pts")" -eq 300 ] || problems+=" $(wc -l <"$a.pts") frames, not 300;"
  cmp -s "$a.audio" "$b.audio" || problems+=" audio packets differ;"
  [ -s "$a.audio" ] || problems+=" no audio;"
  local psnr
  psnr=$(ffmpeg -nostats -i "$a" -i "$b" -lavfi "[0:v][1:v]psnr" -f null - 2>&1 |
    grep -o 'min:[^ ]*' | tail -1 | cut -d: -f2)
  case $psnr in
    inf) ;;
    "") problems+=" no PSNR measured;" ;;
    *) awk -v p="$psnr" 'BEGIN { exit !(p >= 50) }' || problems+=" frames differ (PSNR min $psnr dB);" ;;
  esac
  if [ -z "$problems" ]; then ok "$name"; else bad "$name:$problems"; fi
}

# expect_error NAME MESSAGE OUTPUT -- command...: a non-zero exit, MESSAGE on stderr, nothing
# at OUTPUT (unless empty) and no temporary file beside it.
expect_error() {
  local name=$1 message=$2 output=$3 problems=""
  shift 4
  "$@" >"$work/stdout" 2>"$work/stderr" && problems+=" exit code 0;"
  grep -qF -- "$message" "$work/stderr" || problems+=" stderr lacks '$message';"
  if [ -n "$output" ]; then
    [ -e "$output" ] && problems+=" '$output' exists;"
    ls -A "$(dirname "$output")" | grep -q "tandem-" && problems+=" a temporary file was left;"
  fi
  if [ -z "$problems" ]; then ok "$name"; else bad "$name:$problems"; fi
}

# 300 frames of H.264 at 25 fps, a key frame every 25, with AAC audio.
in=$work/in.mp4
ffmpeg -loglevel error -f lavfi -i testsrc2=size=160x120:rate=25 \
  -f lavfi -i sine=frequency=440:sample_rate=48000 -frames:v 300 -c:v libx264 -g 25 \
  -pix_fmt yuv420p -c:a aac -shortest "$in" || { echo "FAIL cannot make the input"; exit 1; }
graph="gaussian=sigma=1.5,saturation=1.3,tonemap=op=reinhard,fade=in:0:40"
out=$work/out
mkdir -p "$out"

if "$tandem" -i "$in" -o "$out/single.mkv" -f "$graph" --codec ffv1 2>"$work/stderr"; then
  ok "the single run"
else
  bad "the single run"
fi

# ---- tandem --segment K/N, tandem concat ----
for k in 0 1 2 3 4; do
  "$tandem" -i "$in" --segment $k/5 -o "$out/part-$k.mkv" -f "$graph" --codec ffv1 \
    --report "$out/part-$k.json" 2>"$work/stderr" || bad "segment $k/5"
done
grep -q "holds the video alone" "$work/stderr" && ok "a part says it holds the video alone" ||
  bad "a part says it holds the video alone"
if jq -e '.segment.warm_up_frames >= 36 and .segment.first_frame == 250' "$out/part-4.json" \
  >/dev/null; then
  ok "a segment after the first warms tonemap up"
else
  bad "a segment after the first warms tonemap up"
fi
# Given in an order of the shell's choosing: concat orders them by their timestamps.
if "$tandem" concat "$out"/part-4.mkv "$out"/part-[0-3].mkv -o "$out/joined.mkv" \
  --streams-from "$in" 2>"$work/stderr"; then
  ok "concat"
  same_video "--segment and concat equal the single run" "$out/joined.mkv" "$out/single.mkv"
else
  bad "concat"
fi

expect_error "--segment K beyond N" "K counts from 0 to N-1 (2 here)" "$out/x.mkv" -- \
  "$tandem" -i "$in" --segment 3/3 -o "$out/x.mkv" -f "$graph"
expect_error "--segment not K/N" "give K/N" "$out/x.mkv" -- \
  "$tandem" -i "$in" --segment 3 -o "$out/x.mkv" -f "$graph"
expect_error "more segments than key frames" "12 key frames to begin one at, so 12 segments at most" \
  "$out/x.mkv" -- "$tandem" -i "$in" --segment 5/20 -o "$out/x.mkv" -f "$graph"
expect_error "--segment with --start" "takes no --start" "$out/x.mkv" -- \
  "$tandem" -i "$in" --segment 1/4 --start 2 -o "$out/x.mkv" -f "$graph"
expect_error "--segment into images" "give it a video output" "$out/x.png" -- \
  "$tandem" -i "$in" --segment 1/4 -o "$out/x.png" -f "$graph"
expect_error "concat with a part left out" "are in no part (is one left out?)" "$out/x.mkv" -- \
  "$tandem" concat "$out/part-0.mkv" "$out/part-2.mkv" "$out/part-3.mkv" "$out/part-4.mkv" \
  -o "$out/x.mkv" --streams-from "$in"
expect_error "concat with a part given twice" "parts overlap (is one given twice?)" "$out/x.mkv" -- \
  "$tandem" concat "$out"/part-[0-4].mkv "$out/part-2.mkv" -o "$out/x.mkv" --streams-from "$in"
expect_error "concat of a part that is not there" "no such file" "$out/x.mkv" -- \
  "$tandem" concat "$out/part-0.mkv" "$out/nope.mkv" -o "$out/x.mkv"
expect_error "concat onto an existing output" "already exists (use -y" "" -- \
  "$tandem" concat "$out/part-0.mkv" -o "$out/joined.mkv"
rm -f "$out"/part-*

# ---- tandem-mpi ----
if [ -n "$mpi" ] && [ -x "$mpi" ] && [ -n "$mpirun" ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # Loopback only, no network interfaces probed.
  export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
  run_mpi() { "$mpirun" --oversubscribe --bind-to none "$@"; }

  if run_mpi -n 4 "$mpi" -i "$in" -o "$out/mpi.mkv" -f "$graph" --codec ffv1 \
    --report "$out/mpi.json" 2>"$work/stderr"; then
    ok "mpirun -n 4 tandem-mpi"
    same_video "tandem-mpi on 4 ranks equals the single run" "$out/mpi.mkv" "$out/single.mkv"
    jq -e '(.segments | length) == 12 and ([.segments[].frames] | add) == 300' "$out/mpi.json" \
      >/dev/null && ok "the report lists 12 segments of 300 frames" ||
      bad "the report lists 12 segments of 300 frames"
  else
    bad "mpirun -n 4 tandem-mpi"
  fi
  ls -A "$out" | grep -q "tandem-mpi" && bad "tandem-mpi left its parts" || ok "no parts left"

  # One device, a graph without temporal state: every frame exactly the single run's.
  exact="gaussian=sigma=1.5,saturation=1.3"
  if "$tandem" -i "$in" -o "$out/single-exact.mkv" -f "$exact" --codec ffv1 --devices 0.0 \
    2>"$work/stderr" && run_mpi -n 4 "$mpi" -i "$in" -o "$out/mpi-exact.mkv" -f "$exact" \
    --codec ffv1 --devices 0.0 2>"$work/stderr"; then
    for f in single-exact mpi-exact; do
      ffmpeg -v error -i "$out/$f.mkv" -map 0:v -f framemd5 - | grep -v '^#' >"$out/$f.md5"
    done
    cmp -s "$out/single-exact.md5" "$out/mpi-exact.md5" &&
      ok "tandem-mpi on one device: every frame and timestamp exactly the single run's" ||
      bad "tandem-mpi on one device: every frame and timestamp exactly the single run's"
  else
    bad "tandem-mpi on one device"
  fi

  mkdir -p "$work/shared"
  if run_mpi -n 3 "$mpi" -i "$in" -o "$out/shared.mkv" -f "$graph" --codec ffv1 \
    --parts-dir "$work/shared" --segments 7 2>"$work/stderr"; then
    same_video "tandem-mpi with a shared parts directory" "$out/shared.mkv" "$out/single.mkv"
    [ -z "$(ls -A "$work/shared")" ] && ok "the shared directory is left empty" ||
      bad "the shared directory is left empty"
  else
    bad "tandem-mpi with a shared parts directory"
  fi

  # Rank 2 killed (SIGKILL) after its first frame: mpirun --enable-recovery lets the others go
  # on, and rank 0 hands its segment to another rank once it has been silent for 5 s.
  if TANDEM_MPI_TEST_KILL_RANK=2 run_mpi --enable-recovery -x TANDEM_MPI_TEST_KILL_RANK -n 4 \
    "$mpi" -i "$in" -o "$out/killed.mkv" -f "$graph" --codec ffv1 --rank-timeout 5 \
    2>"$work/stderr"; then
    ok "tandem-mpi with a rank killed"
    same_video "a killed rank's segment redone: the output is complete" "$out/killed.mkv" \
      "$out/single.mkv"
    # (A loaded machine may take another rank for lost too, for a while.)
    grep -qE "redone on other ranks \(ranks lost: ([0-9]+, )*2(, [0-9]+)*\)" "$work/stderr" &&
      ok "the run says it redid rank 2's segment" || bad "the run says it redid rank 2's segment"
  else
    bad "tandem-mpi with a rank killed"
  fi

  expect_error "tandem-mpi with a bad graph" "unknown filter 'nosuch'" "$out/x.mkv" -- \
    run_mpi -n 2 "$mpi" -i "$in" -o "$out/x.mkv" -f "nosuch=1"
  expect_error "tandem-mpi with more segments than key frames" "12 segments at most" \
    "$out/x.mkv" -- run_mpi -n 2 "$mpi" -i "$in" -o "$out/x.mkv" -f "$graph" --segments 30

  # Interrupted: SIGINT (Ctrl-C) to mpirun once frames are coming (a slow graph, so it is
  # mid-run). With job control, a job in the background does not ignore SIGINT.
  set -m
  "$mpirun" --oversubscribe --bind-to none -n 2 "$mpi" -i "$in" -o "$out/stopped.mkv" -f "denoise,$graph" \
    --codec ffv1 --progress json 2>"$work/stderr" &
  job=$!
  set +m
  for _ in $(seq 600); do
    grep -q '"frame":[1-9]' "$work/stderr" && break
    sleep 0.1
  done
  kill -INT $job
  wait $job && bad "an interrupted tandem-mpi exits with 0"
  if [ ! -e "$out/stopped.mkv" ] && ! ls -A "$out" | grep -q "tandem"; then
    ok "an interrupted tandem-mpi leaves nothing at the output"
  else
    bad "an interrupted tandem-mpi leaves nothing at the output: $(ls -A "$out")"
  fi
else
  echo "skip tandem-mpi: not built (needs MPI: libopenmpi-dev, openmpi-bin)"
fi

echo "segments: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
