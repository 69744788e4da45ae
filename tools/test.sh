#!/usr/bin/env bash
# The README's test command: install, build, and run every test suite with ctest, in every
# documented build configuration:
#   default    everything; the suites run twice: on PoCL's default device, and with two PoCL
#              devices in one platform (POCL_DEVICES="pthread basic", the shared-context
#              co-execution path); the feeding and whole-frame suites once more on two equal
#              ones (POCL_DEVICES="pthread pthread": both take their context's enqueue lock)
#   noffmpeg   -DTANDEM_WITH_FFMPEG=OFF (images only)
#   noopencv   -DTANDEM_WITH_OPENCV=OFF -DTANDEM_WITH_FFMPEG=OFF (the GPU machine's build: library,
#              filters, the suites that need no image files, tandem-bench)
#   sanitize   the default build (less tandem-mpi) with AddressSanitizer and
#              UndefinedBehaviorSanitizer; any report fails the run (leaks inside the OpenCL
#              driver are suppressed: tools/lsan.supp)
#   fuzz       libFuzzer targets built with clang, each run for FUZZ_SECONDS (tools/fuzz.sh)
# TANDEM_TEST_CONFIGS="default sanitize" runs only those. Every build is a directory of its own
# under build*/; a failing configuration stops the run with a non-zero exit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
configs=${TANDEM_TEST_CONFIGS:-default noffmpeg noopencv sanitize fuzz}
"$root/tools/install-deps.sh"

# Suites parameterised by device are listed when ctest starts (DISCOVERY_MODE PRE_TEST), in its
# environment: the lists are forgotten before each run so that they hold a case per device.
run_ctest() {  # run_ctest BUILD_DIR [ctest arguments...]
  local dir=$1
  shift
  rm -f "$dir"/tests/*_tests.cmake
  (cd "$dir" && ctest --output-on-failure -j2 "$@")
}

configure_and_build() {  # configure_and_build BUILD_DIR [cmake arguments...]
  local dir=$1
  shift
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
  cmake --build "$dir"
}

# Program binaries and learned splits go to a cache of each build's own, made afresh: no test
# may depend on what an earlier run left.
fresh_cache() {
  export TANDEM_CACHE_DIR="$1/test-cache"
  rm -rf "$TANDEM_CACHE_DIR"
}

started=$SECONDS
for config in $configs; do
  echo "== configuration: $config ($((SECONDS - started)) s so far)"
  case $config in
    default)
      configure_and_build "$root/build"
      fresh_cache "$root/build"
      echo "== ctest on the default OpenCL devices"
      run_ctest "$root/build"
      echo "== ctest with two PoCL devices in one platform (POCL_DEVICES=\"pthread basic\")"
      POCL_DEVICES="pthread basic" run_ctest "$root/build"
      echo "== the feeding and whole-frame suites on two equal PoCL devices (POCL_DEVICES=\"pthread pthread\")"
      POCL_DEVICES="pthread pthread" run_ctest "$root/build" -R 'Feeding|WholeFrames'
      ;;
    noffmpeg)
      configure_and_build "$root/build-noffmpeg" -DTANDEM_WITH_FFMPEG=OFF -DTANDEM_BUILD_VIEW=OFF
      fresh_cache "$root/build-noffmpeg"
      run_ctest "$root/build-noffmpeg"
      ;;
    noopencv)
      configure_and_build "$root/build-noopencv" -DTANDEM_WITH_OPENCV=OFF -DTANDEM_WITH_FFMPEG=OFF \
        -DTANDEM_BUILD_VIEW=OFF
      fresh_cache "$root/build-noopencv"
      run_ctest "$root/build-noopencv"
      ;;
    sanitize)
      # -O1 -g1: reports name lines (line tables are enough) and the build takes half the time
      # of RelWithDebInfo's -O2 -g (core/src/graph.cpp 15.5 s against 33.8 s here, 2026-11-28;
      # this build was 22 of CI's 81 minutes). The GUI is left out (Mesa's and GLFW's own
      # leaks), and so is the install test (its examples are built without the sanitizer
      # runtime). tandem-mpi too is left out: Open MPI's runtime keeps its allocations to the
      # end, which the leak checker reports (tandem --segment and tandem concat are checked).
      configure_and_build "$root/build-sanitize" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DTANDEM_SANITIZE=ON \
        -DTANDEM_BUILD_VIEW=OFF -DTANDEM_WITH_MPI=OFF
      fresh_cache "$root/build-sanitize"
      # intercept_tls_get_addr=0: up to GCC 13 and LLVM 16 the runtime's __tls_get_addr
      # interceptor can mistake a dynamic TLS block (PoCL's, FFmpeg's) for an old glibc header,
      # and the leak checker's tracer then dies at exit ("Tracer caught signal 11") after a
      # passing test (seen once in a full run of this script here).
      ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:intercept_tls_get_addr=0" \
        LSAN_OPTIONS="suppressions=$root/tools/lsan.supp:print_suppressions=0" \
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
        run_ctest "$root/build-sanitize" -E '^install$'
      ;;
    fuzz)
      "$root/tools/fuzz.sh"
      ;;
    *)
      echo "tools/test.sh: unknown configuration '$config'" >&2
      exit 2
      ;;
  esac
done
echo "== every configuration passed: $configs ($((SECONDS - started)) s)"
