#!/usr/bin/env bash
# Fetches the two libraries a GPU-only build (CMake option ORCHID_GPU_ONLY) needs beyond the
# CUDA toolkit and CMake — nlohmann_json (headers) and GoogleTest (static libraries) — as
# Debian packages, unpacked into a prefix that travels with the working tree to a GPU machine
# without a package registry (bench/gpu/run.sh finds it there): fetch_deps.sh [PREFIX]
# (default .gpu-deps, which git ignores).
set -euo pipefail
prefix=$(realpath -m "${1:-.gpu-deps}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$prefix"
(cd "$work" && apt-get download nlohmann-json3-dev libgtest-dev >/dev/null)
for deb in "$work"/*.deb; do dpkg -x "$deb" "$prefix"; done
echo "unpacked into $prefix: $(cd "$work" && ls ./*.deb | xargs -n1 basename | tr '\n' ' ')"
