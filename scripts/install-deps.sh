#!/usr/bin/env bash
# Installs every Debian package Orchid's build, tests and demo need. Idempotent:
# packages already present are skipped; prints what it installs. Works as root or via sudo.
#   scripts/install-deps.sh          build + test dependencies
#   scripts/install-deps.sh --torch  also the (large) model-export packages for benchmarks
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git clang
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata python3-onnx python3-numpy
  coinor-libcbc-dev coinor-libosi-dev coinor-libclp-dev libz3-dev
  libdnnl-dev ocl-icd-opencl-dev libsqlite3-dev nlohmann-json3-dev libfmt-dev
  libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev graphviz libopenblas-dev
  python3-dev pybind11-dev python3-pytest
)
if [[ "${1:-}" == "--torch" ]]; then
  packages+=(python3-torch python3-torchvision)
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: done"
