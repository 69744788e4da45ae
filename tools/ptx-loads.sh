#!/usr/bin/env bash
# Counts the global-memory loads and stores in PTX by access width, one line per file: whether a
# kernel moves pixels in single bytes (ld.global.u8, ld.global.nc.u8, st.global.u8 ...) or in
# wide typed chunks (ld.global.nc.v4.u32, st.global.v4.f32, ld.global.v2.u64 ...). The widths
# are the element size times the vector length (.v2/.v4), so v4.u8 counts as 4 B. Generic loads
# and stores (no state space: the compiler could not prove the pointer global) count with the
# global ones; shared-memory accesses (a local tile) are counted apart. Static counts of
# instructions in the code, not of executions.
#
#   tools/ptx-loads.sh DIR        the files DIR/index.tsv lists (tandem-bench filters
#                                 --dump-binaries DIR), or every file in DIR without one
#   tools/ptx-loads.sh FILE...    those files
#
# PTX is what NVIDIA's OpenCL returns as CL_PROGRAM_BINARIES. Other binaries (PoCL's "poclbin":
# LLVM bitcode and one compiled .so per kernel) are named with what they are and not counted.
set -euo pipefail

if [ $# -eq 0 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
  exit $(($# == 0 ? 2 : 0))
fi

files=()
if [ $# -eq 1 ] && [ -d "$1" ]; then
  dir=${1%/}
  if [ -f "$dir/index.tsv" ]; then
    while IFS=$'\t' read -r name _; do
      [ -n "$name" ] && files+=("$dir/$name")
    done < <(tail -n +2 "$dir/index.tsv")
  else
    for f in "$dir"/*; do
      [ -f "$f" ] && files+=("$f")
    done
  fi
  [ ${#files[@]} -gt 0 ] || { echo "ptx-loads.sh: no files in $dir" >&2; exit 1; }
else
  files=("$@")
fi

printf '%-48s %31s   %31s   %s\n' "" "global loads by width (bytes)" "global stores by width (bytes)" "shared"
printf '%-48s %6s%6s%6s%6s%7s   %6s%6s%6s%6s%7s   %5s %5s  %s\n' file \
  1 2 4 8 16+ 1 2 4 8 16+ ld st "1-byte share"
ptx=0 other=0
for f in "${files[@]}"; do
  name=$(basename "$f")
  if [ ! -f "$f" ]; then
    printf '%-48s missing\n' "$name"
    continue
  fi
  if grep -aq '^[[:space:]]*\.version[[:space:]]' "$f" && grep -aq '^[[:space:]]*\.target[[:space:]]' "$f"; then
    ptx=$((ptx + 1))
    tr -d '\000' < "$f" | awk -v name="$name" '
      {
        line = $0
        sub(/^[ \t]+/, "", line)
        if (line ~ /^@/) sub(/^@!?%[A-Za-z0-9_]+[ \t]+/, "", line)  # predicate
        split(line, tok, /[ \t]/)
        n = split(tok[1], part, ".")
        op = part[1]
        if (op != "ld" && op != "ldu" && op != "st") next
        space = "generic"; lanes = 1; bits = 0
        for (i = 2; i <= n; ++i) {
          p = part[i]
          if (p == "global" || p == "shared" || p == "local" || p == "param" || p == "const") space = p
          else if (p == "v2") lanes = 2
          else if (p == "v4") lanes = 4
          else if (p == "v8") lanes = 8
          else if (p ~ /^[bsuf](8|16|32|64|128)$/) bits = substr(p, 2) + 0
        }
        if (bits == 0) next
        kind = (op == "st") ? "st" : "ld"
        if (space == "shared") { shared[kind]++; next }
        if (space != "global" && space != "generic") next
        bytes = lanes * bits / 8
        count[kind, bytes]++
        total++
        if (bytes == 1) single++
      }
      END {
        printf "%-48s", name
        for (k = 0; k < 2; ++k) {
          kind = k ? "st" : "ld"
          printf "%6d%6d%6d%6d%7d   ", count[kind, 1], count[kind, 2], count[kind, 4],
                 count[kind, 8], count[kind, 16] + count[kind, 32] + count[kind, 64]
        }
        printf "%5d %5d  ", shared["ld"], shared["st"]
        if (total) printf "%.0f%% of %d\n", 100 * single / total, total
        else print "no global loads or stores"
      }'
  else
    other=$((other + 1))
    what=$(head -c 7 "$f" | tr -c '[:print:]' '.')
    if [ "$what" = poclbin ]; then
      kernels=$(grep -ao '_pocl_kernel_[A-Za-z0-9_]*' "$f" | sed 's/^_pocl_kernel_//; s/_workgroup\(_fast\)\{0,1\}$//' | sort -u | tr '\n' ' ')
      what="poclbin (PoCL: LLVM bitcode and a .so per kernel; kernels: ${kernels% })"
    elif command -v file > /dev/null; then
      what=$(file -b "$f" | cut -c1-60)
    else
      what="starts \"$what\""
    fi
    printf '%-48s not PTX, not counted: %s, %s bytes\n' "$name" "$what" "$(wc -c < "$f" | tr -d ' ')"
  fi
done
echo "# $ptx PTX files counted, $other other binaries named only"
