#!/usr/bin/env bash
# The Python package as a user installs it: a fresh virtual environment VENV, `pip install .[torch]`
# from this checkout (from PyPI: scikit-build-core, pybind11, NumPy, torch 2.x and onnx; pytest
# and torchvision for the suite), then the whole pytest suite (tests/python, the torch.compile
# backend's included) against the installed package, run from outside the checkout so that
# nothing else is imported. A package that does not install fails the run. `make test-python`
# (CTest label python).
#   scripts/test-python.sh VENV
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:?usage: scripts/test-python.sh VENV}
rm -rf "$venv"
/usr/bin/python3 -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
"$venv/bin/pip" install -q pytest onnx torchvision 'torch>=2.1'
"$venv/bin/pip" install -q "$root[torch]"
cd "$venv"
ORCHID_TEST_CACHE="$venv/cache" "$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/tests/python"
