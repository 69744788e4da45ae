#!/usr/bin/env bash
# Installs what tandem needs to build and test on Debian 12 (run as root, or with sudo present).
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config jq
  ocl-icd-opencl-dev opencl-c-headers opencl-clhpp-headers pocl-opencl-icd clinfo
  libtbb-dev libopencv-dev libgtest-dev libgmock-dev libcli11-dev nlohmann-json3-dev
  libavformat-dev libavcodec-dev libswscale-dev libswresample-dev libavutil-dev ffmpeg
  libopenmpi-dev openmpi-bin
  libimgui-dev libglfw3-dev libgl-dev libgl1-mesa-dri xvfb xauth
  clang libclang-rt-14-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
