"""The float and the integer GRU through the Python API, against torch.nn.GRU and against
the fixq command-line tool (which reads the same files)."""

import errno
import json

import numpy as np
import pytest
import torch

import fixq
from conftest import export_float_model, make_torch_gru, run_cli, sequences


def torch_run(gru, x, h0=None, lengths=None, batch_first=False):
    """torch's own result, with pack/pad for lengths as nn.GRU users do."""
    xt = torch.from_numpy(x)
    h = None if h0 is None else torch.from_numpy(h0)
    with torch.no_grad():
        if lengths is None:
            y, hn = gru(xt, h)
        else:
            packed = torch.nn.utils.rnn.pack_padded_sequence(xt, torch.tensor(lengths), batch_first=batch_first,
                                                             enforce_sorted=False)
            yp, hn = gru(packed, h)
            y, _ = torch.nn.utils.rnn.pad_packed_sequence(yp, batch_first=batch_first, total_length=x.shape[1 if batch_first else 0])
    return y.numpy(), hn.numpy()


# ---- float GRU ---------------------------------------------------------------------------

@pytest.mark.parametrize("layers,bidir,batch_first,with_h0,with_lengths", [
    (1, False, False, False, False),
    (2, False, True, True, False),
    (2, True, False, True, True),
    (3, True, True, False, True),
])
def test_float_forward_matches_torch(layers, bidir, batch_first, with_h0, with_lengths):
    gru = make_torch_gru(5, 7, num_layers=layers, bidirectional=bidir, batch_first=batch_first, seed=layers)
    model = fixq.GruModel.from_torch(gru)
    assert (model.input_size, model.hidden_size, model.num_layers, model.bidirectional) == (5, 7, layers, bidir)
    T, B = 9, 4
    x = sequences(T, B, 5, seed=3)
    if batch_first:
        x = np.ascontiguousarray(x.transpose(1, 0, 2))
    D = 2 if bidir else 1
    h0 = sequences(layers * D, B, 7, seed=4) if with_h0 else None
    lengths = np.array([9, 3, 6, 1]) if with_lengths else None
    y, hn = model.forward(x, h0=h0, lengths=lengths, batch_first=batch_first)
    y_ref, hn_ref = torch_run(gru, x, h0, lengths, batch_first)
    assert y.dtype == np.float32 and y.shape == y_ref.shape and hn.shape == hn_ref.shape
    assert np.abs(y - y_ref).max() <= 1e-5
    assert np.abs(hn - hn_ref).max() <= 1e-5


def test_float_state_dict_and_file_roundtrip_exactly(tmp_path):
    gru = make_torch_gru(4, 6, num_layers=2, bidirectional=True, seed=1)
    model = fixq.GruModel.from_torch(gru)
    sd = model.state_dict()
    ref = {k: v.numpy() for k, v in gru.state_dict().items()}
    assert sd.keys() == ref.keys()
    for k in ref:
        assert np.array_equal(sd[k], ref[k]), k
    model.save(tmp_path / "m.safetensors")  # str or os.PathLike
    again = fixq.GruModel.load(tmp_path / "m.safetensors")
    for k, v in again.state_dict().items():
        assert np.array_equal(v, ref[k]), k
    # from_state_dict takes torch tensors as well as arrays
    assert np.array_equal(fixq.GruModel.from_state_dict(gru.state_dict()).state_dict()["weight_hh_l1_reverse"],
                          ref["weight_hh_l1_reverse"])


def test_float_cli_run_equals_python(small_gru_files, tmp_path):
    f = small_gru_files
    run_cli("gru", "run", "--model", f["model"], "--input", f["dir"] / "x.npy", "-o", tmp_path / "y.npy")
    y, _ = fixq.GruModel.load(str(f["model"])).forward(f["x"])
    assert np.array_equal(np.load(tmp_path / "y.npy"), y)


def test_float_stream_equals_forward():
    model = fixq.GruModel.from_torch(make_torch_gru(3, 5, num_layers=2, seed=2))
    x, h0 = sequences(7, 2, 3, seed=1), sequences(2, 2, 5, seed=2)
    y, hn = model.forward(x, h0=h0)
    s = model.stream(batch=2, h0=h0)
    steps = np.stack([s.step(frame) for frame in x])
    assert np.array_equal(steps, y)
    assert np.array_equal(s.state, hn)


def test_float_forward_prepares_the_model_once():
    # The first forward() validates the model and packs its weights into a copy kept on the
    # model; later calls of any shape reuse it and give the bits a fresh model gives.
    gru = make_torch_gru(6, 9, num_layers=2, seed=5)
    model, fresh = fixq.GruModel.from_torch(gru), fixq.GruModel.from_torch(gru)
    x1, x2 = sequences(5, 3, 6, seed=6), sequences(8, 2, 6, seed=7)
    y1, hn1 = model.forward(x1)
    kept = model._fixq_prepared
    y2, hn2 = model(x2, h0=sequences(2, 2, 9, seed=8), lengths=np.array([8, 4]))
    assert model._fixq_prepared is kept
    y2_fresh, hn2_fresh = fresh.forward(x2, h0=sequences(2, 2, 9, seed=8), lengths=np.array([8, 4]))
    assert np.array_equal(y2, y2_fresh) and np.array_equal(hn2, hn2_fresh)
    assert np.array_equal(y1, fixq.GruModel.from_torch(gru).forward(x1)[0])
    y_ref, _ = torch_run(gru, x1)
    assert np.abs(y1 - y_ref).max() <= 1e-5
    # Bad input is still refused after the model was prepared.
    with pytest.raises(ValueError):
        model.forward(np.full((2, 1, 6), np.nan, np.float32))
    with pytest.raises(ValueError):
        model.forward(np.zeros((2, 1, 5), np.float32))


# ---- integer GRU against the command-line tool -----------------------------------------

@pytest.mark.parametrize("config,scales", [("int8", "pow2"), ("int8", "multiplier"), ("int16", "pow2"), ("int16", "multiplier")])
def test_quantized_forward_equals_cli_run(tmp_path, config, scales):
    gru = make_torch_gru(6, 10, num_layers=2, bidirectional=True, seed=7)
    model_path = export_float_model(gru, tmp_path / "gru.safetensors")
    x = sequences(12, 5, 6, seed=8)
    np.save(tmp_path / "x.npy", x)
    run_cli("gru", "quantize", "--model", model_path, "--calib", tmp_path / "x.npy", "--config", config, "--scales", scales,
            "-o", tmp_path / "q.fixq")
    run_cli("gru", "run", "--model", tmp_path / "q.fixq", "--input", tmp_path / "x.npy", "-o", tmp_path / "y.npy")
    y, hn = fixq.QuantizedGru.load(str(tmp_path / "q.fixq")).forward(x)
    assert np.array_equal(y, np.load(tmp_path / "y.npy"))
    assert hn.shape == (4, 5, 10)


@pytest.mark.parametrize("method,calib_batch", [("minmax", 8), ("ema", 3), ("percentile", 4), ("mse", 8), ("auto", 5)])
def test_python_calibration_equals_cli_quantize(small_gru_files, tmp_path, method, calib_batch):
    f = small_gru_files
    calib = f["calib"]
    run_cli("gru", "quantize", "--model", f["model"], "--calib", f["dir"] / "calib.npy", "--method", method,
            "--calib-batch", calib_batch, "--params-out", tmp_path / "p.json", "-o", tmp_path / "q.fixq")
    # The CLI observes calib_batch sequences at a time: the same batches here.
    batches = [calib[:, b:b + calib_batch] for b in range(0, calib.shape[1], calib_batch)]
    q = fixq.quantize_gru(fixq.GruModel.load(str(f["model"])), batches, method=method)
    assert q.params() == json.load(open(tmp_path / "p.json"))
    y_cli = fixq.QuantizedGru.load(str(tmp_path / "q.fixq")).forward(f["x"])[0]
    assert np.array_equal(q.forward(f["x"])[0], y_cli)


def test_python_saved_model_runs_in_cli(small_gru_files, tmp_path):
    f = small_gru_files
    q = fixq.quantize_gru(fixq.GruModel.from_torch(f["torch"]), [f["calib"]], config="int16", scales="multiplier")
    q.save(str(tmp_path / "py.fixq"))
    run_cli("gru", "run", "--model", tmp_path / "py.fixq", "--input", f["dir"] / "x.npy", "-o", tmp_path / "y.npy")
    assert np.array_equal(q.forward(f["x"])[0], np.load(tmp_path / "y.npy"))


def test_quantized_lengths_equal_cli(small_gru_files, tmp_path):
    f = small_gru_files
    lengths = np.array([15, 4, 9], dtype=np.int64)
    np.save(tmp_path / "len.npy", lengths)
    run_cli("gru", "run", "--model", f["fixq"], "--input", f["dir"] / "x.npy", "--lengths", tmp_path / "len.npy",
            "-o", tmp_path / "y.npy")
    q = fixq.QuantizedGru.load(str(f["fixq"]))
    y, hn = q.forward(f["x"], lengths=lengths.astype(np.int32))  # any integer dtype
    assert np.array_equal(y, np.load(tmp_path / "y.npy"))
    assert not y[4:, 1].any() and not y[9:, 2].any()  # padding is zero
    # An item's final state is its state after its last real step.
    assert np.array_equal(hn[-1, 1], y[3, 1])


def test_quantized_batch_first_is_a_transpose(small_gru_files):
    q = fixq.QuantizedGru.load(str(small_gru_files["fixq"]))
    x = small_gru_files["x"]
    y, hn = q.forward(x)
    yb, hnb = q.forward(np.ascontiguousarray(x.transpose(1, 0, 2)), batch_first=True)
    assert np.array_equal(yb, y.transpose(1, 0, 2))
    assert np.array_equal(hnb, hn)


def test_quantized_outputs_lie_on_the_h_grid_and_track_float(small_gru_files):
    f = small_gru_files
    q = fixq.QuantizedGru.load(str(f["fixq"]))
    y, _ = q.forward(f["x"])
    p = fixq.GruQuantParams.from_dict(q.params())
    h = p.op(p.num_cells - 1, "h")  # the top layer's h parameters
    scale, zp = float(h.scale), int(h.zero_point)
    steps = y.astype(np.float64) / scale
    assert np.array_equal(steps, np.rint(steps))  # dequantized integers: (q - zp) * 2^-e
    qv = steps + zp
    assert qv.min() >= -128 and qv.max() <= 127
    y_float, _ = fixq.GruModel.load(str(f["model"])).forward(f["x"])
    cos = float(y.ravel() @ y_float.ravel() / np.linalg.norm(y) / np.linalg.norm(y_float))
    assert cos >= 0.99


def test_quantized_stream_equals_forward(small_gru_files):
    q = fixq.QuantizedGru.load(str(small_gru_files["fixq"]))
    x = small_gru_files["x"]
    h0 = sequences(2, 3, 12, seed=9, scale=0.5)
    y, hn = q.forward(x, h0=h0)
    s = q.stream(batch=3, h0=h0)
    assert np.array_equal(np.stack([s.step(frame) for frame in x]), y)
    assert np.array_equal(s.state, hn)
    # A batch of one takes flat frames.
    s1 = q.stream()
    assert np.array_equal(np.stack([s1.step(frame) for frame in x[:, 0]]), q.forward(x[:, :1])[0][:, 0])


def test_threads_give_the_same_bits(small_gru_files):
    """forward(threads=n) splits a batch of 16 or more over n threads: the same bits as one
    thread, for the float and the integer GRU; a negative or absurd count is a ValueError."""
    f = small_gru_files
    model, q = fixq.GruModel.load(str(f["model"])), fixq.QuantizedGru.load(str(f["fixq"]))
    x = sequences(9, 19, 6, seed=11)
    h0 = sequences(2, 19, 12, seed=12, scale=0.5)
    lengths = np.random.default_rng(13).integers(0, 10, 19)
    for m in (model, q):
        y1, hn1 = m.forward(x, h0=h0, lengths=lengths)
        for threads in (2, 3, 0):
            y, hn = m.forward(x, h0=h0, lengths=lengths, threads=threads)
            assert y.tobytes() == y1.tobytes() and hn.tobytes() == hn1.tobytes(), threads
        assert m(x, threads=2)[0].tobytes() == m(x)[0].tobytes()
        with pytest.raises(ValueError, match="threads is -1"):
            m.forward(x, threads=-1)
        with pytest.raises(ValueError, match="threads is 5000; expected 0..1024"):
            m.forward(x, threads=5000)


def test_quantized_save_load_roundtrip_is_bit_exact(small_gru_files, tmp_path):
    q = fixq.QuantizedGru.load(str(small_gru_files["fixq"]))
    q.save(str(tmp_path / "again.fixq"))
    again = fixq.QuantizedGru.load(str(tmp_path / "again.fixq"))
    assert again.params() == q.params()
    x = small_gru_files["x"]
    assert np.array_equal(again.forward(x)[0], q.forward(x)[0])
    assert (tmp_path / "again.fixq").read_bytes() == small_gru_files["fixq"].read_bytes()


def test_params_dict_roundtrip(small_gru_files):
    f = small_gru_files
    q = fixq.QuantizedGru.load(str(f["fixq"]))
    d = q.params()
    assert d == json.load(open(f["params"]))  # what `fixq gru quantize --params-out` wrote
    assert d["version"] == 1 and len(d["cells"]) == 2 and set(d["cells"][0]) == set(fixq.gru_ops())
    p = fixq.GruQuantParams.from_dict(json.loads(json.dumps(d)))
    assert p.to_dict() == d
    model = fixq.GruModel.load(str(f["model"]))
    for params in (d, p, p.to_json()):
        assert np.array_equal(fixq.QuantizedGru(model, params).forward(f["x"])[0], q.forward(f["x"])[0])
    # Parameters changed through the dict change the model: a coarser x scale.
    d2 = json.loads(json.dumps(d))
    d2["cells"][0]["x"]["scale"] = [d["cells"][0]["x"]["scale"][0] * 2]
    d2["cells"][0]["x"]["exponent"] = [d["cells"][0]["x"]["exponent"][0] - 1]
    assert not np.array_equal(fixq.QuantizedGru(model, d2).forward(f["x"])[0], q.forward(f["x"])[0])


def test_config_forms(tmp_path):
    c = fixq.GruQuantConfig("int8", "multiplier", bits={"g_pre": 16, "h": 16})
    assert c.scales == "multiplier" and c.bits["g_pre"] == 16 and c.bits["W"] == 8 and c.bits["x"] == 8
    assert fixq.GruQuantConfig.from_json(c.to_json()) == c
    assert fixq.GruQuantConfig.from_dict(c.to_dict()) == c
    assert fixq.GruQuantConfig.int16().bits["z_out"] == 16 and fixq.GruQuantConfig.int16().bits["R"] == 8
    model = fixq.GruModel.from_torch(make_torch_gru(3, 4, seed=1))
    x = sequences(5, 2, 3, seed=1)
    path = tmp_path / "cfg.json"
    path.write_text(c.to_json())
    assert fixq.GruQuantConfig.load(path) == c and fixq.GruQuantConfig.load(str(path)) == c
    results = []
    # Each form is told apart by its type: JSON text goes through from_json, a file is a Path.
    for config in (c, c.to_dict(), fixq.GruQuantConfig.from_json(c.to_json()), path):
        cal = fixq.GruCalibrator(model, config=config)
        cal.observe(x)
        p = cal.finalize()
        assert p.config == c
        results.append(p.to_json())
    assert len(set(results)) == 1
    with pytest.raises(ValueError, match="contradicts"):
        fixq.GruCalibrator(model, config=c, scales="pow2")
    # Strings are base names only: the JSON text and path strings earlier versions guessed
    # at get an error that says where they went, even when the file exists.
    for ambiguous in (c.to_json(), str(path)):
        with pytest.raises(ValueError, match=r"GruQuantConfig\.from_json\(text\).*pathlib\.Path"):
            fixq.GruCalibrator(model, config=ambiguous)
        with pytest.raises(ValueError, match="pathlib.Path"):
            fixq.quantize_gru(model, [x], config=ambiguous)


def test_scale_kinds_have_one_spelling(tmp_path):
    # "float", QuantScheme's former name for multiplier scales, still reads; what comes back
    # is the one spelling, the same as GruQuantConfig's.
    assert fixq.QuantScheme().scale == "multiplier"
    assert fixq.QuantScheme(scale="float").scale == "multiplier"
    assert "scale='multiplier'" in repr(fixq.QuantScheme(scale="float"))
    assert fixq.QuantScheme(scale="pow2").scale == "pow2"
    with pytest.raises(ValueError, match="scale must be pow2 or multiplier, got 'log'"):
        fixq.QuantScheme(scale="log")
    c = fixq.GruQuantConfig.from_dict({"version": 1, "base": "int16", "scales": "float"})
    assert c.scales == "multiplier" and c == fixq.GruQuantConfig("int16", "multiplier")
    assert c.to_dict()["scales"] == "multiplier"
    assert fixq.GruQuantConfig.int8("multiplier").scales == "multiplier"
    with pytest.raises(ValueError, match="scales must be pow2 or multiplier, got 'float32'"):
        fixq.GruQuantConfig("int8", "float32")


def test_file_system_failures_are_os_errors(small_gru_files, tmp_path):
    # The operating system's failures are OSError, subclassed by errno as for open();
    # bad contents of a file that could be read stay ValueError.
    f = small_gru_files
    missing = tmp_path / "absent"
    for load in (fixq.GruModel.load, fixq.QuantizedGru.load, fixq.GruQuantConfig.load):
        with pytest.raises(FileNotFoundError, match="absent") as e:
            load(missing)
        assert e.value.errno == errno.ENOENT
    with pytest.raises(FileNotFoundError, match="qweight.npy"):
        fixq.formats.load_gptq_npy(str(tmp_path / "absent."), 4)
    q = fixq.QuantizedGru.load(str(f["fixq"]))
    with pytest.raises(FileNotFoundError, match="cannot create a temporary file"):
        q.save(tmp_path / "no" / "such" / "dir" / "q.fixq")
    (tmp_path / "taken.fixq").mkdir()
    with pytest.raises(IsADirectoryError, match="rename"):
        q.save(tmp_path / "taken.fixq")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        fixq.GruQuantConfig.load(bad)


# ---- bad input ---------------------------------------------------------------------------

def test_bad_inputs_raise_value_error(small_gru_files, tmp_path):
    f = small_gru_files
    model = fixq.GruModel.load(str(f["model"]))
    q = fixq.QuantizedGru.load(str(f["fixq"]))
    x = f["x"]
    for m in (model, q):
        with pytest.raises(ValueError, match=r"x: expected shape \[time, batch, 6\]"):
            m.forward(np.zeros((3, 2, 5), np.float32))
        with pytest.raises(ValueError, match="x: expected shape"):
            m.forward(np.zeros((3, 6), np.float32))
        bad = x.copy()
        bad[2, 1, 3] = np.nan
        with pytest.raises(ValueError, match="finite"):
            m.forward(bad)
        with pytest.raises(ValueError, match=r"h0: expected shape \[2, 3, 12\]"):
            m.forward(x, h0=np.zeros((1, 3, 12), np.float32))
        with pytest.raises(ValueError, match="lengths: expected 3 lengths"):
            m.forward(x, lengths=[1, 2])
        with pytest.raises(ValueError, match="length"):
            m.forward(x, lengths=[1, 2, 99])
        with pytest.raises(ValueError, match="real numeric"):
            m.forward(x.astype(np.complex64))
        with pytest.raises(ValueError, match="frame: expected shape"):
            m.stream(batch=2).step(np.zeros((3, 6), np.float32))
    bidir = fixq.GruModel.from_torch(make_torch_gru(2, 3, bidirectional=True))
    with pytest.raises(ValueError, match="bidirectional"):
        bidir.stream()
    with pytest.raises(ValueError, match="no data|before|observe"):
        fixq.GruCalibrator(model).finalize()
    with pytest.raises(ValueError, match="minmax"):
        fixq.GruCalibrator(model, method="median")
    with pytest.raises(ValueError, match="'int8' or 'int16'"):
        fixq.GruCalibrator(model, config="int4")
    with pytest.raises(ValueError, match="gate"):
        fixq.GruQuantConfig(bits={"gate": 8})
    with pytest.raises(ValueError, match="lacks operator|version"):
        fixq.QuantizedGru(model, {"version": 1, "config": q.params()["config"], "cells": [{}]})
    trunc = tmp_path / "trunc.fixq"
    trunc.write_bytes(f["fixq"].read_bytes()[:100])
    with pytest.raises(ValueError, match="safetensors"):
        fixq.QuantizedGru.load(str(trunc))
    with pytest.raises(ValueError, match="weight_ih_l0"):
        fixq.GruModel.from_state_dict({"weight_hh_l0": np.zeros((9, 3), np.float32)})
    with pytest.raises(ValueError, match="mode 'LSTM'"):
        fixq.GruModel.from_torch(torch.nn.LSTM(2, 3))
