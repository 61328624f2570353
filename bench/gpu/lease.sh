#!/usr/bin/env bash
# The GPU checks that fit one short device lease (about 10 minutes of commands; run.sh's full
# stages take longer): the CUDA tests, then every artifact precision prepared by prepare.sh
# (ARTIFACTS/slim: fp32; ARTIFACTS/slim-<precision>: e.g. PRECISIONS="fp32 bf16") checked
# against the interpreter and timed by cuda_model_bench, the same models in PyTorch (eager and
# torch.compile's default mode) at that precision, and the two joined by table.py. The other
# precisions go before fp32.
#   lease.sh BINARIES RESULTS ARTIFACTS
# BINARIES: prepare.sh's copy of the CUDA tests and benchmarks. RESULTS receives gpu.txt,
# tests.log, and models-, torch- and table-<precision>.md per precision (8 files for two).
set -uo pipefail
if [ $# -ne 3 ]; then
  echo "usage: lease.sh BINARIES RESULTS ARTIFACTS" >&2
  exit 2
fi
BIN=$1
RESULTS=$2
ART=$3
export PYTHONUNBUFFERED=1
mkdir -p "$RESULTS"
# shellcheck source=bench/gpu/find_libs.sh
source "$(dirname "$0")/find_libs.sh"
find_gpu_libraries
start=$(date +%s)
say() { echo "[$(($(date +%s) - start)) s] $*"; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee "$RESULTS/gpu.txt"
status=0
for t in lt_matmul_test dnn_conv_test library_choice_test cuda_library_test cuda_kernel_test; do
  echo "=== $t" >>"$RESULTS/tests.log"
  timeout 150 "$BIN/tests/$t" --gtest_brief=1 >"$RESULTS/$t.part" 2>&1
  rc=$?
  cat "$RESULTS/$t.part" >>"$RESULTS/tests.log"
  say "$t: exit $rc"
  grep -E "FAILED|PASSED|relative L2|Failure" "$RESULTS/$t.part" | head -20
  rm -f "$RESULTS/$t.part"
  [ $rc -ne 0 ] && status=1
done
torch=0
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  torch=1
else
  echo "PyTorch with CUDA does not import here: no PyTorch columns"
fi
precisions=()
for d in "$ART"/slim-*/; do [ -d "$d" ] && precisions+=("$(basename "$d" | cut -d- -f2)"); done
[ -d "$ART/slim" ] && precisions+=(fp32)
if [ ${#precisions[@]} -eq 0 ]; then
  echo "no artifacts in $ART (slim/, slim-<precision>/): bench/gpu/prepare.sh makes them" >&2
  exit 1
fi
for p in "${precisions[@]}"; do
  dir="$ART/slim"
  [ "$p" = fp32 ] || dir="$ART/slim-$p"
  timeout 150 "$BIN/bench/cuda_model_bench" "$dir"/*/ >"$RESULTS/models-$p.md" 2>&1 || status=1
  say "models ($p) checked and timed"
  [ $torch -eq 1 ] || continue
  models=$(for d in "$dir"/*/; do basename "$d"; done)
  # PyTorch at the artifacts' precision: its dtype, or f32 with TF32 allowed.
  peer=(--dtype "$p")
  [ "$p" = tf32 ] && peer=(--tf32)
  # shellcheck disable=SC2086
  (cd "$(dirname "$0")/../.." && timeout 200 python3 -m bench.gpu.torch_models $models --modes default "${peer[@]}") \
    >"$RESULTS/torch-$p.md" 2>&1 || status=1
  say "PyTorch ($p) timed"
  (cd "$(dirname "$0")/../.." && python3 -m bench.gpu.table "$RESULTS/models-$p.md" "$RESULTS/torch-$p.md") \
    >"$RESULTS/table-$p.md" 2>&1 || status=1
  tail -32 "$RESULTS/table-$p.md"
done
exit $status
