#!/usr/bin/env bash
# Builds tandem's libFuzzer targets with clang, ASan and UBSan (in build-fuzz) and runs each for a
# bounded time from a copy of its seed corpus (fuzz/corpus/X plus fuzz/regressions/X; the committed
# corpus is never written). Exits non-zero on any crash, leak, timeout, out-of-memory or sanitizer
# report; the inputs that caused them are left in build-fuzz/fuzz-out/.
#
#   tools/fuzz.sh                    # every target, 60 s each
#   FUZZ_SECONDS=600 tools/fuzz.sh graph y4m
#
# FUZZ_SECONDS: seconds per target (60); FUZZ_TIMEOUT: seconds one input may take (30);
# FUZZ_RSS_MB: memory limit (2048); FUZZ_BUILD: build directory (build-fuzz).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD:-$root/build-fuzz}
seconds=${FUZZ_SECONDS:-60}
timeout=${FUZZ_TIMEOUT:-30}
rss_mb=${FUZZ_RSS_MB:-2048}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(graph image video y4m)

for tool in clang clang++ cmake ninja; do
  command -v "$tool" >/dev/null || {
    echo "fuzz: $tool is missing (tools/install-deps.sh installs it)" >&2
    exit 2
  }
done

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTANDEM_BUILD_FUZZERS=ON -DTANDEM_BUILD_TESTS=OFF -DTANDEM_BUILD_BENCH=OFF \
  -DTANDEM_BUILD_VIEW=OFF >/dev/null
cmake --build "$build" --target "${targets[@]/#/tandem_fuzz_}"

out="$build/fuzz-out"
rm -rf "$out"
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# UBSan stops at its first report (the targets are built with -fno-sanitize-recover too); leaks
# inside the system's libraries that tandem cannot fix are named in fuzz/lsan.supp.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# intercept_tls_get_addr=0: see the sanitize configuration in tools/test.sh.
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:intercept_tls_get_addr=0"
if [ -f "$root/fuzz/lsan.supp" ]; then
  export LSAN_OPTIONS="suppressions=$root/fuzz/lsan.supp:print_suppressions=0"
fi

failed=()
summary=()
for target in "${targets[@]}"; do
  program="$build/fuzz/tandem_fuzz_$target"
  corpus="$work/$target"
  mkdir -p "$corpus"
  cp "$root/fuzz/corpus/$target"/* "$corpus/"
  if [ -d "$root/fuzz/regressions/$target" ]; then
    cp "$root/fuzz/regressions/$target"/* "$corpus/" 2>/dev/null || true
  fi
  seeds=$(find "$corpus" -type f | wc -l)
  args=(-max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb="$rss_mb"
        -print_final_stats=1 -artifact_prefix="$out/$target-")
  [ -f "$root/fuzz/$target.dict" ] && args+=(-dict="$root/fuzz/$target.dict")
  log="$out/$target.log"
  echo "fuzz: $target for $seconds s from $seeds seed inputs (log: $log)"
  status=0
  (cd "$work" && "$program" "${args[@]}" "$corpus") >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  grown=$(find "$corpus" -type f | wc -l)
  artifacts=$(find "$out" -maxdepth 1 -name "$target-*" -type f | wc -l)
  line="$target: ${runs:-?} executions in $seconds s (${speed:-?}/s), corpus $seeds -> $grown inputs"
  if [ "$status" -ne 0 ] || [ "$artifacts" -ne 0 ] || grep -q "ERROR: \(AddressSanitizer\|LeakSanitizer\|UndefinedBehaviorSanitizer\|libFuzzer\)\|runtime error:" "$log"; then
    failed+=("$target")
    line="$line, FAILED (exit $status)"
    echo "---- $target: the end of $log" >&2
    tail -n 60 "$log" >&2
    find "$out" -maxdepth 1 -name "$target-*" -type f -exec echo "input: {}" \; >&2
  fi
  summary+=("$line")
  echo "fuzz: $line"
done

echo "fuzz summary:"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in: ${failed[*]} (inputs and logs in $out)" >&2
  exit 1
fi
