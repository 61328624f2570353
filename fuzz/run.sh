#!/usr/bin/env bash
# Runs libFuzzer targets of a fuzz build: `fuzz/run.sh BUILD SECONDS [RUNS [TARGET...]]`, each
# target until RUNS executions (-1: no limit) or SECONDS, whichever comes first; all three
# targets (onnx_loader, ir_parser, plan_loader) unless some are named.
# Each target's corpus grows in BUILD/fuzz-corpus/<target> (seeded from fuzz/corpus); a
# finding is written to BUILD/fuzz-findings/<target>/ and ends that target's run with its
# libFuzzer report. Prints, per target, the executions, the final coverage and the findings;
# exits non-zero when any target found something.
set -uo pipefail
build=${1:?usage: fuzz/run.sh BUILD SECONDS}
seconds=${2:?usage: fuzz/run.sh BUILD SECONDS}
runs=${3:--1}
shift $(( $# < 3 ? $# : 3 ))
targets=${*:-onnx_loader ir_parser plan_loader}
here=$(cd "$(dirname "$0")" && pwd)
# ASan records a stack trace at every allocation by default, which took half the time of the
# allocation-heavy loader target; a finding is rerun by hand with full traces
# (`ASAN_OPTIONS= BUILD/fuzz/<target>_fuzz FILE`).
export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=0}
status=0
for target in $targets; do
  case $target in
    onnx_loader) seeds=$here/corpus/onnx ;;
    ir_parser) seeds=$here/corpus/ir ;;
    plan_loader) seeds=$here/corpus/plan ;;
    *) echo "fuzz/run.sh: unknown target '$target'" >&2; exit 2 ;;
  esac
  corpus=$build/fuzz-corpus/$target
  findings=$build/fuzz-findings/$target
  log=$build/fuzz-logs/$target.log
  mkdir -p "$corpus" "$findings" "$(dirname "$log")"
  "$build/fuzz/${target}_fuzz" -max_total_time="$seconds" -runs="$runs" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$findings/" "$corpus" "$seeds" > "$log" 2>&1
  rc=$?
  executed=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  n=$(find "$findings" -type f | wc -l)
  echo "$target: ${executed:-?} executions, ${cov:-cov: ?}, $n finding(s), exit $rc (log: $log)"
  [ "$rc" -ne 0 ] || [ "$n" -ne 0 ] && status=1
done
exit $status
