#!/usr/bin/env bash
# Installs what lockstep needs to build and test on Debian 12 (run as root or with sudo).
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends \
  g++ cmake ninja-build pkg-config git ca-certificates \
  libonnx-dev libprotobuf-dev protobuf-compiler \
  libcli11-dev nlohmann-json3-dev libssl-dev \
  libgtest-dev libgmock-dev \
  clang clang-format libclang-rt-14-dev \
  ocl-icd-libopencl1 pocl-opencl-icd
