#!/usr/bin/env bash
# The tandem command line end to end: every error case gives one clear line on stderr, a
# non-zero exit, and leaves nothing at the output path.
#   cli_test.sh path/to/tandem path/to/data
set -u
tandem=$1
data=$2
work=$(mktemp -d)
trap 'chmod -R u+rwx "$work"; rm -rf "$work"' EXIT
pass=0
fail=0

# expect_error NAME MESSAGE OUTPUT -- tandem arguments...
expect_error() {
  local name=$1 message=$2 output=$3
  shift 4
  "$tandem" "$@" >"$work/stdout" 2>"$work/stderr"
  local rc=$?
  local problems=""
  [ "$rc" -ne 0 ] || problems+=" exit code 0;"
  grep -qF -- "$message" "$work/stderr" || problems+=" stderr lacks '$message';"
  [ -n "$output" ] && [ -e "$output" ] && problems+=" '$output' exists;"
  # No temporary file may be left beside the output either.
  if [ -n "$output" ] && [ -d "$(dirname "$output")" ] &&
    ls -A "$(dirname "$output")" | grep -q "tandem-"; then
    problems+=" a temporary file was left;"
  fi
  if [ -z "$problems" ]; then
    pass=$((pass + 1))
    echo "ok   $name"
  else
    fail=$((fail + 1))
    echo "FAIL $name:$problems"
    sed 's/^/     stderr: /' "$work/stderr"
  fi
}

expect_ok() {
  local name=$1
  shift
  if "$tandem" "$@" >"$work/stdout" 2>"$work/stderr"; then
    pass=$((pass + 1))
    echo "ok   $name"
  else
    fail=$((fail + 1))
    echo "FAIL $name: exit code $?"
    sed 's/^/     stderr: /' "$work/stderr"
  fi
}

sample=$data/chelsea.png
out=$work/out/result.png
mkdir -p "$work/out"

expect_ok "runs on the sample" -i "$sample" -o "$out" -f "saturation=1.4"
[ -s "$out" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL no output written"; }
expect_error "refuses to overwrite without -y" "already exists (use -y" "" -- -i "$sample" -o "$out" -f "saturation=1.4"
# A mistyped graph is reported before an output that exists: the first thing to fix.
expect_error "names a bad graph before an existing output" "unknown name 'iwx'" "" -- \
  -i "$sample" -o "$out" -f "scale=iwx/2:-2"
grep -q "already exists" "$work/stderr" && { fail=$((fail + 1)); echo "FAIL the bad graph's error also speaks of the output"; }
expect_ok "overwrites with -y" -i "$sample" -o "$out" -f "saturation=1.4" -y
rm -f "$out"

expect_error "missing input" "cannot read '$work/nope.png': no such file" "$out" -- -i "$work/nope.png" -o "$out" -f saturation
expect_error "input is a directory" "it is a directory" "$out" -- -i "$work" -o "$out" -f saturation
head -c 20000 "$sample" >"$work/truncated.png"
expect_error "truncated PNG" "truncated or corrupt" "$out" -- -i "$work/truncated.png" -o "$out" -f saturation
expect_ok "writes a JPEG" -i "$sample" -o "$work/sample.jpg" -f saturation
head -c 5000 "$work/sample.jpg" >"$work/truncated.jpg"
expect_error "truncated JPEG" "JPEG file is truncated" "$out" -- -i "$work/truncated.jpg" -o "$out" -f saturation
printf 'this is not an image' >"$work/garbage.png"
expect_error "corrupt input" "not a supported image" "$out" -- -i "$work/garbage.png" -o "$out" -f saturation
: >"$work/empty.png"
expect_error "empty input" "the file is empty" "$out" -- -i "$work/empty.png" -o "$out" -f saturation
if [ "$(id -u)" -ne 0 ]; then
  cp "$sample" "$work/locked.png" && chmod 000 "$work/locked.png"
  expect_error "unreadable input" "Permission denied" "$out" -- -i "$work/locked.png" -o "$out" -f saturation
fi

# Usage errors: one line and exit code 2, FFmpeg's single-dash options included (-hwaccel was
# read as -h: the whole help and exit 0).
for args in "-hwaccel auto" "--frobnicate" "-yes" "-report x.json"; do
  # shellcheck disable=SC2086
  "$tandem" $args -i "$sample" -o "$work/out/u.png" -f saturation >"$work/stdout" 2>"$work/stderr"
  rc=$?
  if [ "$rc" -eq 2 ] && [ "$(wc -l <"$work/stderr")" -eq 1 ] && grep -q "^tandem: error: .*${args%% *}" "$work/stderr" &&
    [ ! -s "$work/stdout" ] && [ ! -e "$work/out/u.png" ]; then
    pass=$((pass + 1)); echo "ok   usage error: $args"
  else
    fail=$((fail + 1)); echo "FAIL usage error: $args: exit code $rc"; sed 's/^/     stderr: /' "$work/stderr"
  fi
done

expect_error "output directory missing" "does not exist" "$work/no/such/dir/x.png" -- -i "$sample" -o "$work/no/such/dir/x.png" -f saturation
expect_error "unwritable output" "cannot write '/proc/tandem-test.png'" "" -- -i "$sample" -o /proc/tandem-test.png -f saturation
expect_error "unknown output format" "unknown image format" "$work/out/x.xyz" -- -i "$sample" -o "$work/out/x.xyz" -f saturation

# A full disk: every format fails with one clear error and leaves nothing. A 16 KiB tmpfs (smaller
# than any of the outputs) is mounted in a mount namespace of the command's own, where user
# namespaces let unshare -rm do that without root; the namespace is gone when the command ends,
# so the wrapper itself reports what is left in the directory ("left:" and the names).
cat >"$work/on-full-disk" <<'EOF'
dir=$1
shift
mount -t tmpfs -o size=16k tmpfs "$dir" || exit 99
"$@"
rc=$?
echo "left:$(ls -A "$dir" | tr '\n' ' ')"
exit "$rc"
EOF
mkdir -p "$work/full"
printf '#!/usr/bin/env bash\nexec unshare -rm bash "%s" "%s" "%s" "$@"\n' "$work/on-full-disk" "$work/full" "$tandem" >"$work/tandem-on-full-disk"
chmod +x "$work/tandem-on-full-disk"
if unshare -rm bash "$work/on-full-disk" "$work/full" true >/dev/null 2>&1; then
  for ext in bmp png jpg tif hdr exr; do
    tandem="$work/tandem-on-full-disk" expect_error "full disk ($ext)" "tandem: error: cannot write '$work/full/x.$ext': No space left on device" "" \
      -- -i "$sample" -o "$work/full/x.$ext" -f saturation
    grep -qx "left:" "$work/stdout" && pass=$((pass + 1)) ||
      { fail=$((fail + 1)); echo "FAIL full disk ($ext): $(cat "$work/stdout")"; }
  done
else
  echo "skip full disk: unshare -rm may not mount here (ImageIo.AFullDiskFailsEveryFormatWithOneClearError writes to /dev/full)"
fi

# OpenCV encodes .hdr and .exr through a temporary file of its own, in $OPENCV_TEMP_PATH.
for ext in hdr exr; do
  OPENCV_TEMP_PATH=$work/none expect_error "encoder's temporary file fails ($ext)" "cannot write '$out.$ext': the encoder failed" "$out.$ext" -- -i "$sample" -o "$out.$ext" -f saturation
  grep -qF "temporary file in \$OPENCV_TEMP_PATH" "$work/stderr" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL the error does not name OpenCV's temporary file"; }
done

# The pixel limit, read from the header: a 45-byte PNG whose IHDR (CRC and all) claims
# 30000x30000 is refused by the size it claims, in one line, before the decoder sees it (which
# would allocate 2.7 GB, then fail on the missing pixel data with another message).
# png_chunk TYPE HEX: a chunk with its length and CRC-32 (gzip's trailer holds the same CRC,
# little-endian), as \x escapes for printf.
png_chunk() {
  local body crc
  body=$(printf '%s' "$1" | od -An -tx1 | tr -d ' \n')$2
  crc=$(printf "$(sed 's/../\\x&/g' <<<"$body")" | gzip -c | tail -c 8 | head -c 4 | od -An -tx1 | tr -d ' \n')
  printf '%08x%s%s' $((${#2} / 2)) "$body" "${crc:6:2}${crc:4:2}${crc:2:2}${crc:0:2}" | sed 's/../\\x&/g'
}
printf '\x89PNG\r\n\x1a\n' >"$work/huge.png"
printf "$(png_chunk IHDR 0000753000007530080200000000)$(png_chunk IEND '')" >>"$work/huge.png"
expect_error "pixel limit from the header" "the image is 30000x30000 = 900000000 pixels, more than the limit of 268435456 pixels; raise the limit with --max-pixels" "$out" -- -i "$work/huge.png" -o "$out" -f saturation
[ "$(wc -l <"$work/stderr")" -eq 1 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL the pixel limit's error is not one line"; }
expect_error "pixel limit lowered" "451x300 = 135300 pixels, more than the limit of 135299 pixels" "$out" -- -i "$sample" -o "$out" -f saturation --max-pixels 135299
expect_ok "pixel limit raised to the image" -i "$sample" -o "$out" -f saturation --max-pixels 135300
rm -f "$out"

# --report: checked before any work, written before the output is put in place, so that a report
# that cannot be written leaves no output (and no report).
expect_error "report directory missing" "cannot write '$work/no/dir/r.json': directory '$work/no/dir' does not exist" "$out" -- -i "$sample" -o "$out" -f saturation --report "$work/no/dir/r.json"
expect_error "report is a directory" "cannot write '$work/out': it is a directory" "$out" -- -i "$sample" -o "$out" -f saturation --report "$work/out"
expect_error "report on a full disk" "cannot write '/dev/full': No space left on device" "$out" -- -i "$sample" -o "$out" -f saturation --report /dev/full
expect_ok "writes a report" -i "$sample" -o "$out" -f saturation --report "$work/out/r.json"
[ -s "$out" ] && [ -s "$work/out/r.json" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL no output or report written"; }
# json_ok FILE FILTER NAME: FILE holds one or more JSON values, for each of which the jq FILTER
# is true (tools/install-deps.sh installs jq; without it the check fails rather than pass unseen).
json_ok() {
  command -v jq >/dev/null || { fail=$((fail + 1)); echo "FAIL $3: jq is not installed"; return 0; }
  if jq -e -s "length > 0 and all(.[]; $2)" "$1" >/dev/null; then pass=$((pass + 1)); echo "ok   $3"; else
    fail=$((fail + 1)); echo "FAIL $3"; sed 's/^/     /' "$1"; fi
}
json_ok "$work/out/r.json" '.frames == 1 and (.devices | length) >= 1' "the image report is JSON"
rm -f "$out" "$work/out/r.json"

expect_error "unknown filter" "unknown filter 'saturaton' (did you mean 'saturation'?)" "$out" -- -i "$sample" -o "$out" -f "saturaton=2"
grep -qF -- "^~~~~~~~~" "$work/stderr" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL no caret under the unknown filter"; }
expect_error "unknown parameter" "unknown option 'strength'" "$out" -- -i "$sample" -o "$out" -f "saturation=strength=2"
expect_error "value out of range" "out of range (0..4, default 1)" "$out" -- -i "$sample" -o "$out" -f "saturation=9"
expect_error "malformed value" "invalid value 'abc' for 'amount': not a number" "$out" -- -i "$sample" -o "$out" -f "saturation=abc"
expect_error "empty graph" "expected a filter name, found ','" "$out" -- -i "$sample" -o "$out" -f ","
expect_error "bad device selection" "matches no device" "$out" -- -i "$sample" -o "$out" -f saturation --devices 9.9
expect_error "bad split policy" "static" "$out" -- -i "$sample" -o "$out" -f saturation --split static:x

OCL_ICD_VENDORS=$work/no-icd expect_error "no OpenCL device" "install an OpenCL driver" "$out" -- -i "$sample" -o "$out" -f saturation
OCL_ICD_VENDORS=$work/no-icd expect_error "no OpenCL device (listing)" "pocl-opencl-icd" "" -- devices
TANDEM_CACHE=0 expect_error "program build failure" "CL_BUILD_PROGRAM_FAILURE" "$out" -- -i "$sample" -o "$out" -f saturation --cl-options "-DTANDEM_CLH=1"
grep -qF "tandem_load4" "$work/stderr" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL the build log is not shown"; }

expect_ok "lists devices" devices
grep -qE '^[0-9]+\.[0-9]+ ' "$work/stdout" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL devices lists no id"; }
expect_ok "lists filters" filters
grep -q "^saturation" "$work/stdout" && grep -q "amount" "$work/stdout" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL filters lacks saturation"; }
expect_ok "prints help" --help
grep -q -- "--devices" "$work/stdout" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL help lacks --devices"; }

# Video, when this build has it and the ffmpeg tool is there to make test input.
if "$tandem" --help | grep -q -- "--codec" && command -v ffmpeg >/dev/null; then
  ffmpeg -loglevel error -f lavfi -i testsrc=size=160x120:rate=25 -f lavfi -i sine=frequency=440 \
    -t 2 -c:v ffv1 -c:a pcm_s16le "$work/in.mkv"
  expect_ok "processes a video" -i "$work/in.mkv" -o "$work/out/v.mkv" -f "saturation=1.3" --codec ffv1
  # A video on a full disk: one clear error, exit 1, nothing left there.
  if unshare -rm bash "$work/on-full-disk" "$work/full" true >/dev/null 2>&1; then
    "$work/tandem-on-full-disk" -i "$work/in.mkv" -o "$work/full/v.mkv" -f saturation --codec ffv1 \
      >"$work/stdout" 2>"$work/stderr"
    rc=$?
    [ "$rc" -eq 1 ] && [ "$(grep -c 'tandem: error:' "$work/stderr")" -eq 1 ] &&
      grep -q "tandem: error: cannot write '$work/full/v.mkv': .*No space left on device" "$work/stderr" &&
      grep -qx "left:" "$work/stdout" && pass=$((pass + 1)) ||
      { fail=$((fail + 1)); echo "FAIL video on a full disk (exit $rc)"; cat "$work/stdout" "$work/stderr" | sed 's/^/     /'; }
  fi
  [ -s "$work/out/v.mkv" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL no video written"; }
  # frames COUNT FILE: checks the number of video frames ffprobe decodes from FILE.
  frames() {
    local want=$1 file=$2 got
    got=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$file" 2>&1)
    if [ "$got" = "$want" ]; then pass=$((pass + 1)); echo "ok   $want frames in $(basename "$file")"; else
      fail=$((fail + 1)); echo "FAIL $(basename "$file") has '$got' frames, not $want"; fi
  }
  frames 50 "$work/out/v.mkv"
  ffprobe -v error -select_streams a:0 -show_entries stream=codec_name -of csv=p=0 "$work/out/v.mkv" | grep -q pcm_s16le &&
    pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL the audio stream was not copied"; }
  expect_ok "--start and --duration" -i "$work/in.mkv" -o "$work/out/s.mkv" -f saturation --codec ffv1 --start 1 --duration 0.4
  frames 10 "$work/out/s.mkv"
  # It starts at 0, audio with it, as FFmpeg's -ss 1 -t 0.4 gives (not at 1 s, 1.4 s long).
  first_v=$(ffprobe -v error -select_streams v:0 -show_entries packet=pts_time -of csv=p=0 "$work/out/s.mkv" | sort -g | head -1)
  first_a=$(ffprobe -v error -select_streams a:0 -show_entries packet=pts_time -of csv=p=0 "$work/out/s.mkv" | sort -g | head -1)
  length=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$work/out/s.mkv")
  if awk -v v="$first_v" -v a="$first_a" -v d="$length" 'BEGIN { exit !(v < 0.001 && a < 0.03 && d > 0.35 && d < 0.5) }'; then
    pass=$((pass + 1)); echo "ok   --start 1 --duration 0.4 starts at 0 and lasts 0.4 s"
  else
    fail=$((fail + 1)); echo "FAIL --start 1: video from $first_v s, audio from $first_a s, $length s long"
  fi
  # y4m through a shell pipe: ffmpeg | tandem | ffmpeg.
  if ffmpeg -loglevel error -i "$work/in.mkv" -pix_fmt yuv420p -f yuv4mpegpipe - |
    "$tandem" -i - -o - -f "gaussian=sigma=1" 2>"$work/stderr" |
    ffmpeg -loglevel error -f yuv4mpegpipe -i - -c:v ffv1 "$work/out/pipe.mkv"; then
    pass=$((pass + 1)); echo "ok   y4m through pipes"
  else
    fail=$((fail + 1)); echo "FAIL y4m through pipes"; sed 's/^/     stderr: /' "$work/stderr"
  fi
  frames 50 "$work/out/pipe.mkv"
  expect_ok "json progress" -i "$work/in.mkv" -o "$work/out/p.mkv" -f saturation --progress json --frames 10 --report "$work/out/v.json"
  grep -q '^{"frame":10,"total":10,' "$work/stderr" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL no json progress line for frame 10"; }
  grep '^{' "$work/stderr" >"$work/progress.json"
  json_ok "$work/progress.json" '.frame >= 1 and .total == 10 and (.split | add) > 0.99 and (.devices | length) == (.split | length) and (.devices[0] | type) == "string"' "json progress lines are JSON, the split's devices named"
  json_ok "$work/out/v.json" '.frames == 10 and .video.frames == 10 and .video.encode_ms >= 0' "the video report is JSON with its video member"
  # One wall time: the summary's, the report's and the video's agree; the report says what ran.
  json_ok "$work/out/v.json" ".wall_ms == .video.wall_ms and .video.frames_ms <= .wall_ms and .input == \"$work/in.mkv\" and .output == \"$work/out/p.mkv\" and .graph == \"saturation\" and .device_format == null and (.video.device_format | type) == \"string\"" "the video report's wall times agree and name what ran"
  said=$(grep -o 'in [0-9.]* ms$' "$work/stderr" | head -1 | cut -d' ' -f2)
  [ -n "$said" ] && jq -e --argjson said "$said" '((.wall_ms * 10 | round) / 10 - $said) | fabs < 0.06' "$work/out/v.json" >/dev/null &&
    pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL the summary's wall time ($said ms) is not the report's"; }
  # A graph whose filters work on the planes says so in the report; --no-planes converts.
  ffmpeg -loglevel error -f lavfi -i testsrc2=size=96x64:rate=25 -t 0.2 -c:v ffv1 -pix_fmt yuv420p "$work/yuv.mkv"
  expect_ok "planes report" -i "$work/yuv.mkv" -o "$work/out/g.mkv" -f "gaussian=sigma=1" --report "$work/out/g.json"
  json_ok "$work/out/g.json" '.video.filters_on_planes == true and .passes == ["stencil: gaussian (on yuv420p planes)"]' "gaussian works on the planes"
  expect_ok "--no-planes" -i "$work/yuv.mkv" -o "$work/out/g.mkv" -y -f "gaussian=sigma=1" --no-planes --report "$work/out/g.json"
  json_ok "$work/out/g.json" '.video.filters_on_planes == false and (.passes | length) == 3' "--no-planes converts to RGBA"
  expect_error "video report on a full disk" "cannot write '/dev/full': No space left on device" "$work/out/r.mkv" -- -i "$work/in.mkv" -o "$work/out/r.mkv" -f saturation --frames 10 --report /dev/full
  grep -q $'\r' "$work/stderr" && { fail=$((fail + 1)); echo "FAIL a progress bar was drawn on a non-terminal"; } || pass=$((pass + 1))
  expect_error "missing video" "no such file" "$work/out/x.mkv" -- -i "$work/none.mkv" -o "$work/out/x.mkv" -f saturation
  head -c 3000 "$work/in.mkv" >"$work/cut.mkv"
  expect_error "truncated video" "cut.mkv" "$work/out/x.mkv" -- -i "$work/cut.mkv" -o "$work/out/x.mkv" -f saturation
  ffmpeg -loglevel error -f lavfi -i sine=frequency=440 -t 1 "$work/audio.wav"
  expect_error "no video stream" "no video stream" "$work/out/x.mkv" -- -i "$work/audio.wav" -o "$work/out/x.mkv" -f saturation
  expect_error "codec the container cannot hold" "cannot hold" "$work/out/x.mp4" -- -i "$work/in.mkv" -o "$work/out/x.mp4" -f saturation --codec ffv1
  # A video's frames to images: a numbered name takes every frame, a plain one the first.
  mkdir -p "$work/out/seq"
  expect_ok "video to an image sequence" -i "$work/in.mkv" -o "$work/out/seq/f%03d.png" -f saturation
  n=$(ls "$work/out/seq" | grep -c '^f[0-9][0-9][0-9]\.png$')
  if [ "$n" -eq 50 ] && [ -s "$work/out/seq/f050.png" ] && [ "$(ls -A "$work/out/seq" | wc -l)" -eq 50 ]; then
    pass=$((pass + 1)); echo "ok   50 images f001.png to f050.png, nothing else"
  else
    fail=$((fail + 1)); echo "FAIL image sequence: $(ls -A "$work/out/seq" | head -5 | tr '\n' ' ')"
  fi
  expect_ok "video to one image" -i "$work/in.mkv" -o "$work/out/still.jpg" -f saturation --start 1
  [ -s "$work/out/still.jpg" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL no still written"; }
  expect_error "frames into one image" "holds one image; for 5 frames give a numbered name such as still2%03d.jpg" "$work/out/still2.jpg" -- -i "$work/in.mkv" -o "$work/out/still2.jpg" -f saturation --frames 5
  expect_error "a '%' that numbers nothing" "'%' must be one %d or %0Nd" "" -- -i "$work/in.mkv" -o "$work/out/g%x.png" -f saturation
  # A 10-bit input stays 10-bit (planes to the devices, rgba32f there), its colour description
  # carried; cut to 8 bits by an 8-bit --pix-fmt, it is not without a word.
  ffmpeg -loglevel error -f lavfi -i testsrc=size=160x120:rate=25 -t 0.2 -pix_fmt yuv420p10le \
    -color_primaries bt2020 -color_trc smpte2084 -colorspace bt2020nc -c:v ffv1 "$work/deep.mkv"
  expect_ok "10-bit input" -i "$work/deep.mkv" -o "$work/out/deep.mkv" -f saturation
  grep -q "frames go to the devices as yuv420p10" "$work/stderr" && ! grep -q "warning" "$work/stderr" &&
    [ "$(ffprobe -v error -show_entries stream=pix_fmt -of csv=p=0 "$work/out/deep.mkv")" = yuv420p10le ] &&
    pass=$((pass + 1)) ||
    { fail=$((fail + 1)); echo "FAIL a 10-bit input did not stay 10-bit"; sed 's/^/     stderr: /' "$work/stderr"; }
  expect_ok "10-bit input into 8 bits" -i "$work/deep.mkv" -o "$work/out/deep8.mkv" -f saturation --pix-fmt yuv420p
  grep -q "warning: '.*deep.mkv' is 10-bit video (yuv420p10le); the output's pixel format is 8-bit" "$work/stderr" &&
    pass=$((pass + 1)) ||
    { fail=$((fail + 1)); echo "FAIL no warning for a 10-bit input cut to 8 bits"; sed 's/^/     stderr: /' "$work/stderr"; }
  tags=$(ffprobe -v error -select_streams v:0 -show_entries stream=color_primaries,color_transfer,color_space -of csv=p=0 "$work/out/deep.mkv")
  [ "$tags" = "bt2020nc,smpte2084,bt2020" ] && pass=$((pass + 1)) ||
    { fail=$((fail + 1)); echo "FAIL colour tags not carried: '$tags'"; }
  # tonemap on PQ video takes its signal and primaries from the tags, and the output is tagged
  # as what it makes: SDR sRGB in BT.709.
  expect_ok "tonemap on PQ video" -i "$work/deep.mkv" -o "$work/out/sdr.mkv" -f "tonemap=op=bt2390"
  grep -q "is HDR video (smpte2084): tonemap takes transfer=pq:primaries=bt2020 from its tags" "$work/stderr" &&
    pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL tonemap did not take the PQ tags"; sed 's/^/     stderr: /' "$work/stderr"; }
  tags=$(ffprobe -v error -select_streams v:0 -show_entries stream=color_primaries,color_transfer,color_space -of csv=p=0 "$work/out/sdr.mkv")
  [ "$tags" = "bt709,iec61966-2-1,bt709" ] && pass=$((pass + 1)) ||
    { fail=$((fail + 1)); echo "FAIL tone-mapped output tagged '$tags'"; }
  # ... and 8-bit 4:2:0 by default, as SDR players take it, without a warning about the depth.
  [ "$(ffprobe -v error -show_entries stream=pix_fmt -of csv=p=0 "$work/out/sdr.mkv")" = yuv420p ] &&
    ! grep -q "warning" "$work/stderr" && pass=$((pass + 1)) ||
    { fail=$((fail + 1)); echo "FAIL tone-mapped output is not 8-bit 4:2:0 without a word"; sed 's/^/     stderr: /' "$work/stderr"; }
  # x265 logs past FFmpeg's log: kept to errors, the output is tandem's summary alone.
  if ffmpeg -hide_banner -encoders 2>/dev/null | grep -q libx265; then
    expect_ok "libx265 quietly" -i "$work/in.mkv" -o "$work/out/h.mkv" -f saturation --codec libx265 --frames 5
    grep -q "x265 \[" "$work/stderr" && { fail=$((fail + 1)); echo "FAIL x265 logged"; head -3 "$work/stderr"; } || pass=$((pass + 1))
  fi
  # --an leaves the audio out, as FFmpeg's -an does; the video is all there.
  expect_ok "--an" -i "$work/in.mkv" -o "$work/out/an.mkv" -f saturation --an
  audio=$(ffprobe -v error -select_streams a -show_entries stream=index -of csv=p=0 "$work/out/an.mkv" | wc -l)
  [ "$audio" -eq 0 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL --an left $audio audio streams"; }
  frames 50 "$work/out/an.mkv"
  # --audio re-encodes the audio (FFmpeg's -c:a): PCM, which MP4 cannot hold, into AAC; none
  # leaves it out as --an does.
  if ffmpeg -hide_banner -encoders 2>/dev/null | grep -q " aac "; then
    expect_ok "--audio aac" -i "$work/in.mkv" -o "$work/out/aac.mp4" -f saturation --audio aac --frames 10
    codec=$(ffprobe -v error -select_streams a -show_entries stream=codec_name -of csv=p=0 "$work/out/aac.mp4")
    [ "$codec" = aac ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL --audio aac wrote audio '$codec'"; }
  fi
  expect_ok "--audio none" -i "$work/in.mkv" -o "$work/out/none.mkv" -f saturation --audio none --frames 10
  audio=$(ffprobe -v error -select_streams a -show_entries stream=index -of csv=p=0 "$work/out/none.mkv" | wc -l)
  [ "$audio" -eq 0 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL --audio none left $audio audio streams"; }
  expect_error "--audio with --an" "--an excludes --audio" "$work/out/x.mkv" -- -i "$work/in.mkv" -o "$work/out/x.mkv" -f saturation --audio aac --an
  expect_error "FFmpeg's -c:a" "unknown option '-c:a': tandem's is --audio CODEC" "$work/out/x.mkv" -- -i "$work/in.mkv" -o "$work/out/x.mkv" -f saturation -c:a aac
  # --streams copies the streams named by their index in the input (FFmpeg's -map 0:N).
  ffmpeg -loglevel error -f lavfi -i testsrc=size=64x48:rate=25 -f lavfi -i sine=frequency=440:sample_rate=44100 \
    -f lavfi -i sine=frequency=880:sample_rate=22050 -map 0 -map 1 -map 2 -t 1 -c:v ffv1 -c:a pcm_s16le "$work/two.mkv"
  expect_ok "--streams" -i "$work/two.mkv" -o "$work/out/one.mkv" -f saturation --streams 2
  rates=$(ffprobe -v error -select_streams a -show_entries stream=sample_rate -of csv=p=0 "$work/out/one.mkv" | tr '\n' ' ')
  [ "$rates" = "22050 " ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL --streams 2 gave audio '$rates'"; }
  expect_error "--streams of a stream the input lacks" "the input has no stream #7 to copy besides its video (it has 1 (audio pcm_s16le), 2 (audio pcm_s16le))" "$work/out/x.mkv" -- -i "$work/two.mkv" -o "$work/out/x.mkv" -f saturation --streams 7
  expect_error "--streams with --no-copy" "--no-copy excludes --streams" "$work/out/x.mkv" -- -i "$work/two.mkv" -o "$work/out/x.mkv" -f saturation --streams 1 --no-copy
  expect_error "crf above the encoder's range" "crf 60 is out of the libx264 encoder's range 0..51" "$work/out/x.mkv" -- -i "$work/in.mkv" -o "$work/out/x.mkv" -f saturation --crf 60
  expect_error "negative crf" "crf -5 is negative" "$work/out/x.mkv" -- -i "$work/in.mkv" -o "$work/out/x.mkv" -f saturation --crf -5
  # Ctrl-C, kill and a closed terminal: nothing left at the output, or with --keep-partial a
  # playable file; exit code 128 + the signal's number.
  ffmpeg -loglevel error -f lavfi -i testsrc=size=640x480:rate=25 -t 40 -c:v ffv1 "$work/long.mkv"
  for case in "INT no 130" "INT yes 130" "TERM no 143" "HUP no 129"; do
    set -- $case
    sig=$1 keep=$2 code=$3
    out_v="$work/out/int-$sig-$keep.mkv"
    flag=""
    [ "$keep" = yes ] && flag="--keep-partial"
    # Emptied here: the job's own redirection truncates it only once the job has started, and a
    # progress line left from an earlier run would send the signal before then.
    : >"$work/stderr"
    "$tandem" -i "$work/long.mkv" -o "$out_v" -f "gaussian=sigma=8,saturation=1.2" --codec ffv1 \
      --progress json $flag >"$work/stdout" 2>"$work/stderr" &
    pid=$!
    # Interrupted once the first frame is through (its progress line is on stderr: Ctrl-C is
    # handled by then), not after a guessed time; the deadline only keeps a hung run from hanging
    # the test.
    deadline=$((SECONDS + 300))
    until grep -q '"frame"' "$work/stderr" || ! kill -0 "$pid" 2>/dev/null || [ "$SECONDS" -gt "$deadline" ]; do
      sleep 0.05
    done
    kill -"$sig" "$pid"
    wait "$pid"
    rc=$?
    problems=""
    [ "$rc" -eq "$code" ] || problems+=" exit code $rc, not $code;"
    grep -q "interrupted by SIG$sig.* after" "$work/stderr" || problems+=" no 'interrupted by SIG$sig' line;"
    if [ "$keep" = yes ]; then
      ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$out_v" >"$work/frames" 2>&1 &&
        [ "$(cat "$work/frames")" -gt 0 ] || problems+=" the partial file does not play;"
    else
      [ -e "$out_v" ] && problems+=" '$out_v' exists;"
    fi
    ls -A "$work/out" | grep -q "tandem-" && problems+=" a temporary file was left;"
    if [ -z "$problems" ]; then pass=$((pass + 1)); echo "ok   SIG$sig (keep-partial: $keep)"; else
      fail=$((fail + 1)); echo "FAIL SIG$sig (keep-partial: $keep):$problems"; sed 's/^/     stderr: /' "$work/stderr"; fi
  done
  # An image sequence stopped by SIGTERM: none of its images is left.
  mkdir -p "$work/out/seqint"
  : >"$work/stderr"
  "$tandem" -i "$work/long.mkv" -o "$work/out/seqint/f%04d.png" -f "gaussian=sigma=8" --progress json \
    >"$work/stdout" 2>"$work/stderr" &
  pid=$!
  deadline=$((SECONDS + 300))
  until grep -q '"frame"' "$work/stderr" || ! kill -0 "$pid" 2>/dev/null || [ "$SECONDS" -gt "$deadline" ]; do
    sleep 0.05
  done
  kill -TERM "$pid"
  wait "$pid"
  rc=$?
  if [ "$rc" -eq 143 ] && [ -z "$(ls -A "$work/out/seqint")" ] && grep -q "interrupted by SIGTERM after" "$work/stderr"; then
    pass=$((pass + 1)); echo "ok   image sequence stopped by SIGTERM leaves none"
  else
    fail=$((fail + 1)); echo "FAIL image sequence and SIGTERM: exit code $rc, left: $(ls -A "$work/out/seqint" | head -3 | tr '\n' ' ')"
    sed 's/^/     stderr: /' "$work/stderr"
  fi
  expect_error "video output directory missing" "directory '$work/no/dir' does not exist" "$work/no/dir/x.mkv" -- -i "$work/in.mkv" -o "$work/no/dir/x.mkv" -f saturation
fi

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
