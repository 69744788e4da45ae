#!/usr/bin/env bash
# The README's first command: install, build, and run tandem on the bundled sample.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/install-deps.sh"
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$root/build"
mkdir -p "$root/out"
"$root/build/tandem" devices
"$root/build/tandem" -i "$root/data/chelsea.mp4" -o "$root/out/chelsea.mp4" -y \
  -f "gaussian=sigma=2,saturation=1.3"
"$root/build/tandem" -i "$root/data/chelsea.png" -o "$root/out/chelsea.png" -y \
  -f "gaussian=sigma=2,saturation=1.3"
echo "output: $root/out/chelsea.mp4 (video, audio copied) and $root/out/chelsea.png"
