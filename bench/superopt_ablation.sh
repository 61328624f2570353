#!/usr/bin/env bash
# The ablation of Mirage Table 5 on group-query attention: search time with and without
# abstract-expression pruning and canonical form, for block graphs of 4 to 7 operators, each
# cell capped (default 20 minutes) and reported as "> cap" beyond.
#
# A search with N block operators explores every block graph the (N-1)-operator search does
# (the operator count only stops the descent), so once a mode passes the cap at N operators
# its cells for more operators are reported as past the cap without being run.
#
#   bench/superopt_ablation.sh ORCHID_BIN OUT.md [CAP_SECONDS] [OPS...]
set -euo pipefail
orchid=$1
out=$2
cap=${3:-1200}
shift $(( $# < 3 ? $# : 3 ))
ops=("$@")
[ ${#ops[@]} -eq 0 ] && ops=(4 5 6 7)
here=$(cd "$(dirname "$0")/.." && pwd)
program=$here/tests/data/superopt/gqa.oir
common=(superopt "$program" --grid 2x2 --loop 2 --max-kernel-ops 4 --max-results 1 --no-cache --time-limit "$cap")

cell() {  # mode flag, block ops -> "seconds" or "> cap"
  local log
  log=$("$orchid" "${common[@]}" --max-block-ops "$2" $1 2>&1 | head -1)
  if [[ $log == *"time limit reached"* ]]; then
    echo "> $((cap / 60)) min"
  else
    local s=${log#*: }
    echo "${s%% s;*} s"
  fi
  echo "$1 ops=$2: $log" >&2
}

{
  echo "# Superoptimizer ablation on GQA decoding ($(date -u +%Y-%m-%d), $(nproc) cores)"
  echo
  echo "\`orchid ${common[*]/$program/tests/data/superopt/gqa.oir} --max-block-ops N [flag]\`, cap ${cap} s per cell."
  echo
  echo "| block operators | pruning + canonical form | no abstract-expression pruning | no canonical form |"
  echo "|---|---|---|---|"
} > "$out"
declare -A past=()  # mode -> the operator count at which it passed the cap
run() {  # mode flag, block ops -> a cell
  local key=${1:-full}
  if [[ -n ${past[$key]:-} ]]; then
    echo "> $((cap / 60)) min (as at ${past[$key]})"
    return
  fi
  cell "$1" "$2"
}
for n in "${ops[@]}"; do
  row="| $n"
  for mode in "" --no-prune --no-canonical; do
    c=$(run "$mode" "$n")
    [[ $c == ">"* && -z ${past[${mode:-full}]:-} ]] && past[${mode:-full}]=$n
    row+=" | $c"
  done
  echo "$row |" >> "$out"
done
cat "$out"
