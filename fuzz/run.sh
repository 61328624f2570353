#!/usr/bin/env bash
# Runs each libFuzzer target of a fuzz build for a while: `fuzz/run.sh BUILD SECONDS`.
# Each target's corpus grows in BUILD/fuzz-corpus/<target> (seeded from fuzz/corpus); a
# finding is written to BUILD/fuzz-findings/<target>/ and ends that target's run with its
# libFuzzer report. Prints, per target, the executions, the final coverage and the findings;
# exits non-zero when any target found something.
set -uo pipefail
build=${1:?usage: fuzz/run.sh BUILD SECONDS}
seconds=${2:?usage: fuzz/run.sh BUILD SECONDS}
here=$(cd "$(dirname "$0")" && pwd)
status=0
for pair in onnx_loader:onnx ir_parser:ir plan_loader:plan; do
  target=${pair%%:*}
  seeds=$here/corpus/${pair##*:}
  corpus=$build/fuzz-corpus/$target
  findings=$build/fuzz-findings/$target
  log=$build/fuzz-logs/$target.log
  mkdir -p "$corpus" "$findings" "$(dirname "$log")"
  "$build/fuzz/${target}_fuzz" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$findings/" "$corpus" "$seeds" > "$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  n=$(find "$findings" -type f | wc -l)
  echo "$target: ${runs:-?} executions, ${cov:-cov: ?}, $n finding(s), exit $rc (log: $log)"
  [ "$rc" -ne 0 ] || [ "$n" -ne 0 ] && status=1
done
exit $status
