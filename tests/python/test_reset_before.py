"""The reset-before GRU cell (docs/spec.md 5.4) from Python and the command line, without
ONNX: a model built with GruModel.from_state_dict(..., cell_kind="reset_before") against an
independent numpy implementation of its equations; its .fixq file (version 3) run by the
tool and by fixq.torch.QuantGRU; export-c and --device cuda refuse it with one line."""

import json
import struct
import subprocess

import numpy as np
import pytest
import torch

import fixq
from conftest import FIXQ_BIN, make_torch_gru, run_cli, sequences
from fixq.torch import QuantGRU

torch.set_num_threads(1)


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def reset_before_reference(sd, x, H, bidirectional):
    """One layer in float64 from an nn.GRU state_dict's tensors (torch's gate order r, z, n):
    z = s(Wz x + bz + Rz h + bRz), r likewise, n = tanh(Wn x + bn + Rn (r h) + bRn),
    h' = (1 - z) n + z h; the reverse direction runs t = T-1 .. 0. Returns y [T, B, D*H]."""
    T, B, _ = x.shape
    outs = []
    for sfx in ["", "_reverse"][: 2 if bidirectional else 1]:
        W, R = sd["weight_ih_l0" + sfx].astype(np.float64), sd["weight_hh_l0" + sfx].astype(np.float64)
        bw, br = sd["bias_ih_l0" + sfx].astype(np.float64), sd["bias_hh_l0" + sfx].astype(np.float64)
        h = np.zeros((B, H))
        y = np.zeros((T, B, H))
        for t in (range(T) if sfx == "" else range(T - 1, -1, -1)):
            wx = x[t].astype(np.float64) @ W.T + bw
            r = _sigmoid(wx[:, :H] + h @ R[:H].T + br[:H])
            z = _sigmoid(wx[:, H:2 * H] + h @ R[H:2 * H].T + br[H:2 * H])
            n = np.tanh(wx[:, 2 * H:] + (r * h) @ R[2 * H:].T + br[2 * H:])
            h = (1 - z) * n + z * h
            y[t] = h
        outs.append(y)
    return np.concatenate(outs, axis=2)


def cosine(a, b):
    a, b = np.ravel(a).astype(np.float64), np.ravel(b).astype(np.float64)
    return float(a @ b / np.sqrt((a @ a) * (b @ b)))


def model_and_weights(bidirectional=False, seed=4):
    gru = make_torch_gru(5, 8, bidirectional=bidirectional, seed=seed)
    sd = {k: v.detach().numpy() for k, v in gru.state_dict().items()}
    return fixq.GruModel.from_state_dict(sd, cell_kind="reset_before"), sd, gru


@pytest.mark.parametrize("bidirectional", [False, True])
def test_float_model_follows_the_equations(bidirectional):
    model, sd, gru = model_and_weights(bidirectional)
    assert model.cell_kind == "reset_before"
    assert fixq.GruModel.from_state_dict(sd).cell_kind == "reset_after"
    x = sequences(9, 3, 5, seed=2, scale=1.5)
    want = reset_before_reference(sd, x, 8, bidirectional)
    np.testing.assert_allclose(model.forward(x)[0], want, rtol=0, atol=1e-5)
    with torch.no_grad():  # torch's cell differs: the test tells the cells apart
        assert np.abs(gru(torch.from_numpy(x))[0].numpy() - want).max() > 1e-2
    with pytest.raises(ValueError, match="not an nn.GRU"):
        model.state_dict()
    with pytest.raises(ValueError, match="'reset_sometimes' is not one of: reset_after, reset_before"):
        fixq.GruModel.from_state_dict(sd, cell_kind="reset_sometimes")


@pytest.mark.parametrize("config,bound", [("int16", 0.999), ("int8", 0.99)])
@pytest.mark.parametrize("scales", ["pow2", "multiplier"])
def test_integer_models_stay_close_to_float(config, bound, scales):
    model, sd, _ = model_and_weights(True)
    cal = fixq.GruCalibrator(model, config=config, scales=scales)
    for s in range(3):
        cal.observe(sequences(12, 4, 5, seed=10 + s))
    q = fixq.QuantizedGru(model, cal.finalize())
    assert q.cell_kind == "reset_before" and not any(q.vectorized_cells())
    assert q.cell_constants(0)["cell_kind"] == "reset_before" and "reset_mul" in q.cell_constants(0)
    x = sequences(12, 4, 5, seed=30)
    assert cosine(q.forward(x)[0], reset_before_reference(sd, x, 8, True)) > bound


def _metadata(path):
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + n])["__metadata__"]


def test_the_file_runs_on_the_command_line_and_is_refused_where_it_cannot(tmp_path):
    model, sd, _ = model_and_weights(False)
    cal = fixq.GruCalibrator(model, config="int8", scales="pow2")
    cal.observe(sequences(10, 4, 5, seed=1))
    q = fixq.QuantizedGru(model, cal.finalize())
    q.save(tmp_path / "q.fixq")
    meta = _metadata(tmp_path / "q.fixq")
    assert meta["fixq.version"] == "3" and meta["cell"] == "reset_before"
    x = sequences(7, 2, 5, seed=3)
    np.save(tmp_path / "x.npy", x)
    run_cli("gru", "run", "--model", tmp_path / "q.fixq", "--input", tmp_path / "x.npy", "-o", tmp_path / "y.npy")
    y = q.forward(x)[0]
    assert np.array_equal(np.load(tmp_path / "y.npy"), y)
    qt = QuantGRU.load(tmp_path / "q.fixq")
    assert qt.cell_kind == "reset_before"
    with torch.no_grad():
        assert np.array_equal(qt(torch.from_numpy(x))[0].numpy(), y)
    for args, words in [(("gru", "export-c", "--model", tmp_path / "q.fixq", "-o", tmp_path / "c"), "reset_before"),
                        (("gru", "run", "--model", tmp_path / "q.fixq", "--input", tmp_path / "x.npy", "-o",
                          tmp_path / "g.npy", "--device", "cuda"), "reset_after GRU cell only")]:
        r = subprocess.run([str(FIXQ_BIN), *map(str, args)], capture_output=True, text=True)
        assert r.returncode != 0
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("fixq: error:") and words in lines[0], r.stderr
    assert not (tmp_path / "c").exists() and not (tmp_path / "g.npy").exists()
