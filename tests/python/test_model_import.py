"""Whole ONNX models (fixq.Model.load_onnx, issue 44): real models built with torch and
exported by torch.onnx.export at opsets 11, 13 and 17 with dynamic batch and time axes,
and GRUs written with onnx.helper as tf2onnx writes them. Each import is checked for its
structure (operators, shapes, layouts) and its float forward against torch (or, for the
helper-made GRUs, the ONNX operator's equations in numpy) within 1e-4; every refusal is
checked to be one line naming the node and its op type."""

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper
from torch import nn

import fixq
from test_onnx_reset_before import onnx_gru

torch.set_num_threads(1)
# torch.onnx.export's notes on its own shape inference.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
TOL = 1e-4
OPSETS = [11, 13, 17]


# ---- the models


class RNNoise(nn.Module):
    """RNNoise 2024's shape: two causal Conv1d k=3 + tanh, three GRUs, the concatenation of
    the conv output and every GRU output, two Linear + sigmoid heads."""

    def __init__(self, c=8, conv=16, h=12):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv1d(c, conv, 3), nn.Conv1d(conv, conv, 3)
        self.gru1 = nn.GRU(conv, h, batch_first=True)
        self.gru2 = nn.GRU(h, h, batch_first=True)
        self.gru3 = nn.GRU(h, h, batch_first=True)
        self.gain, self.vad = nn.Linear(conv + 3 * h, 6), nn.Linear(conv + 3 * h, 1)

    def forward(self, x):  # [B, T, C]
        t = x.permute(0, 2, 1)
        t = torch.tanh(self.conv1(nn.functional.pad(t, (2, 0))))
        t = torch.tanh(self.conv2(nn.functional.pad(t, (2, 0))))
        t = t.permute(0, 2, 1)
        a, _ = self.gru1(t)
        b, _ = self.gru2(a)
        c, _ = self.gru3(b)
        cat = torch.cat([t, a, b, c], -1)
        return torch.sigmoid(self.gain(cat)), torch.sigmoid(self.vad(cat))


class Glu(nn.Module):
    """A GLU block: Linear to 2N, halves by chunk (Slice) or split (Split), a * sigmoid(b)."""

    def __init__(self, split=False):
        super().__init__()
        self.proj, self.out, self.split = nn.Linear(8, 16), nn.Linear(8, 3), split

    def forward(self, x):
        h = self.proj(x)
        a, b = torch.split(h, [8, 8], -1) if self.split else h.chunk(2, -1)
        return self.out(a * torch.sigmoid(b))


class Kws(nn.Module):
    """A keyword spotter: Conv1d (symmetric pads + a Slice: causal) + ReLU on [B, C, T], a
    two-layer GRU, its last state h_n[-1] -> Linear -> softmax."""

    def __init__(self):
        super().__init__()
        self.conv, self.gru, self.fc = nn.Conv1d(8, 16, 3, padding=4, dilation=2), nn.GRU(16, 12, num_layers=2), nn.Linear(12, 4)

    def forward(self, x):  # [B, C, T]
        t = torch.relu(self.conv(x)[:, :, :-4])
        _, h = self.gru(t.permute(2, 0, 1))
        return torch.softmax(self.fc(h[-1]), -1)


class KwsLastFrame(nn.Module):
    """A keyword spotter reading the GRU's output at the last step, in each form a head writes
    it, then Linear -> softmax. torch 1.13 exports y[:, -1] and y.select(1, -1) as Gather -1;
    y[:, -1:].squeeze(1) as Slice [-1:] then an If on Equal(T', 1) of the sliced shape (its
    then-branch the Squeeze); y[:, -1:][:, 0] as Slice + Gather 0; flatten / reshape of
    y[:, -1:] as Slice + Flatten / Reshape. Time-major (y[-1], y[-1:].squeeze(0)) as well."""

    FORMS = ["gather", "select", "slice_squeeze", "slice_gather", "slice_flatten", "slice_reshape", "tm_gather",
             "tm_slice_squeeze"]

    def __init__(self, how):
        super().__init__()
        self.how, self.batch_first = how, not how.startswith("tm_")
        self.gru, self.fc = nn.GRU(8, 12, batch_first=self.batch_first), nn.Linear(12, 5)

    def forward(self, x):  # [B, T, C], or [T, B, C] for the tm_ forms
        y, _ = self.gru(x)
        last = {"gather": lambda: y[:, -1], "select": lambda: y.select(1, -1),
                "slice_squeeze": lambda: y[:, -1:].squeeze(1), "slice_gather": lambda: y[:, -1:][:, 0],
                "slice_flatten": lambda: y[:, -1:].flatten(1), "slice_reshape": lambda: y[:, -1:].reshape(-1, 12),
                "tm_gather": lambda: y[-1], "tm_slice_squeeze": lambda: y[-1:].squeeze(0)}[self.how]()
        return torch.softmax(self.fc(last), -1)


class Stateful(nn.Module):
    """Initial-state input and final-state output: a two-layer bidirectional GRU."""

    def __init__(self):
        super().__init__()
        self.gru, self.fc = nn.GRU(6, 5, num_layers=2, bidirectional=True, batch_first=True), nn.Linear(10, 3)

    def forward(self, x, h0):
        y, h = self.gru(x, h0)
        return self.fc(y), h


class Bidirectional(nn.Module):
    """A time-major bidirectional GRU, its output as it is."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(5, 7, bidirectional=True)

    def forward(self, x):  # [T, B, C]
        return self.gru(x)[0]


class Tcn(nn.Module):
    """Depthwise dilated causal conv (a Pad of (k-1)*d) + pointwise conv, channels first."""

    def __init__(self):
        super().__init__()
        self.dw, self.pw = nn.Conv1d(6, 6, 3, dilation=2, groups=6), nn.Conv1d(6, 4, 1)

    def forward(self, x):  # [B, C, T]
        return self.pw(torch.relu(self.dw(nn.functional.pad(x, (4, 0)))))


def export(module, args, path, opset, names, dynamic):
    torch.onnx.export(module.eval(), args, str(path), opset_version=opset, input_names=names[0], output_names=names[1],
                      dynamic_axes=dynamic)
    return path


def torch_out(module, args):
    with torch.no_grad():
        out = module(*args)
    return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]


def max_err(a, b):
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))


def ops(model):
    return [n["op"] for n in model.nodes]


# ---- torch models: structure and float outputs


@pytest.mark.parametrize("opset", OPSETS)
def test_rnnoise_shape(tmp_path, opset):
    torch.manual_seed(0)
    m = RNNoise()
    x = torch.randn(2, 9, 8)
    dyn = {"x": {0: "B", 1: "T"}, "gain": {0: "B", 1: "T"}, "vad": {0: "B", 1: "T"}}
    f = export(m, (x,), tmp_path / "rnnoise.onnx", opset, (["x"], ["gain", "vad"]), dyn)
    model = fixq.Model.load_onnx(f)
    assert ops(model) == ["conv1d", "tanh", "conv1d", "tanh", "gru", "gru", "gru", "concat", "linear", "sigmoid",
                          "linear", "sigmoid"]
    conv = model.nodes[0]
    assert (conv["kernel"], conv["dilation"], conv["groups"], conv["in_features"], conv["out_features"]) == (3, 1, 1, 8, 16)
    assert [v["layout"] for v in model.inputs + model.outputs] == ["BTC", "BTC", "BTC"]
    assert [v["name"] for v in model.outputs] == ["gain", "vad"]
    assert model.nodes[8]["has_bias"] and model.nodes[8]["in_features"] == 16 + 36
    # Other batch and time sizes than the export's: the axes are dynamic.
    x2 = torch.randn(3, 14, 8)
    got, want = model.forward([x2.numpy()]), torch_out(m, (x2,))
    for g, w in zip(got, want):
        assert g.shape == w.shape
        assert max_err(g, w) < TOL


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("split", [False, True])
def test_glu(tmp_path, opset, split):
    torch.manual_seed(1)
    m = Glu(split)
    f = export(m, (torch.randn(2, 5, 8),), tmp_path / "glu.onnx", opset, (["x"], ["y"]),
               {"x": {0: "B", 1: "T"}, "y": {0: "B", 1: "T"}})
    model = fixq.Model.load_onnx(f)
    assert ops(model) == ["linear", "slice", "slice", "sigmoid", "mul", "linear"]
    assert [(n["begin"], n["end"]) for n in model.nodes[1:3]] == [(0, 8), (8, 16)]
    x = torch.randn(3, 7, 8)
    assert max_err(model.forward([x.numpy()])[0], torch_out(m, (x,))[0]) < TOL


@pytest.mark.parametrize("opset", OPSETS)
def test_keyword_spotter_last_state(tmp_path, opset):
    torch.manual_seed(2)
    m = Kws()
    f = export(m, (torch.randn(2, 8, 10),), tmp_path / "kws.onnx", opset, (["x"], ["p"]), {"x": {0: "B", 2: "T"}, "p": {0: "B"}})
    model = fixq.Model.load_onnx(f)
    assert ops(model) == ["conv1d", "relu", "gru", "linear", "softmax"]
    assert model.nodes[0]["dilation"] == 2 and model.nodes[2]["gru"]["num_layers"] == 2
    assert model.inputs[0]["layout"] == "BCT"
    # h_n[-1] is the top layer's last frame: the output is that frame, [B, K] as in the ONNX file.
    assert model.outputs[0]["layout"] == "BC"
    x = torch.randn(3, 8, 13)
    got = model.forward([x.numpy()])[0]
    assert got.shape == (3, 4)
    assert max_err(got, torch_out(m, (x,))[0]) < TOL


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("how", KwsLastFrame.FORMS)
def test_keyword_spotter_last_frame(tmp_path, opset, how):
    torch.manual_seed(4)
    m = KwsLastFrame(how)
    time_major = not m.batch_first
    x0 = torch.randn(6, 2, 8) if time_major else torch.randn(2, 6, 8)
    dyn = {"x": {1: "B", 0: "T"} if time_major else {0: "B", 1: "T"}, "p": {0: "B"}}
    f = export(m, (x0,), tmp_path / "kws.onnx", opset, (["x"], ["p"]), dyn)
    if how == "slice_squeeze":
        assert "If" in [n.op_type for n in onnx.load(str(f)).graph.node]  # the form this import folds
    model = fixq.Model.load_onnx(f)
    assert ops(model) == ["gru", "linear", "softmax"]
    assert [v["layout"] for v in model.inputs + model.outputs] == ["TBC" if time_major else "BTC", "BC"]
    x = torch.randn(11, 3, 8) if time_major else torch.randn(3, 11, 8)
    got = model.forward([x.numpy()])[0]
    assert got.shape == (3, 5)
    assert max_err(got, torch_out(m, (x,))[0]) < TOL
    # The integer models within the bounds the CLI test holds them to (cosine to float).
    rng = np.random.default_rng(4)
    calib = [rng.standard_normal(x.shape).astype(np.float32) for _ in range(2)]
    for preset, need in (("int16", 0.9999), ("int8", 0.999)):
        q = fixq.QuantizedModel.quantize(model, calib, preset=preset, scales="multiplier")
        a, r = q.forward([x.numpy()])[0].astype(np.float64).ravel(), got.astype(np.float64).ravel()
        assert a @ r / np.linalg.norm(a) / np.linalg.norm(r) >= need, preset


class Unbatched(nn.Module):
    """torch's 2-D (unbatched) inputs: a [T, C] input into Conv1d (through x.t(), as Conv1d
    takes [C, T]) and into a two-layer nn.GRU (batch_first or not, which torch ignores for
    2-D input), then Linear: the exporter unsqueezes a batch axis of 1 before the Conv / GRU."""

    def __init__(self, batch_first):
        super().__init__()
        self.conv = nn.Conv1d(8, 10, 3, dilation=2)
        self.gru, self.fc = nn.GRU(10, 12, num_layers=2, batch_first=batch_first), nn.Linear(12, 4)

    def forward(self, x):  # [T, C]
        t = torch.relu(self.conv(nn.functional.pad(x.t(), (4, 0)))).t()
        return torch.sigmoid(self.fc(self.gru(t)[0]))


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("batch_first", [False, True])
def test_unbatched_input_into_conv_and_gru(tmp_path, opset, batch_first):
    torch.manual_seed(6)
    m = Unbatched(batch_first)
    f = export(m, (torch.randn(9, 8),), tmp_path / "u.onnx", opset, (["x"], ["y"]), {"x": {0: "T"}, "y": {0: "T"}})
    model = fixq.Model.load_onnx(f)
    assert ops(model) == ["conv1d", "relu", "gru", "linear", "sigmoid"]
    assert [v["layout"] for v in model.inputs + model.outputs] == ["TC", "TC"]
    x = torch.randn(23, 8)
    got = model.forward([x.numpy()])[0]
    assert got.shape == (23, 4)
    assert max_err(got, torch_out(m, (x,))[0]) < TOL
    # The integer model within its bound.
    rng = np.random.default_rng(6)
    calib = [rng.standard_normal((40, 8)).astype(np.float32) for _ in range(2)]
    q = fixq.QuantizedModel.quantize(model, calib, preset="int16", scales="multiplier")
    a, r = q.forward([x.numpy()])[0].astype(np.float64).ravel(), got.astype(np.float64).ravel()
    assert a @ r / np.linalg.norm(a) / np.linalg.norm(r) >= 0.9999


def test_unbatched_channels_first_input_is_refused(tmp_path):
    """A 2-D [C, T] input (Conv1d's own unbatched form) has no fixq layout: one line says so."""
    torch.manual_seed(6)
    conv = nn.Conv1d(8, 6, 3, padding=2)
    f = export(conv, (torch.randn(8, 9),), tmp_path / "ct.onnx", 13, (["x"], ["y"]), {"x": {1: "T"}, "y": {1: "T"}})
    with pytest.raises(ValueError) as e:
        fixq.Model.load_onnx(f)
    assert "\n" not in str(e.value) and "graph input 'x' is [features, time]" in str(e.value), str(e.value)


@pytest.mark.parametrize("opset", OPSETS)
def test_initial_and_final_state(tmp_path, opset):
    torch.manual_seed(3)
    m = Stateful()
    dyn = {"x": {0: "B", 1: "T"}, "h0": {1: "B"}, "y": {0: "B", 1: "T"}, "hn": {1: "B"}}
    f = export(m, (torch.randn(2, 6, 6), torch.zeros(4, 2, 5)), tmp_path / "state.onnx", opset, (["x", "h0"], ["y", "hn"]), dyn)
    model = fixq.Model.load_onnx(f)
    assert ops(model) == ["gru", "linear"]
    gru = model.nodes[0]
    assert gru["gru"]["bidirectional"] and gru["gru"]["num_layers"] == 2
    assert gru["inputs"] == ["x", "h0"] and gru["outputs"][1] == "hn"
    assert [(v["kind"], v["layout"]) for v in model.inputs] == [("sequence", "BTC"), ("state", "SBH")]
    assert [(v["kind"], v["layout"], v["rows"]) for v in model.outputs] == [("sequence", "BTC", 0), ("state", "SBH", 4)]
    x, h0 = torch.randn(3, 8, 6), torch.randn(4, 3, 5)
    got, want = model.forward([x.numpy(), h0.numpy()]), torch_out(m, (x, h0))
    for g, w in zip(got, want):
        assert g.shape == w.shape and max_err(g, w) < TOL
    # No initial state: zeros.
    got0 = model.forward([x.numpy(), None])
    assert max_err(got0[0], torch_out(m, (x, torch.zeros(4, 3, 5)))[0]) < TOL


@pytest.mark.parametrize("opset", OPSETS)
def test_bidirectional_time_major(tmp_path, opset):
    torch.manual_seed(4)
    m = Bidirectional()
    f = export(m, (torch.randn(6, 2, 5),), tmp_path / "bi.onnx", opset, (["x"], ["y"]),
               {"x": {0: "T", 1: "B"}, "y": {0: "T", 1: "B"}})
    model = fixq.Model.load_onnx(f)
    assert ops(model) == ["gru"]
    assert [v["layout"] for v in model.inputs + model.outputs] == ["TBC", "TBC"]
    assert model.outputs[0]["features"] == 14
    x = torch.randn(9, 3, 5)
    assert max_err(model.forward([x.numpy()])[0], torch_out(m, (x,))[0]) < TOL


@pytest.mark.parametrize("opset", OPSETS)
def test_depthwise_dilated_conv(tmp_path, opset):
    torch.manual_seed(5)
    m = Tcn()
    f = export(m, (torch.randn(2, 6, 10),), tmp_path / "tcn.onnx", opset, (["x"], ["y"]),
               {"x": {0: "B", 2: "T"}, "y": {0: "B", 2: "T"}})
    model = fixq.Model.load_onnx(f)
    assert ops(model) == ["conv1d", "relu", "conv1d"]
    dw = model.nodes[0]
    assert (dw["kernel"], dw["dilation"], dw["groups"]) == (3, 2, 6)
    assert [v["layout"] for v in model.inputs + model.outputs] == ["BCT", "BCT"]
    x = torch.randn(3, 6, 15)
    assert max_err(model.forward([x.numpy()])[0], torch_out(m, (x,))[0]) < TOL


# ---- GRUs as tf2onnx writes them (onnx.helper)


def helper_gru(path, T="T", layout=0, lbr=0, direction=None, extra=None, seed=6):
    """X -> GRU (reset-before unless lbr = 1) -> Squeeze of the direction axis -> y."""
    rng = np.random.default_rng(seed)
    C, H = 4, 5
    W = (rng.standard_normal((1, 3 * H, C)) * 0.4).astype(np.float32)
    R = (rng.standard_normal((1, 3 * H, H)) * 0.4).astype(np.float32)
    B = (rng.standard_normal((1, 6 * H)) * 0.2).astype(np.float32)
    attrs = {"hidden_size": H, "linear_before_reset": lbr}
    if layout:
        attrs["layout"] = layout
    if direction:
        attrs["direction"] = direction
    x_shape = ["N", T, C] if layout else [T, "N", C]
    nodes = [helper.make_node("GRU", ["x", "W", "R", "B"], ["Y"], name="gru/GRU", **attrs),
             helper.make_node("Squeeze", ["Y", "axes"], ["y"], name="gru/Squeeze")]
    g = helper.make_graph(nodes, "tf2onnx", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(W, "W"), numpy_helper.from_array(R, "R"), numpy_helper.from_array(B, "B"),
                           numpy_helper.from_array(np.array([2 if layout else 1], np.int64), "axes")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return W, R, B


def test_tf2onnx_reset_before_gru(tmp_path):
    W, R, B = helper_gru(tmp_path / "rb.onnx")
    model = fixq.Model.load_onnx(tmp_path / "rb.onnx")
    assert ops(model) == ["gru"] and model.nodes[0]["gru"]["cell_kind"] == "reset_before"
    assert [v["layout"] for v in model.inputs + model.outputs] == ["TBC", "TBC"]
    x = np.random.default_rng(7).standard_normal((8, 3, 4)).astype(np.float32)
    want = onnx_gru(x, W, R, B, 0)[:, 0]
    assert max_err(model.forward([x])[0], want) < TOL


def test_gru_layout_1(tmp_path):
    W, R, B = helper_gru(tmp_path / "l1.onnx", layout=1, lbr=1)
    model = fixq.Model.load_onnx(tmp_path / "l1.onnx")
    assert ops(model) == ["gru"] and model.nodes[0]["gru"]["cell_kind"] == "reset_after"
    assert [v["layout"] for v in model.inputs + model.outputs] == ["BTC", "BTC"]
    x = np.random.default_rng(8).standard_normal((3, 8, 4)).astype(np.float32)
    want = onnx_gru(x.transpose(1, 0, 2), W, R, B, 1)[:, 0].transpose(1, 0, 2)
    assert max_err(model.forward([x])[0], want) < TOL


# ---- refusals: one line naming the node and its op type


class Wrap(nn.Module):
    def __init__(self, fn, *mods):
        super().__init__()
        self.mods = nn.ModuleList(mods)
        self.fn = fn

    def forward(self, x):
        return self.fn(x, *self.mods)


TORCH_REFUSALS = [
    # (name, module, input [B, T, C] or [B, C, T], node op, message part)
    ("stride", Wrap(lambda x, c: c(x), nn.Conv1d(4, 4, 3, stride=2)), (2, 4, 9), "Conv",
     "stride 2 is not supported; fixq supports stride 1"),
    ("not_causal", Wrap(lambda x, c: c(x), nn.Conv1d(4, 4, 3, padding=1)), (2, 4, 9), "Conv", "is not causal"),
    ("conv2d", Wrap(lambda x, c: c(x.unsqueeze(1)).squeeze(1), nn.Conv2d(1, 1, 1)), (2, 4, 9), "Conv",
     "2-D convolution; fixq supports 1-D"),
    ("lstm", Wrap(lambda x, l: l(x)[0], nn.LSTM(4, 4, batch_first=True)), (2, 9, 4), "LSTM",
     "operator LSTM is not supported; fixq imports Gemm"),
    ("sub", Wrap(lambda x: torch.tanh(x) - torch.sigmoid(x)), (2, 9, 4), "Sub", "fixq supports Add and Mul"),
    ("add_const", Wrap(lambda x: torch.tanh(x) + 1.0), (2, 9, 4), "Add", "adds a constant"),
    ("time_slice", Wrap(lambda x: torch.tanh(x[:, 1:])), (2, 9, 4), "Slice", "slices the time axis"),
    ("merge_bt", Wrap(lambda x, l: l(x.reshape(-1, 4)), nn.Linear(4, 3)), (2, 9, 4), "Reshape",
     "fixq supports reshapes that keep the batch, time and feature axes apart"),
    ("gather", Wrap(lambda x: torch.tanh(x[:, :, 0])), (2, 9, 4), "Gather", "Gather of a sequence's last frame only"),
    ("softmax_time", Wrap(lambda x: torch.softmax(x, 1)), (2, 9, 4), "Softmax", "fixq supports Softmax over the features"),
    ("reflect", Wrap(lambda x, c: c(nn.functional.pad(x, (2, 0), mode="reflect")), nn.Conv1d(4, 4, 3)), (2, 4, 9),
     "Pad", "mode 'reflect' is not supported"),
    ("pad_right", Wrap(lambda x, c: c(nn.functional.pad(x, (1, 1))), nn.Conv1d(4, 4, 3)), (2, 4, 9), "Pad",
     "on its left only"),
    ("matmul_data", Wrap(lambda x: torch.matmul(x, x.transpose(1, 2))), (2, 9, 4), "MatMul", "multiplies two computed"),
    ("exp", Wrap(lambda x: torch.exp(x)), (2, 9, 4), "Exp", "operator Exp is not supported"),
]


@pytest.mark.parametrize("name,module,shape,op,message", TORCH_REFUSALS, ids=[r[0] for r in TORCH_REFUSALS])
def test_refusals_of_torch_models(tmp_path, name, module, shape, op, message):
    f = tmp_path / f"{name}.onnx"
    dyn_axis = 2 if op in ("Conv", "Pad") else 1
    export(module, (torch.randn(*shape),), f, 13, (["x"], ["y"]), {"x": {0: "B", dyn_axis: "T"}})
    with pytest.raises(ValueError) as e:
        fixq.Model.load_onnx(f)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"load_model_onnx: {f}: node '/"), msg
    assert f"({op}): " in msg and message in msg, msg


def graph_model(path, nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), str(path))
    return path


X = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "T", 4])
Y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)


def test_refusals_of_graphs(tmp_path):
    def refused(nodes, message, inits=(), op=None, inputs=(X,)):
        f = graph_model(tmp_path / "m.onnx", nodes, list(inputs), [Y], inits)
        with pytest.raises(ValueError) as e:
            fixq.Model.load_onnx(f)
        msg = str(e.value)
        assert "\n" not in msg and message in msg, msg
        if op:
            assert f"({op}): " in msg, msg

    refused([helper.make_node("Tanh", ["nowhere"], ["y"], name="t")], "node 't' (Tanh): reads 'nowhere', which no node computes")
    refused([helper.make_node("Tanh", ["a"], ["y"], name="t"), helper.make_node("Sigmoid", ["y"], ["a"], name="s")],
            "which a later node computes (a cycle, or nodes out of topological order)")
    refused([helper.make_node("Relu", ["x"], ["y"], name="c", domain="com.example")], "operator domain 'com.example'")
    # A GRU that runs in reverse only, and one with sequence_lens.
    rng = np.random.default_rng(0)
    w = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
         for n, s in (("W", (1, 15, 4)), ("R", (1, 15, 5)))]
    xt = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["T", "B", 4])
    refused([helper.make_node("GRU", ["x", "W", "R"], ["Y"], name="g", hidden_size=5, direction="reverse"),
             helper.make_node("Squeeze", ["Y"], ["y"], name="s")], "runs in direction \"reverse\" only", w, inputs=(xt,))
    lens = numpy_helper.from_array(np.array([3, 2], np.int32), "lens")
    refused([helper.make_node("GRU", ["x", "W", "R", "", "lens"], ["Y"], name="g", hidden_size=5),
             helper.make_node("Squeeze", ["Y"], ["y"], name="s")], "node 'g' (GRU): has sequence_lens", w + [lens],
            inputs=(xt,))
    # Weights that are not finite (Model::validate), and a Mul by a constant.
    nan = np.full((4, 3), np.nan, np.float32)
    refused([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "node 'mm' (linear): weight or bias is not finite",
            [numpy_helper.from_array(nan, "w")])
    refused([helper.make_node("Mul", ["x", "k"], ["y"], name="mul")], "node 'mul' (Mul): computes with a constant",
            [numpy_helper.from_array(np.ones(4, np.float32), "k")])
    # A graph input that is no float tensor; a graph output that is a constant.
    xi = helper.make_tensor_value_info("x", TensorProto.INT64, ["B", "T", 4])
    refused([helper.make_node("Relu", ["x"], ["y"], name="r")], "graph input 'x' is not a float32 tensor", inputs=(xi,))
    refused([helper.make_node("Identity", ["k"], ["y"], name="i")], "graph output 'y' is a constant",
            [numpy_helper.from_array(np.ones(4, np.float32), "k")])

    # An If whose condition depends on the data's time size; a Flatten joining batch and time.
    one = numpy_helper.from_array(np.array(1, np.int64), "one")
    branch = lambda op, out: helper.make_graph([helper.make_node(op, ["x"], [out], name=out)], out, [],
                                                [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)])
    refused([helper.make_node("Shape", ["x"], ["s"], name="shape"), helper.make_node("Gather", ["s", "one"], ["t"], name="g"),
             helper.make_node("Equal", ["t", "one"], ["c"], name="eq"),
             helper.make_node("If", ["c"], ["y"], name="if", then_branch=branch("Relu", "yt"), else_branch=branch("Tanh", "ye"))],
            "node 'eq' (Equal): Equal compares the batch or time size of the data", [one])
    refused([helper.make_node("Flatten", ["x"], ["y"], name="fl", axis=2)],
            "node 'fl' (Flatten): flattens [batch, time, features] at axis 2; fixq supports a Flatten that keeps")


def test_if_on_a_constant_condition(tmp_path):
    """An If on a condition that folds (a fixed extent, or a size compared with itself) is its
    taken branch; the branch reads the outer graph's tensors by name."""
    branch = lambda op, out: helper.make_graph([helper.make_node(op, ["x"], [out], name=out)], out, [],
                                                [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)])
    four = numpy_helper.from_array(np.array(4, np.int64), "four")
    two = numpy_helper.from_array(np.array(2, np.int64), "two")
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    # Equal(x.shape[2], 4) holds: the then-branch (Relu); Equal(x.shape[2], 2) does not: the else (Tanh).
    for k, (against, want) in enumerate((("four", "relu"), ("two", "tanh"))):
        nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape"),
                 helper.make_node("Gather", ["s", "two"], ["c4"], name="g"),
                 helper.make_node("Equal", ["c4", against], ["c"], name="eq"),
                 helper.make_node("If", ["c"], ["y"], name="if", then_branch=branch("Relu", "yt"),
                                  else_branch=branch("Tanh", "ye"))]
        f = graph_model(tmp_path / f"if{k}.onnx", nodes, [X], [Y], [four, two])
        model = fixq.Model.load_onnx(f)
        assert ops(model) == [want]
        ref = np.maximum(x, 0) if want == "relu" else np.tanh(x)
        assert max_err(model.forward([x])[0], ref) < TOL
    # A symbolic size equals itself: Equal(T, T) takes the then-branch.
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape"),
             helper.make_node("Gather", ["s", "one"], ["t"], name="g"),
             helper.make_node("Equal", ["t", "t"], ["c"], name="eq"),
             helper.make_node("If", ["c"], ["y"], name="if", then_branch=branch("Relu", "yt"), else_branch=branch("Tanh", "ye"))]
    f = graph_model(tmp_path / "if_t.onnx", nodes, [X], [Y], [numpy_helper.from_array(np.array(1, np.int64), "one")])
    assert ops(fixq.Model.load_onnx(f)) == ["relu"]


def test_refusals_of_files(tmp_path):
    torch.manual_seed(0)
    f = export(Glu(), (torch.randn(2, 5, 8),), tmp_path / "glu.onnx", 13, (["x"], ["y"]), {"x": {0: "B", 1: "T"}})
    data = f.read_bytes()
    (tmp_path / "cut.onnx").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="not an ONNX model"):
        fixq.Model.load_onnx(tmp_path / "cut.onnx")
    m = onnx.load(str(f))
    onnx.save(m, str(tmp_path / "ext.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
              location="ext.data", size_threshold=0)
    with pytest.raises(ValueError, match="external file"):
        fixq.Model.load_onnx(tmp_path / "ext.onnx")
    with pytest.raises(OSError):
        fixq.Model.load_onnx(tmp_path / "missing.onnx")


def test_layout_operators_fold_away(tmp_path):
    """Unsqueeze / Squeeze / Reshape / Identity on the data, a [T, C] input without batch,
    and Gemm with transB = 0, alpha and beta (onnx.helper)."""
    rng = np.random.default_rng(9)
    w, b = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    nodes = [helper.make_node("Unsqueeze", ["x", "ax0"], ["u"], name="u"),
             helper.make_node("Squeeze", ["u", "ax0"], ["s"], name="s"),
             helper.make_node("Reshape", ["s", "shape"], ["r"], name="r"),
             helper.make_node("Identity", ["r"], ["i"], name="i"),
             helper.make_node("Gemm", ["i", "w", "b"], ["g"], name="gemm", alpha=0.5, beta=2.0),
             helper.make_node("Relu", ["g"], ["y"], name="relu")]
    inits = [numpy_helper.from_array(np.array([0], np.int64), "ax0"), numpy_helper.from_array(np.array([0, 4], np.int64), "shape"),
             numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
    xt = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["T", 4])
    f = graph_model(tmp_path / "tc.onnx", nodes, [xt], [Y], inits)
    model = fixq.Model.load_onnx(f)
    assert ops(model) == ["linear", "relu"]
    assert [v["layout"] for v in model.inputs + model.outputs] == ["TC", "TC"]
    x = rng.standard_normal((7, 4)).astype(np.float32)
    assert max_err(model.forward([x])[0], np.maximum(0.5 * x @ w + 2.0 * b, 0)) < TOL


def test_zero_constant_initial_state_and_refusals(tmp_path):
    """tf2onnx's initial_h of constant zeros is no initial state; other constants are refused."""
    rng = np.random.default_rng(10)
    C, H = 3, 4
    W, R = (rng.standard_normal((1, 3 * H, C)) * 0.5).astype(np.float32), (rng.standard_normal((1, 3 * H, H)) * 0.5).astype(np.float32)
    xt = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["T", 2, C])

    def model(h0):
        nodes = [helper.make_node("GRU", ["x", "W", "R", "", "", "h0"], ["Y"], name="gru", hidden_size=H),
                 helper.make_node("Squeeze", ["Y", "axes"], ["y"], name="sq")]
        inits = [numpy_helper.from_array(W, "W"), numpy_helper.from_array(R, "R"), numpy_helper.from_array(h0, "h0"),
                 numpy_helper.from_array(np.array([1], np.int64), "axes")]
        return graph_model(tmp_path / "h0.onnx", nodes, [xt], [Y], inits)

    m = fixq.Model.load_onnx(model(np.zeros((1, 2, H), np.float32)))
    assert m.nodes[0]["inputs"] == ["x", None]
    x = rng.standard_normal((5, 2, C)).astype(np.float32)
    assert max_err(m.forward([x])[0], onnx_gru(x, W, R, np.zeros((1, 6 * H), np.float32), 0)[:, 0]) < TOL
    with pytest.raises(ValueError, match=r"node 'gru' \(GRU\): its initial_h is a constant other than zeros"):
        fixq.Model.load_onnx(model(np.ones((1, 2, H), np.float32)))


def test_onnx_reference_evaluator(tmp_path):
    """onnx's own reference evaluator (onnx >= 1.13; Debian 12's 1.12 has none: skipped)."""
    reference = pytest.importorskip("onnx.reference")
    torch.manual_seed(0)
    f = export(RNNoise(), (torch.randn(2, 9, 8),), tmp_path / "rnnoise.onnx", 17, (["x"], ["gain", "vad"]),
               {"x": {0: "B", 1: "T"}, "gain": {0: "B", 1: "T"}, "vad": {0: "B", 1: "T"}})
    x = np.random.default_rng(11).standard_normal((2, 11, 8)).astype(np.float32)
    want = reference.ReferenceEvaluator(str(f)).run(None, {"x": x})
    for g, w in zip(fixq.Model.load_onnx(f).forward([x]), want):
        assert max_err(g, w) < TOL


def test_refusals_of_attributes(tmp_path):
    """The attribute and operand refusals of each computing operator, in graphs made with onnx.helper."""
    rng = np.random.default_rng(12)

    def const(name, a):
        return numpy_helper.from_array(np.asarray(a), name)

    xc = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 4, "T"])  # channels first
    w3 = const("w", rng.standard_normal((4, 4, 3)).astype(np.float32))
    cases = [
        ("Gemm", [helper.make_node("Gemm", ["x", "w"], ["y"], name="n", transA=1)], [const("w", np.ones((4, 3), np.float32))],
         X, "transA = 1 is not supported"),
        ("Conv", [helper.make_node("Conv", ["x", "w"], ["y"], name="n", auto_pad="SAME_UPPER")], [w3], xc,
         "auto_pad SAME_UPPER is not supported"),
        ("Conv", [helper.make_node("Conv", ["x", "w"], ["y"], name="n", pads=[2, 0], group=3)], [w3], xc, "has group 3"),
        ("Concat", [helper.make_node("Concat", ["x", "x"], ["y"], name="n", axis=1)], [], X,
         "fixq supports Concat of the features"),
        ("Split", [helper.make_node("Split", ["x"], ["y", "z"], name="n", axis=1)], [], X, "fixq supports Split of the features"),
        ("Cast", [helper.make_node("Cast", ["x"], ["y"], name="n", to=TensorProto.INT64)], [], X,
         "casts the data to type 7; fixq's models compute in float32"),
        ("ConstantOfShape", [helper.make_node("Shape", ["x"], ["s"], name="shape"),
                             helper.make_node("ConstantOfShape", ["s"], ["c"], name="n",
                                              value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
                             helper.make_node("Add", ["x", "c"], ["y"], name="add")], [], X,
         "fills a tensor of the data's shape with other values than 0"),
        ("Pad", [helper.make_node("Pad", ["x", "p", "v"], ["y"], name="n")],
         [const("p", np.array([0, 2, 0, 0, 0, 0], np.int64)), const("v", np.array(1.0, np.float32))], xc,
         "pads with 1; fixq's Conv1d pads with zeros"),
        ("Slice", [helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"], name="n")],
         [const(k, np.array([v], np.int64)) for k, v in (("s", 0), ("e", 4), ("a", 2), ("st", 2))], X,
         "slices the features with step 2"),
        ("Reshape", [helper.make_node("Reshape", ["x", "s"], ["y"], name="n")], [const("s", np.array([0, 0, 2, 2], np.int64))],
         X, "fixq supports reshapes that keep the batch, time and feature axes apart"),
        ("Squeeze", [helper.make_node("Squeeze", ["x", "a"], ["y"], name="n")], [const("a", np.array([2], np.int64))], X,
         "which is not of extent 1"),
        ("MatMul", [helper.make_node("MatMul", ["x", "w"], ["y"], name="n")], [const("w", np.ones((5, 3), np.float32))], X,
         "its weight has shape [5, 3]; fixq needs a float [4, out_features]"),
        ("Transpose", [helper.make_node("Transpose", ["x"], ["y"], name="n", perm=[0, 0, 1])], [], X,
         "perm is not a permutation of the 3 axes"),
    ]
    for op, nodes, inits, x, message in cases:
        f = graph_model(tmp_path / "m.onnx", nodes, [x], [Y], inits)
        with pytest.raises(ValueError) as e:
            fixq.Model.load_onnx(f)
        msg = str(e.value)
        assert "\n" not in msg and f"node 'n' ({op}): " in msg and message in msg, (op, msg)


def test_refusals_of_gru_states(tmp_path):
    """h_n of a bidirectional GRU read as a frame, and a GRU state read by another operator."""
    torch.manual_seed(0)

    class BiLast(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(3, 4, bidirectional=True)

        def forward(self, x):
            return torch.tanh(self.gru(x)[1][-1])

    class StateTanh(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(3, 4, num_layers=2)

        def forward(self, x):
            return torch.tanh(self.gru(x)[1])

    for module, message in ((BiLast(), "fixq reads a final state as a graph output, or as h_n[-1] of a unidirectional GRU"),
                            (StateTanh(), "reads a GRU state; fixq supports Tanh on sequences")):
        f = export(module, (torch.randn(5, 2, 3),), tmp_path / "s.onnx", 13, (["x"], ["y"]), {"x": {0: "T", 1: "B"}})
        with pytest.raises(ValueError) as e:
            fixq.Model.load_onnx(f)
        assert "\n" not in str(e.value) and message in str(e.value), str(e.value)
