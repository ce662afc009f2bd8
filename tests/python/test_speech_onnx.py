"""The demo's speech model as one ONNX file (data/speech/model.onnx, issue 44): it is what
tools/export_speech_onnx.py makes from the stored weights (data/speech/gru.*.npy,
head.*.npy), byte for byte, in this process and in a fresh one with torch's and OpenBLAS's
oldest kernels (the export runs no arithmetic on the weights, so no CPU's rounding can reach
the file); its weights are the stored ones bit for bit; and fixq's import of it
(fixq.Model.load_onnx) computes what the demo's float GRU + head computes, and what torch
computes, within 1e-4 on every held-out mixture."""

import importlib.util
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
import torch
from onnx import numpy_helper

import fixq
from conftest import ROOT

DATA = ROOT / "data" / "speech"
FILE = DATA / "model.onnx"
TOOL = ROOT / "tools" / "export_speech_onnx.py"
TOL = 1e-4
torch.set_num_threads(1)


def tool():
    spec = importlib.util.spec_from_file_location("export_speech_onnx", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_remade_byte_for_byte():
    got = tool().export(tool().load(DATA))
    want = FILE.read_bytes()
    if got != want:  # say which part differs, not only that the bytes do
        a, b = onnx.load_from_string(got), onnx.load_from_string(want)
        assert a.producer_version == b.producer_version, (
            f"{FILE} was exported by torch {b.producer_version}, this is torch {a.producer_version}: another version "
            "numbers and lays out the graph its own way (Debian 12's python3-torch made the file)")
        for field in ("producer_name", "ir_version", "opset_import"):
            assert getattr(a, field) == getattr(b, field), field
        assert [n.SerializeToString() for n in a.graph.node] == [n.SerializeToString() for n in b.graph.node], "nodes"
        assert [i.SerializeToString() for i in a.graph.initializer] == [i.SerializeToString() for i in b.graph.initializer]
        pytest.fail(f"{FILE}: remade {len(got)} bytes differ from the committed {len(want)} elsewhere")


def test_remade_by_the_script_on_portable_kernels(tmp_path):
    out = tmp_path / "model.onnx"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "ATEN_CPU_CAPABILITY": "default", "OPENBLAS_CORETYPE": "Prescott"}
    r = subprocess.run([sys.executable, str(TOOL), "--data", str(DATA), "--out", str(out)], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert out.read_bytes() == FILE.read_bytes()


def test_weights_are_the_stored_ones():
    """ONNX's GRU stacks its gates z, r, h and torch's r, z, n; biases are [W_b, R_b]."""
    m = onnx.load(str(FILE))
    init = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    grus = [n for n in m.graph.node if n.op_type == "GRU"]
    assert len(grus) == 2 and [n.op_type for n in m.graph.node if n.op_type not in
                               ("Shape", "Constant", "Gather", "Unsqueeze", "Concat", "ConstantOfShape", "Transpose",
                                "Slice", "Squeeze")] == ["GRU", "GRU", "MatMul", "Add", "Sigmoid"]
    npy = lambda name: np.load(DATA / f"{name}.npy")  # noqa: E731
    zrn = lambda w: np.concatenate([w[64:128], w[:64], w[128:]])  # noqa: E731  torch r,z,n -> onnx z,r,h
    for layer, node in enumerate(grus):
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        assert attrs["hidden_size"] == 64 and attrs["linear_before_reset"] == 1
        w, r, b = (init[name][0] for name in node.input[1:4])
        assert np.array_equal(w, zrn(npy(f"gru.weight_ih_l{layer}")))
        assert np.array_equal(r, zrn(npy(f"gru.weight_hh_l{layer}")))
        assert np.array_equal(b, np.concatenate([zrn(npy(f"gru.bias_ih_l{layer}")), zrn(npy(f"gru.bias_hh_l{layer}"))]))
    matmul = next(n for n in m.graph.node if n.op_type == "MatMul")
    assert np.array_equal(init[matmul.input[1]], npy("head.weight").T)
    assert np.array_equal(init["head.bias"], npy("head.bias"))
    assert sum(v.size for v in init.values()) == sum(np.load(DATA / f).size for f in os.listdir(DATA)
                                                     if f.startswith(("gru.", "head.")))


def test_float_forward_equals_gru_and_head_and_torch():
    """The whole model's float forward (features [B, T, 22] -> gains) against the demo's
    float path (fixq's float GRU, then sigmoid(W h + b)) and against torch."""
    x = np.ascontiguousarray(np.load(DATA / "heldout.features.npy").transpose(1, 0, 2))  # [T, B, F] -> [B, T, F]
    model = fixq.Model.load_onnx(FILE)
    assert [n["op"] for n in model.nodes] == ["gru", "linear", "sigmoid"]
    assert [(v["name"], v["layout"]) for v in model.inputs] == [("features", "BTC")]
    (whole,) = model.forward([x])
    assert whole.shape == x.shape

    sd = {n: np.load(DATA / f"gru.{n}.npy") for n in
          (f"{w}_l{k}" for k in range(2) for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))}
    y, _ = fixq.GruModel.from_state_dict(sd).forward(x, batch_first=True)
    head = y.astype(np.float64) @ np.load(DATA / "head.weight.npy").T.astype(np.float64) + np.load(DATA / "head.bias.npy")
    split = 1 / (1 + np.exp(-head))
    assert np.max(np.abs(whole - split)) <= TOL

    t = tool().load(DATA)
    with torch.no_grad():
        ref = t(torch.from_numpy(x)).numpy()
    assert np.max(np.abs(whole - ref)) <= TOL
