#!/usr/bin/env bash
# Mirage's kernels on this CPU: each program at its benchmark size, with the μGraphs the
# superoptimizer finds for a small program of the same structure, instantiated at that size
# (several tilings each), checked against the interpreter and timed against the program
# compiled without the superoptimizer (`orchid superopt BIG --search-at SMALL --bench`).
#
#   bench/superopt_kernels.sh ORCHID_BIN OUT.md [ROUNDS]
#
# Searches are cached in the tuning database like any `orchid superopt` run; the times are
# measured afresh. A search that reaches its time limit is cached apart, and taken again only
# with a limit at most about a tenth longer.
set -euo pipefail
orchid=$1
out=$2
rounds=${3:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

# name | program | small program ("-": --shrink, the program's own small copy) | search options
cases=(
  "GQA decoding (32 query heads, 8 kv heads, 4096 tokens)|bench/superopt/gqa_decode.oir|tests/data/superopt/gqa.oir|--grid 2x2 --loop 2 --max-kernel-ops 4 --max-block-ops 5"
  "MQA decoding (32 query heads, 1 kv head, 4096 tokens)|bench/superopt/mqa_decode.oir|bench/superopt/mqa_small.oir|--grid 2 --loop 2 --max-kernel-ops 4 --max-block-ops 4 --time-limit 1200"
  "LoRA (4096 x 4096, 16 tokens, rank 16)|bench/superopt/lora.oir|tests/data/superopt/lora.oir|--grid 2 --loop 2 --max-kernel-ops 1 --max-block-ops 2"
  "GQA speculative decoding (32 query tokens)|bench/superopt/gqa_spec.oir|-|--grid 2x2 --loop 2 --max-kernel-ops 4 --max-block-ops 5 --time-limit 900"
)

{
  echo "# Superoptimizer kernels on the CPU ($(date -u +%Y-%m-%d), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'))"
  echo
  echo "\`orchid superopt PROGRAM --search-at SMALL|--shrink [search options] --max-results 2 --tilings 3 --bench --rounds $rounds\`:"
  echo "fastest run of $rounds alternating rounds, each artifact in a helper process on all cores."
  echo
  echo "| program | search of the small program | fastest μGraph | its time | compiled without the superoptimizer | speed-up |"
  echo "|---|---|---|---|---|---|"
} > "$out"
logs=()
for c in "${cases[@]}"; do
  IFS='|' read -r name program small opts <<< "$c"
  # shellcheck disable=SC2086
  if [[ $small == - ]]; then small_flags=(--shrink); else small_flags=(--search-at "$small"); fi
  log=$("$orchid" superopt "$program" "${small_flags[@]}" $opts --max-results 2 --tilings 3 --bench --rounds "$rounds" 2>&1) || true
  logs+=("$log")
  search=$(sed -n 's/^search of [^:]*: \([0-9.]* s\).*/\1/p' <<< "$log" | head -1)
  [[ $log == *"search of"*"(cached)"* ]] && search="$search (cached)"
  [[ $log == *"time limit reached"* ]] && search="$search (time limit)"
  best=$(grep -E '^  μgraph .*: [0-9.]+ ms' <<< "$log" | sed -E 's/^  (.*): ([0-9.]+) ms.*/\2|\1/' | sort -t'|' -k1,1g | head -1)
  base=$(sed -n 's/^  the program compiled without the superoptimizer: \([0-9.]*\) ms.*/\1/p' <<< "$log")
  if [[ -n $best && -n $base ]]; then
    t=${best%%|*}
    ratio=$(awk -v a="$base" -v b="$t" 'BEGIN { printf "%.2fx", a / b }')
    echo "| $name | $search | ${best#*|} | $t ms | $base ms | $ratio |" >> "$out"
  else
    echo "| $name | $search | none timed | | ${base:-failed} | |" >> "$out"
  fi
done
{
  echo
  echo "## Logs"
  for i in "${!cases[@]}"; do
    echo
    echo "### ${cases[$i]%%|*}"
    echo
    echo '```'
    grep -v -E '^(ugraph|  input|  block|    |  %|  output|  \}|\}|$)' <<< "${logs[$i]}" || true
    echo '```'
  done
} >> "$out"
cat "$out"
