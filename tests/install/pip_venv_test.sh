#!/usr/bin/env bash
# `pip install` of the repository into a fresh venv that sees Debian's numpy and torch
# (--system-site-packages), offline (--no-index) and with Debian's setuptools and wheel
# (--no-build-isolation), as README.md's Install section says. Then, without PYTHONPATH and
# outside the repository: fixq imports from the venv, its version is the project's, and
# fixq.torch.QuantGRU quantizes a torch GRU whose outputs equal fixq.QuantizedGru's on the
# same model bit for bit, and track torch's float GRU.
# The extension is the one this build made (FIXQ_CMAKE_BUILD_DIR, setup.py): what is tested
# is the packaging, not a second compile.
#   usage: pip_venv_test.sh BUILD_DIR REPO_ROOT
set -euo pipefail
build=$(cd "$1" && pwd)
root=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "pip venv: $*" >&2; exit 1; }
unset PYTHONPATH

/usr/bin/python3 -m venv --system-site-packages "$tmp/venv"
py=$tmp/venv/bin/python
FIXQ_CMAKE_BUILD_DIR=$build PIP_DISABLE_PIP_VERSION_CHECK=1 "$py" -m pip install --no-build-isolation --no-index \
  --no-cache-dir "$root" >"$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log" >&2; fail "pip install failed"; }

version=$(sed -n 's/^project(fixq VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
cd "$tmp"
"$py" - "$tmp/venv" "$version" <<'PY'
import importlib.metadata
import pathlib
import sys

import numpy as np
import torch

import fixq
import fixq.torch

venv, version = pathlib.Path(sys.argv[1]).resolve(), sys.argv[2]
package = pathlib.Path(fixq.__file__).resolve().parent
assert venv in package.parents, f"fixq imported from {package}, not from the venv {venv}"
assert fixq.__version__ == version == importlib.metadata.version("fixq"), (fixq.__version__, version)
installed = {p.name for p in package.iterdir()}
for name in ("__init__.py", "torch.py", "__init__.pyi", "py.typed"):
    assert name in installed, f"{name} not installed: {sorted(installed)}"
assert any(n.startswith("_fixq") and n.endswith(".so") for n in installed), sorted(installed)

torch.manual_seed(0)
torch.set_num_threads(1)
gru = torch.nn.GRU(12, 20, num_layers=2, batch_first=True).eval()
calib = [torch.randn(4, 15, 12) for _ in range(3)]
qgru = fixq.torch.QuantGRU.from_float(gru, calib, config="int8", scales="pow2", method="minmax")
x = torch.randn(3, 15, 12)
with torch.no_grad():
    y, h = qgru(x)
    y_float, _ = gru(x)
assert y.shape == (3, 15, 20) and h.shape == (2, 3, 20), (y.shape, h.shape)
# The module is a wrapper: the package's integer GRU on the same model gives the same bits.
direct, _ = qgru.quantized.forward(x.numpy(), batch_first=True)
assert isinstance(qgru.quantized, fixq.QuantizedGru)
assert np.array_equal(direct, y.numpy()), "QuantGRU differs from QuantizedGru"
cos = torch.nn.functional.cosine_similarity(y.flatten(), y_float.flatten(), dim=0).item()
assert cos > 0.99, f"int8 QuantGRU has cosine {cos} to torch's float GRU"
print(f"pip venv: ok (fixq {fixq.__version__} from {package}, QuantGRU cosine {cos:.5f} to torch)")
PY
