#!/usr/bin/env bash
# tandem-view without a person: under a virtual X server it processes 10 frames, writes its window
# to a PNG and exits; view_check then looks where the window layout puts the panels
# (apps/tandem-view/view.hpp, Layout: pictures side by side in the top 60%, plots in the bottom
# 140 px of the right half) and compares the output panel with the tandem command line's output
# of the same graph. Then the one-line errors for a missing file, a bad graph and no display.
#   view_test.sh path/to/tandem-view path/to/view_check path/to/tandem path/to/data path/to/xvfb-run
set -u
view=$1
checker=$2
tandem=$3
data=$4
xvfb_run=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0
fail=0

result() {  # result NAME OK [DETAILS FILE]
  if [ "$2" -eq 0 ]; then
    pass=$((pass + 1))
    echo "ok   $1"
  else
    fail=$((fail + 1))
    echo "FAIL $1"
    [ -n "${3:-}" ] && sed 's/^/     /' "$3"
  fi
}

# screenshot NAME FILE -- tandem-view arguments...: runs it on a 1280x800 virtual screen.
screenshot() {
  local name=$1 file=$2
  shift 3
  timeout 300 "$xvfb_run" -a -s "-screen 0 1280x800x24" "$view" "$@" --screenshot "$file" \
    >"$work/log" 2>&1
  result "$name: exit code 0" $? "$work/log"
  [ -s "$file" ]
  result "$name: screenshot written" $?
}

graph="saturation=2"
"$tandem" -i "$data/chelsea.png" -o "$work/expected.png" -f "$graph" 2>"$work/log"
result "tandem writes the reference output" $? "$work/log"

screenshot "image" "$work/image.png" -- -i "$data/chelsea.png" -f "$graph" --after 10
"$checker" "$work/image.png" "$data/chelsea.png" "$work/expected.png" >"$work/check" 2>&1
result "image: panels and plots (view_check)" $? "$work/check"
cat "$work/check"

screenshot "video" "$work/video.png" -- -i "$data/chelsea.mp4" -f "$graph" --after 10
"$checker" "$work/video.png" >"$work/check" 2>&1
result "video: panels and plots (view_check)" $? "$work/check"

screenshot "test pattern" "$work/pattern.png" -- -i testsrc=320x180 -f "gaussian=sigma=2" --after 3

# A float image is shown through a display transform (linear light clamped and sRGB-encoded), not
# as its raw values: both panels as tonemap=op=linear makes them of the input and the output.
"$tandem" -i "$data/chelsea.png" -o "$work/float.hdr" -f "saturation=1" 2>"$work/log" &&
  "$tandem" -i "$work/float.hdr" -o "$work/float-shown.png" -f "tonemap=op=linear" 2>>"$work/log" &&
  "$tandem" -i "$work/float.hdr" -o "$work/float-expected.png" -f "$graph,tonemap=op=linear" 2>>"$work/log"
result "tandem writes the float image and its display references" $? "$work/log"
screenshot "float image" "$work/float.png" -- -i "$work/float.hdr" -f "$graph" --after 3
"$checker" "$work/float.png" "$work/float-shown.png" "$work/float-expected.png" >"$work/check" 2>&1
result "float image: panels through the display transform (view_check)" $? "$work/check"

# expect_error NAME MESSAGE -- tandem-view arguments...: fails before any window is needed.
expect_error() {
  local name=$1 message=$2
  shift 3
  env -u DISPLAY timeout 120 "$view" "$@" >"$work/stdout" 2>"$work/stderr"
  local rc=$?
  [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -qF -- "$message" "$work/stderr"
  result "$name (exit $rc)" $? "$work/stderr"
}
expect_error "missing file" "tandem-view: error: cannot read '$work/none.png'" -- \
  -i "$work/none.png" -f "$graph"
expect_error "missing video" "tandem-view: error:" -- -i "$work/none.mp4" -f "$graph"
expect_error "bad graph" "tandem-view: error: unknown filter 'saturatio'" -- \
  -i "$data/chelsea.png" -f "saturatio=2"
expect_error "bad test source" "tandem-view: error: bad test source" -- -i testsrc=0x0
expect_error "no display" "no display" -- -i "$data/chelsea.png" -f "$graph"
[ "$(wc -l <"$work/stderr")" -eq 1 ]
result "no display: one line" $? "$work/stderr"

echo "view: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
