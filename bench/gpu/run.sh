#!/usr/bin/env bash
# The CUDA tests and GPU benchmarks on a machine with an NVIDIA GPU: builds what they need in
# BUILD (default build-gpu) and runs them, writing each stage's output to RESULTS (default
# bench/results/gpu); ARTIFACTS, a directory of CUDA artifacts (`orchid compile --target cuda`,
# made on any machine), adds stage 5.
#   run.sh [BUILD [RESULTS [ARTIFACTS]]]
# A BUILD that holds the test and benchmark binaries but no CMake configuration (carried from
# a machine without a GPU: bench/gpu/prepare.sh) is used as it is: stage 0 is skipped. A BUILD
# that is not configured yet is otherwise configured with ORCHID_GPU_ONLY (the CUDA toolkit,
# CMake, a C++ compiler, nlohmann_json and GoogleTest, nothing else): on a machine without a
# package registry, run bench/gpu/fetch_deps.sh beforehand where one is and let .gpu-deps
# travel with the tree (ORCHID_GPU_DEPS names another prefix). Stages (each under 8 minutes):
#   0. configure (if needed) and build the CUDA tests and benchmarks with every core;
#   1. cuda_compile_test: every kernel of the differential suite compiles to CUBIN;
#   2. cuda_kernel_test, cuda_library_test: every kernel and library step matches the reference
#      interpreter on the GPU (lt_matmul_test, dnn_conv_test: the library calls described);
#   3. cuda_kernel_bench --sweep: generated kernels against the GPU's copy bandwidth, under
#      their default schedule and the fastest of a sweep of block sizes and task sizes;
#   4. bench/gpu/peers.py: the same kernels in PyTorch (eager, torch.compile), where it imports;
#   5. cuda_model_bench: every artifact checked against the interpreter and timed, and the
#      same models in PyTorch (bench/gpu/torch_models.py: eager, torch.compile default and
#      max-autotune, which autotunes for 15-80 s a model), named by the artifacts' directories.
#      Artifacts too large to carry may be slim copies (slim_artifact, made where they were
#      compiled; bench/gpu/slim_weights.h), whose weights cuda_model_bench regenerates; then
#      the GPU section of the benchmark table (bench/gpu/table.py: table.md).
set -uo pipefail
BUILD=${1:-build-gpu}
RESULTS=${2:-bench/results/gpu}
ARTIFACTS=${3:-}
mkdir -p "$RESULTS"
# shellcheck source=bench/gpu/find_libs.sh
source "$(dirname "$0")/find_libs.sh"
find_gpu_libraries
deps=${ORCHID_GPU_DEPS:-.gpu-deps}
if [ ! -f "$BUILD/CMakeCache.txt" ] && [ -x "$BUILD/tests/cuda_kernel_test" ] && [ -x "$BUILD/bench/cuda_model_bench" ]; then
  echo "using the binaries carried in $BUILD"
else
  if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    prefix=()
    [ -d "$deps/usr" ] && prefix=(-DCMAKE_PREFIX_PATH="$(realpath "$deps")/usr")
    generator=()
    command -v ninja >/dev/null && generator=(-G Ninja)
    cmake -S . -B "$BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DORCHID_GPU_ONLY=ON "${prefix[@]}" \
      >"$RESULTS/configure.log" 2>&1 || { tail -20 "$RESULTS/configure.log"; exit 1; }
  fi
  timeout 480 cmake --build "$BUILD" -j"$(nproc)" --target cuda_compile_test lt_matmul_test dnn_conv_test library_choice_test \
    cuda_kernel_test cuda_library_test \
    cuda_kernel_bench cuda_model_bench >"$RESULTS/build.log" 2>&1 || { tail -20 "$RESULTS/build.log"; exit 1; }
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$RESULTS/gpu.txt"
status=0
for t in cuda_compile_test lt_matmul_test dnn_conv_test library_choice_test cuda_kernel_test cuda_library_test; do
  timeout 480 "$BUILD/tests/$t" --gtest_brief=1 >"$RESULTS/$t.log" 2>&1
  rc=$?
  echo "$t: exit $rc"; tail -4 "$RESULTS/$t.log"
  [ $rc -ne 0 ] && status=1
done
timeout 300 "$BUILD/bench/cuda_kernel_bench" --sweep | tee "$RESULTS/kernels.md" || status=1
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  (cd "$(dirname "$0")/../.." && timeout 400 python3 -m bench.gpu.peers) | tee "$RESULTS/peers.md" || status=1
fi
if [ -n "$ARTIFACTS" ]; then
  timeout 400 "$BUILD/bench/cuda_model_bench" "$ARTIFACTS"/*/ | tee "$RESULTS/models.md" || status=1
  if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    models=$(for d in "$ARTIFACTS"/*/; do basename "$d"; done)
    # shellcheck disable=SC2086
    (cd "$(dirname "$0")/../.." && timeout 400 python3 -m bench.gpu.torch_models $models --modes default,max-autotune) | tee "$RESULTS/torch_models.md" ||
      status=1
  fi
  # The GPU section of the benchmark table: Orchid beside each peer, with geomeans.
  if (cd "$(dirname "$0")/../.." && python3 -m bench.gpu.table "$RESULTS/models.md" "$RESULTS/torch_models.md") \
    >"$RESULTS/table.md"; then
    cat "$RESULTS/table.md"
  else
    status=1
  fi
fi
exit $status
