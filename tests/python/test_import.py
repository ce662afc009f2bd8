"""Models as users have them: a plain state_dict in safetensors (F32, F16, BF16; a GRU
inside a whole model picked by prefix) and ONNX exports of nn.GRU, through the Python
loader and the command line, against torch.nn.GRU's own outputs; malformed files are
refused with messages that name the problem."""

import re
import subprocess

import numpy as np
import onnx
import pytest
import torch

import fixq
from conftest import FIXQ_BIN, make_torch_gru, run_cli, sequences
from model_files import export_onnx, save_state_dict, torch_forward

torch.set_num_threads(1)


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.GRU(5, 6, num_layers=2, bidirectional=True)

    def forward(self, x):
        return self.rnn(x)[0]


class Speaker(torch.nn.Module):
    """A whole model: a projection, an encoder GRU, a decoder GRU fed by the encoder."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.proj = torch.nn.Linear(4, 5)
        self.encoder = Encoder()
        self.decoder = torch.nn.GRU(12, 3)

    def forward(self, x):
        return self.decoder(self.encoder(self.proj(x)))[0]


def cli_error(*args) -> str:
    r = subprocess.run([str(FIXQ_BIN), *map(str, args)], capture_output=True, text=True)
    assert r.returncode != 0, f"fixq {args} succeeded"
    assert r.stdout == "" and len(r.stderr.splitlines()) == 1 and r.stderr.startswith("fixq: error: "), r.stderr
    return r.stderr


def assert_matches_torch(model, gru, x, atol=1e-5):
    y_ref, h_ref = torch_forward(gru, x)
    y, h = model.forward(x)
    np.testing.assert_allclose(y, y_ref, rtol=0, atol=atol)
    np.testing.assert_allclose(h, h_ref, rtol=0, atol=atol)


# ---- plain safetensors state_dicts ----------------------------------------------------------

@pytest.mark.parametrize("layers,bidir,bias", [(1, False, True), (2, True, True), (3, False, False)])
def test_plain_state_dict_matches_torch(tmp_path, layers, bidir, bias):
    torch.manual_seed(layers)
    gru = torch.nn.GRU(5, 7, num_layers=layers, bidirectional=bidir, bias=bias).eval()
    save_state_dict(tmp_path / "gru.safetensors", gru.state_dict())
    model = fixq.GruModel.load(tmp_path / "gru.safetensors")
    assert (model.input_size, model.hidden_size, model.num_layers, model.bidirectional) == (5, 7, layers, bidir)
    assert_matches_torch(model, gru, sequences(9, 3, 5, seed=layers))


@pytest.mark.parametrize("dtype", ["F16", "BF16"])
def test_half_precision_state_dicts_match_torch_on_the_stored_weights(tmp_path, dtype):
    gru = make_torch_gru(4, 8, num_layers=2, bidirectional=True, seed=11)
    stored = save_state_dict(tmp_path / "gru.safetensors", gru.state_dict(), dtype=dtype)
    rounded = make_torch_gru(4, 8, num_layers=2, bidirectional=True)
    rounded.load_state_dict(stored)  # the weights the file holds, exactly, in float32
    model = fixq.GruModel.load(str(tmp_path / "gru.safetensors"))
    assert_matches_torch(model, rounded, sequences(6, 2, 4, seed=3))


def test_prefix_picks_one_gru_of_a_whole_model(tmp_path):
    m = Speaker().eval()
    path = tmp_path / "speaker.safetensors"
    save_state_dict(path, m.state_dict(), metadata={"format": "pt"})
    x = sequences(7, 2, 5, seed=4)
    for prefix in ("encoder.rnn.", "encoder.rnn"):
        assert_matches_torch(fixq.GruModel.load(path, prefix=prefix), m.encoder.rnn, x)
    assert_matches_torch(fixq.GruModel.load(path, "decoder."), m.decoder, sequences(7, 2, 12, seed=5))
    with pytest.raises(ValueError, match=r"holds 2 GRUs; pick one with --prefix.*'decoder\.', 'encoder\.rnn\.'"):
        fixq.GruModel.load(path)
    with pytest.raises(ValueError, match=r"prefix 'encoder\.cnn\.' matches no GRU tensors.*'decoder\.', 'encoder\.rnn\.'"):
        fixq.GruModel.load(path, prefix="encoder.cnn.")


def test_lstm_and_rnn_are_told_apart(tmp_path):
    torch.manual_seed(0)
    sd = {f"lstm.{k}": v for k, v in torch.nn.LSTM(3, 4).state_dict().items()}
    sd.update({f"gru.{k}": v for k, v in torch.nn.GRU(3, 4).state_dict().items()})
    save_state_dict(tmp_path / "m.safetensors", sd)
    assert fixq.GruModel.load(tmp_path / "m.safetensors").hidden_size == 4  # the only GRU
    with pytest.raises(ValueError, match=r"'lstm\.' is not an nn\.GRU: .*\[16, 4\] = \[4H, H\]: an nn\.LSTM"):
        fixq.GruModel.load(tmp_path / "m.safetensors", prefix="lstm")
    save_state_dict(tmp_path / "l.safetensors", torch.nn.LSTM(3, 4).state_dict())
    with pytest.raises(ValueError, match=r"no nn\.GRU state_dict in this file"):
        fixq.GruModel.load(tmp_path / "l.safetensors")


def test_malformed_state_dicts_are_refused_by_name(tmp_path):
    gru = make_torch_gru(3, 4, num_layers=2, seed=1)
    sd = {f"rnn.{k}": v for k, v in gru.state_dict().items()}
    path = tmp_path / "bad.safetensors"

    wrong = dict(sd, **{"rnn.weight_ih_l1": torch.zeros(12, 5)})
    save_state_dict(path, wrong)
    with pytest.raises(ValueError, match=r"GRU at prefix 'rnn\.'.*'weight_ih_l1' has shape \[12, 5\], expected \[12, 4\]"):
        fixq.GruModel.load(path)
    missing = {k: v for k, v in sd.items() if k != "rnn.weight_hh_l1"}
    save_state_dict(path, missing)
    with pytest.raises(ValueError, match=r"missing tensor 'weight_hh_l1'"):
        fixq.GruModel.load(path)
    no_bias = {k: v for k, v in sd.items() if k != "rnn.bias_hh_l0"}
    save_state_dict(path, no_bias)
    with pytest.raises(ValueError, match=r"missing tensor 'rnn\.bias_hh_l0'.*all of them or, with bias=False, none"):
        fixq.GruModel.load(path)
    nan = dict(sd, **{"rnn.bias_ih_l0": torch.full((12,), float("nan"))})
    save_state_dict(path, nan)
    with pytest.raises(ValueError, match=r"not finite"):
        fixq.GruModel.load(path)
    # The command line says the same in one line.
    save_state_dict(path, missing)
    np.save(tmp_path / "x.npy", sequences(2, 1, 3, seed=0))
    assert "missing tensor 'weight_hh_l1'" in cli_error("gru", "run", "--model", path, "--input", tmp_path / "x.npy",
                                                       "-o", tmp_path / "y.npy")
    save_state_dict(path, sd)
    assert "prefix 'decoder' matches no GRU tensors" in cli_error("gru", "run", "--model", path, "--prefix", "decoder",
                                                                  "--input", tmp_path / "x.npy", "-o", tmp_path / "y.npy")


def test_fixqs_own_files_read_as_before(small_gru_files):
    model = fixq.GruModel.load(small_gru_files["model"])
    assert_matches_torch(model, small_gru_files["torch"], small_gru_files["x"])
    with pytest.raises(ValueError, match=r"--prefix 'gru' does not apply: this is fixq's own model file"):
        fixq.GruModel.load(small_gru_files["model"], prefix="gru")


def test_cli_takes_plain_state_dicts_with_a_prefix(tmp_path):
    m = Speaker().eval()
    save_state_dict(tmp_path / "speaker.safetensors", m.state_dict())
    x = sequences(8, 3, 5, seed=6)
    np.save(tmp_path / "x.npy", x)
    run_cli("gru", "run", "--model", tmp_path / "speaker.safetensors", "--prefix", "encoder.rnn.", "--input",
            tmp_path / "x.npy", "-o", tmp_path / "y.npy")
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), torch_forward(m.encoder.rnn, x)[0], rtol=0, atol=1e-5)
    run_cli("gru", "quantize", "--model", tmp_path / "speaker.safetensors", "--prefix", "encoder.rnn", "--calib",
            tmp_path / "x.npy", "-o", tmp_path / "q.fixq")
    out = run_cli("gru", "eval", "--model", tmp_path / "q.fixq", "--float", tmp_path / "speaker.safetensors",
                  "--prefix", "encoder.rnn", "--input", tmp_path / "x.npy")
    assert float(re.search(r"cosine ([0-9.]+)", out).group(1)) > 0.99


# ---- ONNX ------------------------------------------------------------------------------------

@pytest.mark.parametrize("layers,bidir", [(1, False), (1, True), (2, False), (2, True), (3, True)])
def test_onnx_export_matches_torch(tmp_path, layers, bidir):
    gru = make_torch_gru(5, 7, num_layers=layers, bidirectional=bidir, seed=20 + layers)
    x = sequences(6, 3, 5, seed=layers)
    path = export_onnx(gru, torch.from_numpy(x), tmp_path / "gru.onnx")
    model = fixq.GruModel.load(path)
    assert (model.input_size, model.hidden_size, model.num_layers, model.bidirectional) == (5, 7, layers, bidir)
    assert_matches_torch(model, gru, sequences(9, 2, 5, seed=7))


def test_onnx_of_a_whole_model_and_batch_first(tmp_path):
    m = Speaker().eval()
    path = export_onnx(m, torch.randn(4, 2, 4), tmp_path / "speaker.onnx")
    x = sequences(5, 2, 5, seed=8)
    assert_matches_torch(fixq.GruModel.load(path, prefix="encoder.rnn."), m.encoder.rnn, x)
    assert_matches_torch(fixq.GruModel.load(path, prefix="/decoder/"), m.decoder, sequences(5, 2, 12, seed=9))
    with pytest.raises(ValueError, match=r"holds 2 separate GRUs; pick one with --prefix.*'encoder\.rnn\.' \(GRU node "
                                         r"'/encoder/rnn/GRU', 2 layers\), 'decoder\.'"):
        fixq.GruModel.load(path)
    with pytest.raises(ValueError, match=r"prefix 'encoder\.gru' matches no GRU; the GRUs of the model"):
        fixq.GruModel.load(path, prefix="encoder.gru")

    bf = make_torch_gru(3, 4, num_layers=2, batch_first=True, seed=2)
    path = export_onnx(bf, torch.randn(2, 5, 3), tmp_path / "bf.onnx")
    xb = sequences(2, 6, 3, seed=1)  # [B, T, C]
    y, _ = fixq.GruModel.load(path).forward(xb, batch_first=True)
    np.testing.assert_allclose(y, torch_forward(bf, xb)[0], rtol=0, atol=1e-5)


def test_cli_runs_onnx_models(tmp_path):
    gru = make_torch_gru(4, 6, num_layers=2, bidirectional=True, seed=4)
    x = sequences(7, 2, 4, seed=2)
    export_onnx(gru, torch.from_numpy(x), tmp_path / "gru.onnx")
    np.save(tmp_path / "x.npy", x)
    run_cli("gru", "run", "--model", tmp_path / "gru.onnx", "--input", tmp_path / "x.npy", "-o", tmp_path / "y.npy")
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), torch_forward(gru, x)[0], rtol=0, atol=1e-5)


def _edited(tmp_path, src, edit, name="bad.onnx"):
    m = onnx.load(str(src))
    edit(m)
    onnx.save(m, str(tmp_path / name))
    return tmp_path / name


def _gru_nodes(m):
    return [n for n in m.graph.node if n.op_type == "GRU"]


def test_malformed_onnx_models_are_refused_by_name(tmp_path):
    gru = make_torch_gru(3, 4, num_layers=1, seed=6)
    good = export_onnx(gru, torch.randn(2, 1, 3), tmp_path / "good.onnx")

    def linear_before_reset_3(m):  # 0 is the reset-before cell (test_onnx_reset_before.py)
        for a in _gru_nodes(m)[0].attribute:
            if a.name == "linear_before_reset":
                a.i = 3
    with pytest.raises(ValueError, match=r"linear_before_reset = 3; ONNX defines 0 \(reset-before\) or 1"):
        fixq.GruModel.load(_edited(tmp_path, good, linear_before_reset_3))

    def wrong_shape(m):
        w = next(i for i in m.graph.initializer if i.name == _gru_nodes(m)[0].input[1])
        w.dims[1] = 11
        w.raw_data = w.raw_data[: 1 * 11 * 3 * 4]
    with pytest.raises(ValueError, match=r"W '.*' has shape \[1, 11, 3\], expected \[1, 12, input_size\]"):
        fixq.GruModel.load(_edited(tmp_path, good, wrong_shape))

    def missing_weight(m):
        name = _gru_nodes(m)[0].input[2]
        keep = [i for i in m.graph.initializer if i.name != name]
        del m.graph.initializer[:]
        m.graph.initializer.extend(keep)
    with pytest.raises(ValueError, match=r"its R '.*' is computed by the graph or fed as an input, not a constant"):
        fixq.GruModel.load(_edited(tmp_path, good, missing_weight))

    def reverse_only(m):
        _gru_nodes(m)[0].attribute.append(onnx.helper.make_attribute("direction", "reverse"))
        attrs = [a for a in _gru_nodes(m)[0].attribute if not (a.name == "direction" and a.s == b"forward")]
        del _gru_nodes(m)[0].attribute[:]
        _gru_nodes(m)[0].attribute.extend(attrs)
    with pytest.raises(ValueError, match=r"direction \"reverse\" only"):
        fixq.GruModel.load(_edited(tmp_path, good, reverse_only))

    def short_raw_data(m):
        b = next(i for i in m.graph.initializer if i.name == _gru_nodes(m)[0].input[3])
        b.raw_data = b.raw_data[:-4]
    with pytest.raises(ValueError, match=r"raw_data holds 92 bytes, but 24 values of FLOAT need 96"):
        fixq.GruModel.load(_edited(tmp_path, good, short_raw_data))

    with pytest.raises(ValueError, match=r"prefix 'encoder' matches no GRU"):
        fixq.GruModel.load(good, prefix="encoder")
    data = good.read_bytes()
    (tmp_path / "cut.onnx").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"not an ONNX model: the bytes do not parse"):
        fixq.GruModel.load(tmp_path / "cut.onnx")
    (tmp_path / "none.onnx").write_bytes(b"")
    with pytest.raises(ValueError, match=r"no graph|no GRU node"):
        fixq.GruModel.load(tmp_path / "none.onnx")
    np.save(tmp_path / "x.npy", sequences(2, 1, 3, seed=0))
    assert "raw_data holds 92 bytes" in cli_error("gru", "quantize", "--model", tmp_path / "bad.onnx", "--calib",
                                                  tmp_path / "x.npy", "-o", tmp_path / "q.fixq")
    assert not (tmp_path / "q.fixq").exists()


def test_hand_built_onnx_gru_follows_the_operator_spec(tmp_path):
    """A GRU node written with onnx.helper from the operator's definition (gates z, r, h;
    B = [Wb, Rb]; weights in float_data, FLOAT16 for R), not by torch's exporter: the
    same weights moved into nn.GRU's order (r, z, n) must give torch's outputs."""
    from onnx import TensorProto, helper

    rng = np.random.default_rng(12)
    C, H, D = 3, 5, 2
    W = rng.standard_normal((D, 3 * H, C)).astype(np.float32) * 0.5
    R = (rng.standard_normal((D, 3 * H, H)) * 0.5).astype(np.float16).astype(np.float32)
    B = rng.standard_normal((D, 6 * H)).astype(np.float32) * 0.5
    node = helper.make_node("GRU", ["x", "W", "R", "B"], ["y"], hidden_size=H, direction="bidirectional",
                            linear_before_reset=1, name="my_gru")
    inits = [helper.make_tensor("W", TensorProto.FLOAT, W.shape, W.ravel().tolist()),
             helper.make_tensor("R", TensorProto.FLOAT16, R.shape, R.ravel().tolist()),  # stored as int32_data bits
             helper.make_tensor("B", TensorProto.FLOAT, B.shape, B.ravel().tolist())]
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["T", "B", C])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), str(tmp_path / "h.onnx"))

    zrh_to_rzn = lambda a: np.concatenate([a[H:2 * H], a[:H], a[2 * H:]])  # noqa: E731
    gru = torch.nn.GRU(C, H, bidirectional=True)
    sd = {}
    for d, sfx in enumerate(["", "_reverse"]):
        sd["weight_ih_l0" + sfx] = torch.from_numpy(zrh_to_rzn(W[d]))
        sd["weight_hh_l0" + sfx] = torch.from_numpy(zrh_to_rzn(R[d]))
        sd["bias_ih_l0" + sfx] = torch.from_numpy(zrh_to_rzn(B[d, :3 * H]))
        sd["bias_hh_l0" + sfx] = torch.from_numpy(zrh_to_rzn(B[d, 3 * H:]))
    gru.load_state_dict(sd)
    model = fixq.GruModel.load(tmp_path / "h.onnx", prefix="my_gru")
    assert_matches_torch(model, gru, sequences(6, 2, C, seed=13))
