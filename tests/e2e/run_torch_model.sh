#!/usr/bin/env bash
# Exports a torchvision model (cached in CACHE_DIR) and checks Orchid's output against
# PyTorch's; CHECK_BINARY's further options follow (--compiled STRATEGY, --store bf16):
#   run_torch_model.sh MODEL CACHE_DIR CHECK_BINARY [OPTION VALUE ...]
set -euo pipefail
model=$1 cache=$2 check=$3
here=$(cd "$(dirname "$0")" && pwd)
if [[ ! -f "$cache/$model/output.npy" ]]; then
  OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} /usr/bin/python3 "$here/export_torch.py" "$model" "$cache"
fi
"$check" "$cache/$model" "${@:4}"
