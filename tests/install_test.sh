#!/usr/bin/env bash
# Installs tandem into a temporary prefix, then builds and runs the example projects (copied out of
# the source tree) and a one-file pkg-config build against that prefix only.
# Usage: install_test.sh CMAKE BUILD_DIR SOURCE_DIR LIBDIR CXX GENERATOR PKG_CONFIG WITH_IO WITH_VIDEO
# (WITH_IO, WITH_VIDEO: 1 when tandem_io, tandem_video were built, so must be installed)
set -euo pipefail
cmake=$1 build_dir=$2 source_dir=$3 libdir=$4 cxx=$5 generator=$6 pkg_config=$7
with_io=$8 with_video=$9

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tandem-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
export TANDEM_CACHE_DIR=${TANDEM_CACHE_DIR:-$tmp/cache}
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }

"$cmake" --install "$build_dir" --prefix "$prefix" > "$tmp/install.log" || {
  cat "$tmp/install.log"; fail "cmake --install"; }
for f in include/tandem/tandem.hpp include/tandem/pipeline.hpp "$libdir/libtandem.so" \
         "$libdir/cmake/tandem/tandemConfig.cmake" "$libdir/cmake/tandem/tandemConfigVersion.cmake" \
         "$libdir/cmake/tandem/tandemTargets.cmake" "$libdir/pkgconfig/tandem.pc"; do
  [[ -e $prefix/$f ]] || fail "$f was not installed"
done
if [[ $with_io == 1 ]]; then
  for f in include/tandem/image_io.hpp include/tandem/cv.hpp "$libdir/libtandem_io.so" \
           "$libdir/cmake/tandem/tandemIoTargets.cmake"; do
    [[ -e $prefix/$f ]] || fail "$f was not installed"
  done
fi
if [[ $with_video == 1 ]]; then
  for f in include/tandem/video_io.hpp include/tandem/video_pipeline.hpp \
           "$libdir/libtandem_video.so" "$libdir/cmake/tandem/tandemVideoTargets.cmake"; do
    [[ -e $prefix/$f ]] || fail "$f was not installed"
  done
fi
# libtandem.so -> libtandem.so.MAJOR (the SONAME) -> libtandem.so.MAJOR.MINOR.PATCH
soname=$(objdump -p "$prefix/$libdir/libtandem.so" | awk '$1 == "SONAME" {print $2}')
[[ -n $soname && -L $prefix/$libdir/libtandem.so && -e $prefix/$libdir/$soname ]] ||
  fail "libtandem.so has no SONAME link (SONAME '$soname')"
# Nothing installed may point back into the source or build tree.
if grep -rlF -e "$source_dir" -e "$build_dir" "$prefix/$libdir/cmake" "$prefix/$libdir/pkgconfig"; then
  fail "installed package files refer to the source or build tree"
fi

# The command line (installed when built with OpenCV) finds the library through its RPATH.
if [[ -e $prefix/bin/tandem ]]; then
  [[ $("$prefix/bin/tandem" --version) == *0.* ]] ||
    fail "the installed bin/tandem does not run"
fi

# README's "Using tandem from C++" shows examples/process_image in full: it must not drift.
for file in CMakeLists.txt main.cpp; do
  awk -v header="\`$file\`:" '$0 == header { found = 1; next }
       found && /^```/ { if (inside) exit; inside = 1; next }
       inside { print }' "$source_dir/README.md" > "$tmp/readme-$file"
  cmp -s "$tmp/readme-$file" "$source_dir/examples/process_image/$file" ||
    fail "README.md's $file differs from examples/process_image/$file"
done

# Each example as a project of its own, outside the source tree, finding tandem in the prefix only.
build_example() {
  local name=$1
  cp -r "$source_dir/examples/$name" "$tmp/$name-src"
  if ! { "$cmake" -S "$tmp/$name-src" -B "$tmp/$name" -G "$generator" -DCMAKE_CXX_COMPILER="$cxx" \
           -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF &&
         "$cmake" --build "$tmp/$name"; } > "$tmp/$name.log" 2>&1; then
    cat "$tmp/$name.log"; fail "building examples/$name"
  fi
  local found
  found=$(sed -n 's/^tandem_DIR:PATH=//p' "$tmp/$name/CMakeCache.txt")
  [[ $found == "$prefix"/* ]] || fail "examples/$name found tandem at '$found', not in $prefix"
}

build_example process_image
# Runs without LD_LIBRARY_PATH: CMake gives the build tree an RPATH to the imported library.
"$tmp/process_image/process_image" > "$tmp/process_image.out" || {
  cat "$tmp/process_image.out"; fail "examples/process_image exited with $?"; }
cat "$tmp/process_image.out"
grep -q '8 frames' "$tmp/process_image.out" || fail "process_image did not run 8 frames"
# The devices' shares of the rows must add up to 1 (printed to 3 decimals: 1e-3 per device).
awk '/^device .*share/ { for (i = 1; i < NF; ++i) if ($i == "share") { sum += $(i + 1) + 0; n++ } }
     END { if (n < 1 || sum < 1 - 1e-3 * n || sum > 1 + 1e-3 * n) exit 1 }' \
  "$tmp/process_image.out" || fail "process_image's device shares do not add up to 1"

build_example build_graph
"$tmp/build_graph/build_graph" > "$tmp/build_graph.out" || {
  cat "$tmp/build_graph.out"; fail "examples/build_graph exited non-zero"; }
cat "$tmp/build_graph.out"
grep -qx 'graph: .*split.*gaussian=.*blend=.*' "$tmp/build_graph.out" ||
  fail "build_graph did not print its graph"

# README shows parts of examples/user_filter and examples/video_callback: every line it shows
# must be in the example.
for name in user_filter video_callback; do
  awk -v header="\`examples/$name/main.cpp\` (excerpt):" '$0 == header { found = 1; next }
       found && /^```/ { if (inside) exit; inside = 1; next }
       inside && NF { print }' "$source_dir/README.md" > "$tmp/readme-$name"
  [[ -s $tmp/readme-$name ]] || fail "README.md shows no excerpt of examples/$name"
  while IFS= read -r line; do
    grep -qxF -- "$line" "$source_dir/examples/$name/main.cpp" ||
      fail "README.md's excerpt of examples/$name has a line its main.cpp lacks: $line"
  done < "$tmp/readme-$name"
done

# A PNG's width and height: big-endian at bytes 16 and 20.
png_size() {
  [[ $(head -c 8 "$1" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || return 1
  od -An -tu1 -j16 -N8 "$1" |
    awk '{ printf "%dx%d\n", (($1 * 256 + $2) * 256 + $3) * 256 + $4, (($5 * 256 + $6) * 256 + $7) * 256 + $8 }'
}

if [[ $with_io == 1 ]]; then
  build_example user_filter
  "$tmp/user_filter/user_filter" "$source_dir/data/chelsea.png" "$tmp/sepia.png" > "$tmp/user_filter.out" || {
    cat "$tmp/user_filter.out"; fail "examples/user_filter exited non-zero"; }
  cat "$tmp/user_filter.out"
  size=$(png_size "$tmp/sepia.png") || fail "user_filter wrote no PNG file"
  [[ $size == "$(png_size "$source_dir/data/chelsea.png")" ]] ||
    fail "user_filter's output is $size, its input $(png_size "$source_dir/data/chelsea.png")"
  # Sepia makes red the largest channel and blue the smallest.
  awk '/^centre pixel/ { if (!($(NF - 2) > $(NF - 1) && $(NF - 1) > $NF)) exit 1; seen = 1 }
       END { exit !seen }' "$tmp/user_filter.out" || fail "user_filter's output is not sepia-toned"
  # A bad value of the user's own filter is refused like a built-in one's, with a caret.
  if "$tmp/user_filter/user_filter" "$source_dir/data/chelsea.png" "$tmp/bad.png" "sepia=2" \
       > /dev/null 2> "$tmp/user_filter.err"; then
    fail "user_filter took sepia=2"
  fi
  grep -q "sepia: .*'2'" "$tmp/user_filter.err" && grep -q '\^' "$tmp/user_filter.err" ||
    { cat "$tmp/user_filter.err"; fail "user_filter's error for sepia=2 is not the graph's"; }
else
  echo "install_test: examples/user_filter left out (tandem was built without OpenCV)"
fi

if [[ $with_video == 1 ]]; then
  build_example video_callback
  "$tmp/video_callback/video_callback" "$source_dir/data/chelsea.mp4" "$tmp/out.mp4" \
    > "$tmp/video_callback.out" || {
    cat "$tmp/video_callback.out"; fail "examples/video_callback exited non-zero"; }
  head -n 3 "$tmp/video_callback.out"
  tail -n 1 "$tmp/video_callback.out"
  # One line per frame, in order, each with shares that add up to 1.
  frames=$(awk '/^frame / { if ($2 != n++) exit 1
                            sum = 0; for (i = 6; i <= NF; ++i) sum += $i
                            if (sum < 0.995 || sum > 1.005) exit 1 }
                END { print n }' "$tmp/video_callback.out") ||
    fail "video_callback's per-frame lines are out of order or their shares do not add up to 1"
  grep -q "^$frames frames of " "$tmp/video_callback.out" && ((frames > 0)) ||
    fail "video_callback printed $frames frame lines but reported otherwise"
  [[ -s $tmp/out.mp4 ]] || fail "video_callback wrote no video"
else
  echo "install_test: examples/video_callback left out (tandem was built without FFmpeg)"
fi

# pkg-config: one file, one command line.
if [[ -z $pkg_config ]]; then
  echo "install_test: OK (no pkg-config program: tandem.pc was installed but not tried)"
  exit 0
fi
# The README's own command line, run as written (its g++ and pkg-config are this build's compiler
# and pkg-config program), with PKG_CONFIG_PATH prepended to, as the README says: the system's
# may be needed for OpenCL and TBB. The program then finds libtandem.so through its rpath alone.
readme_line=$(grep -m1 '^    g++ -std=c++20 main.cpp \$(pkg-config' "$source_dir/README.md") ||
  fail "README.md shows no pkg-config command line"
mkdir "$tmp/pc"
cat > "$tmp/pc/main.cpp" <<'CPP'
#include <cstdio>
#include <tandem/tandem.hpp>
int main() {
  std::printf("%s %s\n", tandem::version(), tandem::Graph::parse("saturation=1.3").to_string().c_str());
}
CPP
if ! (cd "$tmp/pc" &&
      export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" &&
      g++() { "$cxx" "$@"; } && pkg-config() { "$pkg_config" "$@"; } &&
      eval "$readme_line") > "$tmp/pc.log" 2>&1; then
  cat "$tmp/pc.log"; fail "the README's pkg-config command line:$readme_line"
fi
# Found through the rpath in the prefix, not in some other tandem the loader knows of. The
# loader's own path is left as the machine has it (it may be what finds TBB or OpenCL, as on the
# GPU machine); it never names this fresh prefix, so only the rpath can lead there.
[[ ":${LD_LIBRARY_PATH:-}:" != *":$prefix/"* ]] || fail "LD_LIBRARY_PATH names the test's prefix"
(cd "$tmp/pc" && ldd ./a.out) | grep -F libtandem.so | grep -qF "$prefix/" ||
  fail "the pkg-config program does not load libtandem.so from $prefix"
out=$(cd "$tmp/pc" && ./a.out) ||
  fail "the pkg-config program exited non-zero (does it find libtandem.so without LD_LIBRARY_PATH?)"
echo "pkg-config program: $out"
version=$(sed -n 's/^Version: //p' "$prefix/$libdir/pkgconfig/tandem.pc")
[[ $out == "$version saturation=amount=1.3" || $out == "$version saturation=1.3" ]] ||
  fail "pkg-config program printed '$out'"
echo "install_test: OK"
