#!/usr/bin/env bash
# Creates the benchmark peers' virtual environment from PyPI (idempotent) and records which
# peers installed, with the reason for those that did not, in $VENV/peers-status.json.
#   scripts/setup-bench-venv.sh [VENV]      default: build/bench-venv
# The peers: onnxruntime, openvino, a torch 2.x (eager + torch.compile), apache-tvm.
# Model export does not use this environment: it runs on Debian's /usr/bin/python3 + torch 1.13.
set -uo pipefail

VENV=${1:-build/bench-venv}
PY=/usr/bin/python3
STATUS=$VENV/peers-status.json

if [[ ! -x $VENV/bin/python ]]; then
  echo "setup-bench-venv: creating $VENV with $($PY --version)"
  $PY -m venv "$VENV" || { echo "setup-bench-venv: python3 -m venv failed (apt-get install python3-venv)" >&2; exit 1; }
fi
VPY=$VENV/bin/python
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

declare -A reason
# install MODULE[,MODULE...] PIP_SPEC... : installs unless the modules already import; records
# the failure reason under the first module's name.
install() {
  local modules=$1 module=${1%%,*}; shift
  if "$VPY" -c "import $modules" >/dev/null 2>&1; then
    echo "setup-bench-venv: $module present ($("$VPY" -c "import $module as m; print(getattr(m, '__version__', '?'))" 2>/dev/null))"
    return 0
  fi
  echo "setup-bench-venv: installing $*"
  local log; log=$(mktemp)
  if "$VPY" -m pip install -q "$@" >"$log" 2>&1 && "$VPY" -c "import $modules" >>"$log" 2>&1; then
    echo "setup-bench-venv: installed $module $("$VPY" -c "import $module as m; print(getattr(m, '__version__', '?'))" 2>/dev/null)"
  else
    reason[$module]=$(grep -E 'ERROR|Error|error' "$log" | tail -n 3 | tr '\n' ' ' | cut -c1-400)
    [[ -n ${reason[$module]} ]] || reason[$module]=$(tail -n 3 "$log" | tr '\n' ' ' | cut -c1-400)
    echo "setup-bench-venv: $module did not install: ${reason[$module]}" >&2
  fi
  rm -f "$log"
}

install numpy numpy
install onnx onnx
install matplotlib matplotlib
install onnxruntime onnxruntime
install openvino openvino
install torch 'torch>=2'
install torchvision torchvision
# MetaSchedule needs cloudpickle (its builder/runner pools) and xgboost (its cost model).
# apache-tvm-ffi 0.1.15 segfaults in tvm::ffi::ToJSONGraph when MetaSchedule saves a tuning
# record with apache-tvm 0.27.0.post1; 0.1.14.post1 works.
install tvm,tvm_ffi,cloudpickle,xgboost apache-tvm 'apache-tvm-ffi==0.1.14.post1' cloudpickle xgboost

# peers-status.json: one entry per peer package, {"ok": bool, "version" | "reason"}.
{
  echo "{"
  first=1
  for m in onnxruntime openvino torch torchvision tvm; do
    [[ $first == 1 ]] || echo ","
    first=0
    if [[ -z ${reason[$m]+x} ]] && "$VPY" -c "import $m" >/dev/null 2>&1; then
      v=$("$VPY" -c "import $m as x; print(getattr(x, '__version__', '?'))" 2>/dev/null)
      printf '  "%s": {"ok": true, "version": "%s"}' "$m" "$v"
    else
      r=${reason[$m]:-import failed}
      printf '  "%s": {"ok": false, "reason": %s}' "$m" "$($PY -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$r")"
    fi
  done
  echo
  echo "}"
} >"$STATUS"
echo "setup-bench-venv: peer status in $STATUS"
cat "$STATUS"
