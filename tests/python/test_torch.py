"""fixq.torch.QuantGRU: an nn.GRU drop-in whose outputs equal `fixq gru run` bit for bit."""

import json

import numpy as np
import pytest
import torch
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

import fixq
from fixq.torch import QuantGRU
from conftest import export_float_model, make_torch_gru, run_cli, sequences


@pytest.fixture(scope="module")
def bidir_files(tmp_path_factory):
    """A 2-layer bidirectional GRU, int16 multiplier-scaled by the CLI."""
    d = tmp_path_factory.mktemp("bidir")
    gru = make_torch_gru(5, 8, num_layers=2, bidirectional=True, seed=11)
    model = export_float_model(gru, d / "gru.safetensors")
    x = sequences(10, 4, 5, seed=12)
    np.save(d / "x.npy", x)
    run_cli("gru", "quantize", "--model", model, "--calib", d / "x.npy", "--config", "int16", "--scales", "multiplier",
            "-o", d / "q.fixq")
    return {"dir": d, "torch": gru, "x": x, "fixq": d / "q.fixq"}


# ---- acceptance: QuantGRU == `fixq gru run`, bit for bit ---------------------------------

@pytest.mark.parametrize("files", ["small_gru_files", "bidir_files"])
def test_quantgru_equals_cli_run_bit_for_bit(request, files, tmp_path):
    f = request.getfixturevalue(files)
    run_cli("gru", "run", "--model", f["fixq"], "--input", f["dir"] / "x.npy", "-o", tmp_path / "y.npy")
    y_cli = np.load(tmp_path / "y.npy")
    with torch.no_grad():
        y, h_n = QuantGRU.load(f["fixq"])(torch.from_numpy(f["x"]))
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32
    assert np.array_equal(y.numpy(), y_cli)


def test_quantgru_batch_first_equals_cli_batch_first(bidir_files, tmp_path):
    f = bidir_files
    xb = np.ascontiguousarray(f["x"].transpose(1, 0, 2))  # [B, T, C]
    np.save(tmp_path / "xb.npy", xb)
    run_cli("gru", "run", "--model", f["fixq"], "--input", tmp_path / "xb.npy", "--batch-first", "-o", tmp_path / "y.npy")
    with torch.no_grad():
        y, _ = QuantGRU.load(f["fixq"], batch_first=True)(torch.from_numpy(xb))
    assert y.shape == (4, 10, 16)
    assert np.array_equal(y.numpy(), np.load(tmp_path / "y.npy"))  # the CLI writes the input's layout, [B, T, F]


def test_quantgru_packed_sequence_equals_cli_lengths(bidir_files, tmp_path):
    f = bidir_files
    lengths = np.array([4, 10, 1, 7], dtype=np.int64)  # unsorted: enforce_sorted=False
    np.save(tmp_path / "len.npy", lengths)
    run_cli("gru", "run", "--model", f["fixq"], "--input", f["dir"] / "x.npy", "--lengths", tmp_path / "len.npy",
            "-o", tmp_path / "y.npy")
    packed = pack_padded_sequence(torch.from_numpy(f["x"]), torch.from_numpy(lengths), enforce_sorted=False)
    with torch.no_grad():
        out, h_n = QuantGRU.load(f["fixq"])(packed)
        ref_out, ref_h = f["torch"](packed)
    assert isinstance(out, PackedSequence)
    # The same packing as nn.GRU's output.
    assert torch.equal(out.batch_sizes, ref_out.batch_sizes)
    assert torch.equal(out.sorted_indices, ref_out.sorted_indices)
    assert torch.equal(out.unsorted_indices, ref_out.unsorted_indices)
    assert out.data.shape == ref_out.data.shape and h_n.shape == ref_h.shape
    padded, out_lengths = pad_packed_sequence(out, total_length=10)
    assert np.array_equal(out_lengths.numpy(), lengths)
    assert np.array_equal(padded.numpy(), np.load(tmp_path / "y.npy"))
    # h_n is in the caller's batch order, as the integer GRU's own forward returns it.
    assert np.array_equal(h_n.numpy(), fixq.QuantizedGru.load(f["fixq"]).forward(f["x"], lengths=lengths)[1])


def test_from_float_calibrates_as_the_cli(small_gru_files, tmp_path):
    """QuantGRU.from_float on the calibration set equals the CLI's quantize + run."""
    f = small_gru_files
    qgru = QuantGRU.from_float(f["torch"], [torch.from_numpy(f["calib"])], rounding="nearest", bias_correction=False)
    assert qgru.params() == json.load(open(f["params"]))
    run_cli("gru", "run", "--model", f["fixq"], "--input", f["dir"] / "x.npy", "-o", tmp_path / "y.npy")
    with torch.no_grad():
        y, _ = qgru(torch.from_numpy(f["x"]))
    assert np.array_equal(y.numpy(), np.load(tmp_path / "y.npy"))
    qgru.save(tmp_path / "mine.fixq")
    assert (tmp_path / "mine.fixq").read_bytes() == f["fixq"].read_bytes()


def test_from_float_defaults_are_the_cli_defaults(small_gru_files, tmp_path):
    """Every post-training step on, both ways: the same .fixq file, byte for byte."""
    f = small_gru_files
    run_cli("gru", "quantize", "--model", f["model"], "--calib", f["dir"] / "calib.npy", "--calib-batch", 8,
            "-o", tmp_path / "cli.fixq")
    QuantGRU.from_float(f["torch"], [torch.from_numpy(f["calib"])]).save(tmp_path / "mine.fixq")
    assert (tmp_path / "mine.fixq").read_bytes() == (tmp_path / "cli.fixq").read_bytes()


# ---- nn.GRU's interface ------------------------------------------------------------------

@pytest.mark.parametrize("layers,bidir,batch_first", [(1, False, False), (2, False, True), (2, True, True)])
def test_same_layout_as_nn_gru_and_close_to_it(layers, bidir, batch_first):
    gru = make_torch_gru(4, 16, num_layers=layers, bidirectional=bidir, batch_first=batch_first, seed=layers)
    calib = [torch.randn(6, 12, 4, generator=torch.Generator().manual_seed(i)) for i in range(3)]
    qgru = QuantGRU.from_float(gru, calib, config="int16")
    assert (qgru.input_size, qgru.hidden_size, qgru.num_layers, qgru.bidirectional, qgru.batch_first) == \
        (4, 16, layers, bidir, batch_first)
    D = 2 if bidir else 1
    x = torch.randn(6, 12, 4, generator=torch.Generator().manual_seed(7))
    with torch.no_grad():
        # A state the calibration has seen the like of: a continuation after calib[1].
        # (An arbitrary hx beyond the calibrated range of h saturates, as it should.)
        hx = gru(calib[1])[1]
        assert hx.shape == (layers * D, 6 if batch_first else 12, 16)
        for args in ((x,), (x, hx)):
            y, h = qgru(*args)
            y_ref, h_ref = gru(*args)
            assert y.shape == y_ref.shape and h.shape == h_ref.shape
            cos = torch.nn.functional.cosine_similarity(y.flatten(), y_ref.flatten(), dim=0).item()
            assert cos >= 0.9999, cos  # int16: close to float
            assert (y - y_ref).abs().max().item() < 0.05  # unseen x may saturate a little


def test_hx_is_the_initial_state(small_gru_files):
    f = small_gru_files
    qgru = QuantGRU.load(f["fixq"])
    x = torch.from_numpy(f["x"])
    hx = torch.from_numpy(sequences(2, 3, 12, seed=4, scale=0.5))
    with torch.no_grad():
        y, h = qgru(x, hx)
    y_ref, h_ref = fixq.QuantizedGru.load(f["fixq"]).forward(f["x"], h0=hx.numpy())
    assert np.array_equal(y.numpy(), y_ref) and np.array_equal(h.numpy(), h_ref)
    with torch.no_grad():
        assert not torch.equal(qgru(x)[0], y)  # hx matters


def test_unbatched_input_is_a_batch_of_one(small_gru_files):
    qgru = QuantGRU.load(small_gru_files["fixq"], batch_first=True)  # unbatched ignores batch_first, as nn.GRU
    x = torch.from_numpy(small_gru_files["x"][:, 1])  # [T, C]
    hx = torch.full((2, 12), 0.25)
    with torch.no_grad():
        y, h = qgru(x, hx)
        y3, h3 = qgru(x[None], hx[:, None])  # batch_first [1, T, C]
    assert y.shape == (15, 12) and h.shape == (2, 12)
    assert torch.equal(y, y3[0]) and torch.equal(h, h3[:, 0])
    with pytest.raises(RuntimeError, match="2-D"):
        qgru(x, hx[:, None])


def test_calibration_batches_in_every_form(small_gru_files):
    """Packed sequences, (x, lengths) tuples and padded arrays calibrate alike."""
    f = small_gru_files
    calib = torch.from_numpy(f["calib"])
    lengths = torch.tensor([20, 5, 13, 20, 1, 8, 20, 17])
    a = QuantGRU.from_float(f["torch"], [pack_padded_sequence(calib, lengths, enforce_sorted=False)])
    b = QuantGRU.from_float(f["torch"], [(calib, lengths)])
    c = QuantGRU.from_float(f["torch"], [f["calib"]])
    assert a.params() == b.params()
    assert a.params() != c.params()  # padding is not calibrated on


def test_pickles_with_torch_save(small_gru_files, tmp_path):
    qgru = QuantGRU.load(small_gru_files["fixq"], batch_first=True)
    torch.save(qgru, tmp_path / "m.pt")
    again = torch.load(tmp_path / "m.pt")
    x = torch.from_numpy(small_gru_files["x"])
    with torch.no_grad():
        assert again.batch_first and torch.equal(again(x)[0], qgru(x)[0])
    assert again.params() == qgru.params()


def test_inference_only_and_bad_input(small_gru_files):
    qgru = QuantGRU.load(small_gru_files["fixq"])
    x = torch.from_numpy(small_gru_files["x"]).requires_grad_()
    with pytest.raises(RuntimeError, match="inference-only"):
        qgru(x)
    with torch.no_grad():
        y, _ = qgru(x)
    assert not y.requires_grad
    with torch.no_grad(), pytest.raises(ValueError, match="x: expected shape"):
        qgru(torch.zeros(3, 2, 5))
    with pytest.raises(TypeError, match="torch.nn.GRU"):
        QuantGRU.from_float(torch.nn.LSTM(3, 4), [])
    with pytest.raises(ValueError, match="no batches"):
        QuantGRU.from_float(make_torch_gru(3, 4), [])
    assert "scales='pow2'" in repr(qgru)
