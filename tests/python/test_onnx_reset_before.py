"""The reset-before GRU cell from ONNX (GRU nodes with linear_before_reset = 0, the
operator's default, as tf2onnx writes Keras and TF GRUs) against an independent numpy
implementation of the ONNX operator's equations (onnx 1.12 has no reference evaluator):
the float model to float32 rounding, the integer models within stated bounds, the .fixq
file (version 3) through the command line, and the paths that refuse the cell."""

import json
import struct
import subprocess

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

import fixq
from conftest import FIXQ_BIN, make_torch_gru, run_cli, sequences
from model_files import export_onnx

torch.set_num_threads(1)


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def onnx_gru(x, W, R, B, linear_before_reset):
    """The ONNX GRU operator (opset 14 text), float64: x [T, N, C], W [D, 3H, C], R [D, 3H, H],
    B [D, 6H] (Wb then Rb), gates z, r, h. Returns Y [T, D, N, H]. zt = f(Xt Wz^T + Ht-1 Rz^T
    + Wbz + Rbz), rt likewise, ht = g(Xt Wh^T + (rt . Ht-1) Rh^T + Rbh + Wbh) when
    linear_before_reset = 0, else g(Xt Wh^T + rt . (Ht-1 Rh^T + Rbh) + Wbh);
    Ht = (1 - zt) . ht + zt . Ht-1; the reverse direction runs t = T-1 .. 0."""
    x = x.astype(np.float64)
    T, N, _ = x.shape
    D, H3, _ = W.shape
    H = H3 // 3
    Y = np.zeros((T, D, N, H))
    for d in range(D):
        w, r, wb, rb = W[d].astype(np.float64), R[d].astype(np.float64), B[d, :H3].astype(np.float64), B[d, H3:].astype(np.float64)
        h = np.zeros((N, H))
        for t in (range(T) if d == 0 else range(T - 1, -1, -1)):
            wx = x[t] @ w.T + wb
            z = _sigmoid(wx[:, :H] + h @ r[:H].T + rb[:H])
            rg = _sigmoid(wx[:, H:2 * H] + h @ r[H:2 * H].T + rb[H:2 * H])
            if linear_before_reset:
                g = np.tanh(wx[:, 2 * H:] + rg * (h @ r[2 * H:].T + rb[2 * H:]))
            else:
                g = np.tanh(wx[:, 2 * H:] + (rg * h) @ r[2 * H:].T + rb[2 * H:])
            h = (1 - z) * g + z * h
            Y[t, d] = h
    return Y


def chain_reference(path, x):
    """Every GRU node of the file in graph order, each fed the one before as [T, N, D*H]."""
    m = onnx.load(str(path))
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    for n in m.graph.node:
        if n.op_type != "GRU":
            continue
        lbr = next((a.i for a in n.attribute if a.name == "linear_before_reset"), 0)
        Y = onnx_gru(x, inits[n.input[1]], inits[n.input[2]], inits[n.input[3]], lbr)
        x = Y.transpose(0, 2, 1, 3).reshape(Y.shape[0], Y.shape[2], -1)
    return x


def hand_built(tmp_path, C=4, H=6, D=2, seed=5, name="rb.onnx", lbr=None):
    """One GRU node from onnx.helper, linear_before_reset left at its default (0) unless given."""
    rng = np.random.default_rng(seed)
    W = (rng.standard_normal((D, 3 * H, C)) * 0.6).astype(np.float32)
    R = (rng.standard_normal((D, 3 * H, H)) * 0.6).astype(np.float32)
    B = (rng.standard_normal((D, 6 * H)) * 0.6).astype(np.float32)
    attrs = {"hidden_size": H, "direction": "bidirectional" if D == 2 else "forward"}
    if lbr is not None:
        attrs["linear_before_reset"] = lbr
    node = helper.make_node("GRU", ["x", "W", "R", "B"], ["y"], name="tf_gru", **attrs)
    inits = [numpy_helper.from_array(W, "W"), numpy_helper.from_array(R, "R"), numpy_helper.from_array(B, "B")]
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["T", "N", C])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), str(tmp_path / name))
    return tmp_path / name


def torch_chain_as_reset_before(tmp_path, layers, bidir, seed=3):
    """torch.onnx.export of an nn.GRU (one node per layer, linear_before_reset = 1), every node
    switched to linear_before_reset = 0: a multi-layer reset-before chain as exporters join it."""
    gru = make_torch_gru(5, 7, num_layers=layers, bidirectional=bidir, seed=seed)
    src = export_onnx(gru, torch.randn(4, 2, 5), tmp_path / "torch.onnx")
    m = onnx.load(str(src))
    for n in m.graph.node:
        for a in n.attribute:
            if n.op_type == "GRU" and a.name == "linear_before_reset":
                a.i = 0
    onnx.save(m, str(tmp_path / "chain_rb.onnx"))
    return tmp_path / "chain_rb.onnx"


def cosine(a, b):
    a, b = np.ravel(a).astype(np.float64), np.ravel(b).astype(np.float64)
    return float(a @ b / np.sqrt((a @ a) * (b @ b)))


def test_reference_tells_the_cells_apart(tmp_path):
    """The numpy operator with linear_before_reset = 1 is torch's nn.GRU (a test of the
    reference), and = 0 differs from it: so agreement below says something."""
    gru = make_torch_gru(4, 6, bidirectional=True, seed=2)
    path = export_onnx(gru, torch.randn(3, 2, 4), tmp_path / "t.onnx")
    x = sequences(7, 3, 4, seed=4)
    with torch.no_grad():
        want = gru(torch.from_numpy(x))[0].numpy()
    np.testing.assert_allclose(chain_reference(path, x), want, rtol=0, atol=1e-5)
    m = onnx.load(str(path))
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    n = next(n for n in m.graph.node if n.op_type == "GRU")
    rb = onnx_gru(x, inits[n.input[1]], inits[n.input[2]], inits[n.input[3]], 0)
    assert np.abs(rb.transpose(0, 2, 1, 3).reshape(7, 3, -1) - want).max() > 1e-2


@pytest.mark.parametrize("D", [1, 2])
def test_default_linear_before_reset_imports_the_reset_before_cell(tmp_path, D):
    path = hand_built(tmp_path, D=D)
    model = fixq.GruModel.load(path)
    assert model.cell_kind == "reset_before"
    x = sequences(9, 3, 4, seed=8, scale=1.5)
    y, h_n = model.forward(x)
    want = chain_reference(path, x)
    np.testing.assert_allclose(y, want, rtol=0, atol=1e-5)
    # The explicit attribute reads the same, and 1 is the other cell.
    assert fixq.GruModel.load(hand_built(tmp_path, D=D, name="a0.onnx", lbr=0)).cell_kind == "reset_before"
    assert fixq.GruModel.load(hand_built(tmp_path, D=D, name="a1.onnx", lbr=1)).cell_kind == "reset_after"


@pytest.mark.parametrize("layers,bidir", [(2, False), (2, True)])
def test_multi_layer_chains(tmp_path, layers, bidir):
    path = torch_chain_as_reset_before(tmp_path, layers, bidir)
    model = fixq.GruModel.load(path)
    assert model.cell_kind == "reset_before" and model.num_layers == layers
    x = sequences(8, 3, 5, seed=9)
    np.testing.assert_allclose(model.forward(x)[0], chain_reference(path, x), rtol=0, atol=1e-5)


@pytest.mark.parametrize("config,bound", [("int16", 0.999), ("int8", 0.99)])
@pytest.mark.parametrize("scales", ["pow2", "multiplier"])
def test_integer_models_stay_within_bounds_of_float(tmp_path, config, bound, scales):
    path = torch_chain_as_reset_before(tmp_path, 2, True)
    model = fixq.GruModel.load(path)
    cal = fixq.GruCalibrator(model, config=config, scales=scales)
    for s in range(3):
        cal.observe(sequences(12, 4, 5, seed=20 + s))
    q = fixq.QuantizedGru(model, cal.finalize())
    assert q.cell_kind == "reset_before"
    x = sequences(12, 4, 5, seed=31)
    assert cosine(q.forward(x)[0], chain_reference(path, x)) > bound


def _metadata(path):
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + n])["__metadata__"]


def test_command_line_quantizes_runs_and_refuses(tmp_path):
    path = torch_chain_as_reset_before(tmp_path, 2, False)
    x = sequences(10, 4, 5, seed=40)
    np.save(tmp_path / "x.npy", x)
    run_cli("gru", "quantize", "--model", path, "--calib", tmp_path / "x.npy", "--config", "int16", "-o", tmp_path / "q.fixq")
    meta = _metadata(tmp_path / "q.fixq")
    assert meta["fixq.version"] == "3" and meta["cell"] == "reset_before"
    run_cli("gru", "run", "--model", tmp_path / "q.fixq", "--input", tmp_path / "x.npy", "-o", tmp_path / "y.npy")
    assert cosine(np.load(tmp_path / "y.npy"), chain_reference(path, x)) > 0.999
    # The file runs the same integers through Python.
    q = fixq.QuantizedGru.load(tmp_path / "q.fixq")
    assert np.array_equal(q.forward(x)[0], np.load(tmp_path / "y.npy"))
    from fixq.torch import QuantGRU
    qt = QuantGRU.load(tmp_path / "q.fixq")
    assert qt.cell_kind == "reset_before"
    with torch.no_grad():
        assert np.array_equal(qt(torch.from_numpy(x))[0].numpy(), np.load(tmp_path / "y.npy"))
    for args, words in [(("gru", "export-c", "--model", tmp_path / "q.fixq", "-o", tmp_path / "c"), "reset_before"),
                        (("gru", "run", "--model", tmp_path / "q.fixq", "--input", tmp_path / "x.npy", "-o",
                          tmp_path / "g.npy", "--device", "cuda"), "reset_after GRU cell only")]:
        r = subprocess.run([str(FIXQ_BIN), *map(str, args)], capture_output=True, text=True)
        assert r.returncode != 0
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("fixq: error:") and words in lines[0], r.stderr
    assert not (tmp_path / "c").exists() and not (tmp_path / "g.npy").exists()


def test_mixed_and_unknown_cells_are_refused(tmp_path):
    gru = make_torch_gru(5, 7, num_layers=2, seed=1)
    m = onnx.load(str(export_onnx(gru, torch.randn(4, 2, 5), tmp_path / "t.onnx")))
    first = next(n for n in m.graph.node if n.op_type == "GRU")
    next(a for a in first.attribute if a.name == "linear_before_reset").i = 0
    onnx.save(m, str(tmp_path / "mixed.onnx"))
    with pytest.raises(ValueError, match=r"linear_before_reset.*every layer of a chain"):
        fixq.GruModel.load(tmp_path / "mixed.onnx")
    next(a for a in first.attribute if a.name == "linear_before_reset").i = 2
    onnx.save(m, str(tmp_path / "two.onnx"))
    with pytest.raises(ValueError, match=r"linear_before_reset = 2.*0 \(reset-before\) or 1 \(reset-after\)"):
        fixq.GruModel.load(tmp_path / "two.onnx")
    with pytest.raises(ValueError, match=r"not an nn.GRU"):
        fixq.GruModel.load(hand_built(tmp_path)).state_dict()
