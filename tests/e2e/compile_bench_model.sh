#!/usr/bin/env bash
# Exports a benchmark model (bench/models, cached in CACHE_DIR) and compiles it with
# `orchid compile --orchestrate greedy`, which refuses to write an artifact that does not match
# the reference interpreter: compile_bench_model.sh MODEL CACHE_DIR ORCHID SOURCE_DIR [TARGET [PRECISION]]
# TARGET cuda compiles for NVIDIA GPUs instead (verified where a GPU is, else written unverified),
# at PRECISION (fp32 by default; tf32, fp16, bf16: `--precision`).
# Measured times go to a tuning database of the test's own (CACHE_DIR/tuning.db): tests run
# side by side, and times taken on a busy machine must not reach the user's database.
set -euo pipefail
model=$1 cache=$2 orchid=$3 source=$4 target=${5:-cpu} precision=${6:-fp32}
if [[ ! -f "$cache/$model/model.onnx" ]]; then
  (cd "$source" && OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} /usr/bin/python3 -m bench.models.export \
     --cache "$cache" --models "$model")
fi
out="$cache/$model/orchid-greedy-e2e"
[[ "$target" == cpu ]] || out="$out-$target"
[[ "$precision" == fp32 ]] || out="$out-$precision"
"$orchid" compile "$cache/$model/model.onnx" -o "$out" --orchestrate greedy --target "$target" --precision "$precision" \
  --cache-dir "$cache/orchid-objects" --db "$cache/tuning.db" --measure-time 0
