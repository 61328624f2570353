#!/usr/bin/env bash
# Exports a torchvision model (cached in CACHE_DIR) and checks Orchid's output against
# PyTorch's, also compiled with STRATEGY when given:
#   run_torch_model.sh MODEL CACHE_DIR CHECK_BINARY [STRATEGY]
set -euo pipefail
model=$1 cache=$2 check=$3 strategy=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
if [[ ! -f "$cache/$model/output.npy" ]]; then
  OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} /usr/bin/python3 "$here/export_torch.py" "$model" "$cache"
fi
if [[ -n "$strategy" ]]; then
  "$check" "$cache/$model" --compiled "$strategy"
else
  "$check" "$cache/$model"
fi
