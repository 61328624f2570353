#!/usr/bin/env bash
# The Python package as a user installs it: a fresh virtual environment VENV, `pip install .`
# from this checkout (from PyPI: scikit-build-core, pybind11, NumPy, and pytest and onnx for
# the suite), then the pytest suite (tests/python) against the installed package, run from
# outside the checkout so that nothing else is imported. `make test-python` (CTest label python).
#   scripts/test-python.sh VENV
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:?usage: scripts/test-python.sh VENV}
rm -rf "$venv"
/usr/bin/python3 -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
"$venv/bin/pip" install -q pytest onnx
"$venv/bin/pip" install -q "$root"
cd "$venv"
ORCHID_TEST_CACHE="$venv/cache" "$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/tests/python"
