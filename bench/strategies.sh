#!/usr/bin/env bash
# The optimal orchestration against greedy on this CPU, per model: compile time with an empty
# tuning database (cold: every kernel measured) and again with the database the first compile
# filled (warm), and the two artifacts timed side by side in one process, each round in the
# order greedy, optimal, optimal, greedy (`orchid time-artifacts`).
#
#   bench/strategies.sh ORCHID_BIN CACHE OUT.md [ROUNDS] [MODEL...]
#
# CACHE is the benchmark cache (`python3 -m bench.models.export --cache CACHE`): it holds
# CACHE/MODEL/model.onnx. Objects are compiled into CACHE/orchid-objects (shared, warm after
# the first model), databases and artifacts into a temporary directory, removed at the end.
set -euo pipefail
orchid=$(realpath "$1")
cache=$(realpath "$2")
out=$3
rounds=${4:-5}
shift $(($# < 4 ? $# : 4))
models=("$@")
if [[ ${#models[@]} -eq 0 ]]; then
  models=(resnet18 mobilenet_v2 vit_small bert_tiny segformer_b0 candy efficientvit_block nerf_mlp gqa_decode lora gated_mlp)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Seconds `orchid compile` takes (its output kept in $work/log), or "failed" (its last lines on
# stderr).
compile_s() {
  local start end
  start=$(date +%s.%N)
  if ! "$orchid" compile "$@" --cache-dir "$cache/orchid-objects" --measure-time 0 > "$work/log" 2>&1; then
    tail -3 "$work/log" >&2
    echo failed
    return
  fi
  end=$(date +%s.%N)
  python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$end"
}

{
  echo "# Optimal against greedy orchestration ($(date -u +%Y-%m-%d), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'))"
  echo
  echo "Compile seconds with an empty tuning database (cold) and with the one the first compile filled (warm);"
  echo "latency: the fastest run of each artifact in each of $rounds rounds, timed greedy, optimal, optimal, greedy (\`orchid time-artifacts\`), median over the rounds, ms."
  echo
  echo "| model | greedy cold s | greedy warm s | optimal cold s | optimal warm s | greedy ms | optimal ms | greedy / optimal |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  for m in "${models[@]}"; do
    model="$cache/$m/model.onnx"
    [[ -f "$model" ]] || { echo "| $m | not exported |||||||"; continue; }
    row="| $m"
    for s in greedy optimal; do
      row="$row | $(compile_s "$model" -o "$work/$s" --orchestrate "$s" --db "$work/$m-$s.db")"
      row="$row | $(compile_s "$model" -o "$work/$s" --orchestrate "$s" --db "$work/$m-$s.db")"
    done
    # Greedy, optimal, optimal, greedy in every round: a drift within a round (a neighbour's
    # load coming or going) weighs on both alike.
    if [[ ! -d "$work/greedy" || ! -d "$work/optimal" ]]; then
      echo "$row | | | |"
      continue
    fi
    json=$("$orchid" time-artifacts "$work/greedy" "$work/optimal" "$work/optimal" "$work/greedy" --rounds "$rounds" \
      --min-time 0.2 --min-runs 5 --json)
    row="$row | $(python3 -c '
import json, statistics, sys
a = json.loads(sys.argv[1])["artifacts"]
g = statistics.median(a[0]["rounds_ms"] + a[3]["rounds_ms"])
o = statistics.median(a[1]["rounds_ms"] + a[2]["rounds_ms"])
print(f"{g:.3f} | {o:.3f} | {g / o:.3f}")' "$json") |"
    echo "$row"
    rm -rf "$work/greedy" "$work/optimal"
  done
} | tee "$out"
