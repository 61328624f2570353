#!/usr/bin/env bash
# Prepares a GPU run from a machine without a GPU: what bench/gpu/run.sh needs, built here and
# small enough to carry (a device lease takes 64 MiB).
#   prepare.sh [BUILD [BINARIES [ARTIFACTS]]]
# BUILD (default build): a configured build of Orchid with the CUDA toolkit found, whose
# bench-cache holds the benchmark models (`make bench` exports them). BINARIES (default
# build-gpu): the CUDA tests and benchmarks copied out of BUILD (they need only the C++
# runtime and, at run time, the CUDA driver); run.sh uses them as they are. ARTIFACTS (default
# gpu-art): every benchmark model compiled with `orchid compile --target cuda --gpu $GPU`
# (default h100), then slimmed (slim_artifact: large weights regenerated on the GPU machine,
# CUBIN for $ARCH only, default sm_90a) into ARTIFACTS/slim; each other precision named in
# $PRECISIONS (default fp32; e.g. "fp32 bf16") into ARTIFACTS/slim-<precision>. Then, on the
# GPU machine:
#   bench/gpu/run.sh BINARIES RESULTS ARTIFACTS/slim
set -euo pipefail
BUILD=${1:-build}
BIN=${2:-build-gpu}
ART=${3:-gpu-art}
GPU=${GPU:-h100}
ARCH=${ARCH:-sm_90a}
PRECISIONS=${PRECISIONS:-fp32}
tests=(cuda_compile_test lt_matmul_test dnn_conv_test library_choice_test cuda_kernel_test cuda_library_test)
benches=(cuda_kernel_bench cuda_model_bench)
cmake --build "$BUILD" -j"${JOBS:-2}" --target orchid slim_artifact "${tests[@]}" "${benches[@]}"
mkdir -p "$BIN/tests" "$BIN/bench"
for t in "${tests[@]}"; do cp "$BUILD/tests/$t" "$BIN/tests/"; done
for b in "${benches[@]}"; do cp "$BUILD/bench/$b" "$BIN/bench/"; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for precision in $PRECISIONS; do
  slim="$ART/slim"
  [ "$precision" = fp32 ] || slim="$ART/slim-$precision"
  rm -rf "$work"/* "$slim"
  for model in "$BUILD"/bench-cache/*/model.onnx; do
    name=$(basename "$(dirname "$model")")
    if ! "$BUILD/tools/orchid/orchid" compile "$model" -o "$work/$name" --target cuda --gpu "$GPU" \
      --precision "$precision" >"$work/$name.log" 2>&1; then
      echo "$name ($precision): the compile failed:"; tail -3 "$work/$name.log"; exit 1
    fi
  done
  "$BUILD/bench/slim_artifact" "$ARCH" "$slim" "$work"/*/
  echo "$precision: artifacts in $slim ($(du -sh "$slim" | cut -f1))"
done
echo "binaries in $BIN ($(du -sh "$BIN" | cut -f1))"
