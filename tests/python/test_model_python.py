"""fixq.QuantizedModel and the model streams from Python: a torch model (conv front end + GRU +
two heads) exported to ONNX, fixq's float forward against torch, int16 against float, every
stream step against the whole-sequence forward bit for bit, the file round trip, and bad
input as ValueError naming what is wrong."""

import numpy as np
import pytest
import torch
from torch import nn

import fixq

torch.set_num_threads(1)


class Net(nn.Module):
    """Causal Conv1d + tanh on [B, T, C], a GRU, a sigmoid head per frame and a softmax head
    on the last frame (a "BC" output)."""

    def __init__(self):
        super().__init__()
        self.conv, self.gru = nn.Conv1d(10, 16, 3), nn.GRU(16, 24, batch_first=True)
        self.gain, self.cls = nn.Linear(24, 8), nn.Linear(24, 5)

    def forward(self, x):  # [B, T, C]
        t = torch.tanh(self.conv(nn.functional.pad(x.transpose(1, 2), (2, 0)))).transpose(1, 2)
        y, h = self.gru(t)
        return torch.sigmoid(self.gain(y)), torch.softmax(self.cls(h[-1]), -1)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    torch.manual_seed(7)
    m = Net().eval()
    f = tmp_path_factory.mktemp("m") / "net.onnx"
    torch.onnx.export(m, (torch.randn(2, 9, 10),), str(f), opset_version=13, input_names=["x"], output_names=["g", "p"],
                      dynamic_axes={"x": {0: "B", 1: "T"}, "g": {0: "B", 1: "T"}, "p": {0: "B"}})
    model = fixq.Model.load_onnx(f)
    rng = np.random.default_rng(0)
    calib = [rng.standard_normal((4, 30, 10)).astype(np.float32) for _ in range(3)]
    q = fixq.QuantizedModel.quantize(model, calib, preset="int16", scales="multiplier")
    return m, model, q


def test_float_equals_torch_and_int16_is_close(models):
    m, model, q = models
    x = torch.randn(3, 17, 10)
    with torch.no_grad():
        ref = [t.numpy() for t in m(x)]
    got = model.forward([x.numpy()])
    assert [a.shape for a in got] == [(3, 17, 8), (3, 5)]
    for a, r in zip(got, ref):
        assert float(np.abs(a - r).max()) < 1e-4
    for a, r in zip(q.forward([x.numpy()]), got):
        a, r = a.astype(np.float64).ravel(), r.astype(np.float64).ravel()
        assert a @ r / np.linalg.norm(a) / np.linalg.norm(r) >= 0.9999
    info = q.info()
    assert info["preset"] == "int16" and info["scales"] == "multiplier" and "softmax" in info["text"]


def test_streams_equal_forward_bit_for_bit(models):
    _, model, q = models
    x = np.random.default_rng(1).standard_normal((2, 12, 10)).astype(np.float32)
    for whole, stream in ((model.forward([x]), model.stream(2)), (q.forward([x]), q.stream(2))):
        for t in range(12):
            g, p = stream.step([x[:, t]])
            assert g.shape == (2, 8) and p.shape == (2, 5)
            assert np.array_equal(g, whole[0][:, t])
        assert np.array_equal(p, whole[1])  # the last frame's posterior
    s = fixq.QuantizedModelStream(q, 2)
    raw = q.forward_raw([np.zeros((2, 12, 10), np.int16)])
    assert raw[0].dtype == np.int16
    for t in range(12):
        out = s.step_raw([np.zeros((2, 10), np.int16)])
    assert np.array_equal(out[1], raw[1])


def test_save_load_round_trip(models, tmp_path):
    _, _, q = models
    q.save(tmp_path / "q.fixq")
    l = fixq.QuantizedModel.load(tmp_path / "q.fixq")
    x = np.random.default_rng(2).standard_normal((1, 7, 10)).astype(np.float32)
    for a, b in zip(q.forward([x]), l.forward([x])):
        assert np.array_equal(a, b)
    assert l.info()["text"] == q.info()["text"]


def test_bad_input_is_value_error(models):
    _, model, q = models
    with pytest.raises(ValueError, match="'x'"):
        q.forward([np.zeros((2, 5, 9), np.float32)])
    bad = np.zeros((1, 4, 10), np.float32)
    bad[0, 2, 3] = np.nan
    with pytest.raises(ValueError, match="model input 'x' element"):
        q.forward([bad])
    with pytest.raises(ValueError, match="2 inputs given"):
        model.forward([bad, bad])
    with pytest.raises(ValueError, match=r"must be \[2, 10\]"):
        model.stream(2).step([np.zeros((3, 10), np.float32)])
    with pytest.raises(ValueError, match="int4"):
        fixq.QuantizedModel.quantize(model, [bad[:, :2] * 0], preset="int4")
    with pytest.raises(ValueError, match="no calibration batches"):
        fixq.QuantizedModel.quantize(model, [])


def test_torch_module_wrapper():
    import fixq.torch as ft
    torch.manual_seed(8)
    m = Net().eval()
    calib = [torch.randn(4, 25, 10) for _ in range(3)]
    fm = ft.quantize_module(m, torch.randn(2, 9, 10), calib, preset=None)
    qm = ft.quantize_module(m, torch.randn(2, 9, 10), calib, preset="int16")
    x = torch.randn(3, 14, 10)
    with torch.no_grad():
        ref = m(x)
    got, q = fm(x), qm(x)
    for a, r in zip(got, ref):
        assert a.shape == r.shape and float((a - r).abs().max()) < 1e-4
    for a, r in zip(q, got):
        a, r = a.double().ravel(), r.double().ravel()
        assert float(a @ r / a.norm() / r.norm()) >= 0.9999
    s = qm.stream(3)
    for t in range(14):
        g, p = s.step(x[:, t])
        assert torch.equal(g, q[0][:, t])
    assert torch.equal(p, q[1])
