"""Shared fixtures of the fixq Python tests.

ctest (tests/CMakeLists.txt) sets PYTHONPATH to <build>/python and FIXQ_BIN / FIXQ_ROOT
to the command-line tool and the repository; by hand, from the repository root:
    PYTHONPATH=build/python /usr/bin/python3 -m pytest -q tests/python
(FIXQ_BIN then defaults to build/bin/fixq).
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(os.environ.get("FIXQ_ROOT", Path(__file__).resolve().parents[2]))
FIXQ_BIN = Path(os.environ.get("FIXQ_BIN", ROOT / "build" / "bin" / "fixq"))

try:
    import fixq  # noqa: F401
except ImportError:  # a manual run without PYTHONPATH: the default build directory
    sys.path.insert(0, str(ROOT / "build" / "python"))
    import fixq  # noqa: F401


def run_cli(*args) -> str:
    """Runs the fixq tool; fails the test with its stderr when it exits non-zero."""
    if not FIXQ_BIN.exists():
        pytest.fail(f"fixq tool not found at {FIXQ_BIN}; build it or set FIXQ_BIN")
    r = subprocess.run([str(FIXQ_BIN), *map(str, args)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"fixq {' '.join(map(str, args))} failed:\n{r.stderr}")
    return r.stdout


@pytest.fixture
def cli():
    return run_cli


def make_torch_gru(input_size, hidden_size, num_layers=1, bidirectional=False, batch_first=False, seed=0):
    import torch

    torch.manual_seed(seed)
    gru = torch.nn.GRU(input_size, hidden_size, num_layers=num_layers, bidirectional=bidirectional,
                       batch_first=batch_first)
    return gru.eval()


def export_float_model(gru, path) -> Path:
    """Writes gru as the float model file with tools/export_gru.py (the same script users
    run), so the CLI and the Python side read one file made independently of the bindings."""
    import torch

    pt = Path(path).with_suffix(".pt")
    torch.save(gru.state_dict(), pt)
    subprocess.run([sys.executable, str(ROOT / "tools" / "export_gru.py"), "--state-dict", str(pt), "--out", str(path)],
                   check=True, capture_output=True)
    return Path(path)


def sequences(T, B, C, seed, scale=1.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal((T, B, C)) * scale).astype(np.float32)


@pytest.fixture(scope="session")
def small_gru_files(tmp_path_factory):
    """A 2-layer unidirectional GRU (C=6, H=12): float model file, calibration and test
    sequences, and its int8 pow2 quantization by the CLI (calibrated in one batch) with
    plain rounding and the float biases, so that QuantizedGru(float model, its parameters)
    rebuilds exactly that integer model."""
    d = tmp_path_factory.mktemp("small_gru")
    gru = make_torch_gru(6, 12, num_layers=2, seed=5)
    model = export_float_model(gru, d / "gru.safetensors")
    calib, x = sequences(20, 8, 6, 1), sequences(15, 3, 6, 2)
    np.save(d / "calib.npy", calib)
    np.save(d / "x.npy", x)
    run_cli("gru", "quantize", "--model", model, "--calib", d / "calib.npy", "--calib-batch", 8,
            "--rounding", "nearest", "--no-bias-correction", "--params-out", d / "params.json", "-o", d / "q.fixq")
    return {"dir": d, "torch": gru, "model": model, "calib": calib, "x": x, "fixq": d / "q.fixq",
            "params": d / "params.json"}
