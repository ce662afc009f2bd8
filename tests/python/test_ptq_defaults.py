"""`fixq gru quantize`'s defaults (GruPtq with no options) on both embedded models, scored on
their held-out data with their own task metric: bits per character for the char-LM
(data/charlm), segmental SNR improvement for the speech-enhancement model (data/speech).

Every fixq figure is deterministic (integer GRU, fixed calibration data), so each is compared
with the recorded one (recorded_ptq_figures.json, also the demo's) to within the rounding
of the recorded digits; and each is held to its budget against float and against PyTorch's
dynamic int8 GRU on its best engine, as recorded. torch's own figure, scored in the same run
by the tools/ scripts the demo runs, depends on the CPU's float kernels: it is held within
the record's torch_spread. A budget that the defaults do not meet is recorded as such ("meets": false) and
checked in that direction too, so that a change to the defaults that wins or loses on a
budget shows here, and the record is updated with it.
"""

import json
import math
import subprocess
import sys

import numpy as np
import pytest
import torch

import fixq
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import speech_task  # noqa: E402

RECORDED = json.loads((ROOT / "tests" / "python" / "recorded_ptq_figures.json").read_text())
CONFIGS = [("int16", "pow2"), ("int16", "multiplier"), ("int8", "pow2"), ("int8", "multiplier")]


def torch_rows(model, data):
    """The demo's PyTorch rows, from the built package's fixq.baselines (PYTHONPATH)."""
    r = subprocess.run([sys.executable, "-m", "fixq.baselines", model, "--data", str(data), "--repeats", "1"],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["rows"]


def gru_from_tensors(tensors, input_size, hidden, layers):
    gru = torch.nn.GRU(input_size, hidden, num_layers=layers)
    gru.load_state_dict({k: torch.from_numpy(v) for k, v in tensors.items()})
    return gru


@pytest.fixture(scope="module")
def speech():
    m = speech_task.SpeechModel(str(ROOT / "data" / "speech"))
    gru = gru_from_tensors(m.gru_tensors, m.bands, m.hidden, m.layers)
    return m, gru, fixq.GruModel.from_torch(gru)


@pytest.fixture(scope="module")
def charlm():
    d = ROOT / "data" / "charlm"
    emb = np.load(d / "embedding.npy")
    dw = np.load(d / "decoder.weight.npy").astype(np.float64)
    db = np.load(d / "decoder.bias.npy").astype(np.float64)
    tensors = {k: np.load(d / f"gru.{k}_l0.npy") for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")}
    model = fixq.GruModel.from_torch(gru_from_tensors({f"{k}_l0": v for k, v in tensors.items()}, 64, 128, 1))
    calib, held = np.load(d / "calib_ids.npy"), np.load(d / "heldout_ids.npy")
    T = len(calib) // 8  # as `fixq demo`: the calibration text cut into 8 sequences
    xc = np.ascontiguousarray(emb[calib[:8 * T]].reshape(8, T, -1).transpose(1, 0, 2))
    xh = np.ascontiguousarray(emb[held][:, None, :])

    def bpc(y):  # CharLm::bits_per_char
        logits = y[:-1, 0, :].astype(np.float64) @ dw.T + db
        mx = logits.max(1, keepdims=True)
        lse = mx[:, 0] + np.log(np.exp(logits - mx).sum(1))
        return float((lse - logits[np.arange(len(logits)), held[1:]]).mean() / math.log(2))

    return model, xc, xh, bpc


def test_speech_float_model_equals_torch(speech):
    m, gru, model = speech
    x = m.features
    with torch.no_grad():
        want = gru(torch.from_numpy(x))[0].numpy()
    got, _ = model.forward(x)
    assert np.abs(got - want).max() < 2e-5
    # The scores of fixq's float output are the training script's recorded held-out figures.
    recorded = json.loads((ROOT / "data" / "speech" / "metrics.json").read_text())
    snr, mse = m.scores(got)
    assert abs(snr - recorded["heldout_snr_improvement_db"]) < 1e-4
    assert abs(mse - recorded["heldout_mask_mse"]) < 1e-6
    assert snr > 3.0  # the model really enhances: well above doing nothing (0 dB)


def check(model_name, figures, float_figure, torch_best, higher_is_better, int16_budget):
    """fixq's figures are deterministic and must equal the record to its rounding; torch's
    are not (its float kernels, and so where its dynamic int8 rounds the activations, depend
    on the CPU), so the live torch figure is only held within torch_spread of the recorded
    one, and the int8 "meets" is judged against the recorded torch figure, not the live one
    (charlm's int8 multiplier ties torch to within the spread)."""
    rec = RECORDED[model_name]
    assert abs(float_figure - rec["float"]) <= rec["rounding"], (float_figure, rec["float"])
    assert abs(torch_best - rec["torch_best"]) <= rec["torch_spread"], (torch_best, rec["torch_best"])
    sign = 1.0 if higher_is_better else -1.0
    for key, value in figures.items():
        assert abs(value - rec[key]["value"]) <= rec["rounding"], (model_name, key, value, rec[key])
        if key.startswith("int16"):
            within = abs(value - float_figure) <= int16_budget
            assert within == rec[key]["meets"], (model_name, key, value, float_figure)
        else:
            # no worse than torch's dynamic int8 on its best engine, as recorded
            at_least = sign * (rec[key]["value"] - rec["torch_best"]) >= 0
            assert at_least == rec[key]["meets"], (model_name, key, value, torch_best)


def test_speech_defaults_within_budget(speech):
    m, _, model = speech
    ptq = fixq.GruPtq(model)
    ptq.observe(m.calib)
    figures = {}
    for cfg, scales in CONFIGS:
        y, _ = ptq.quantize(cfg, scales).quantized().forward(m.features)
        figures[f"{cfg} {scales}"] = m.scores(y)[0]
    rows = torch_rows("speech", ROOT / "data" / "speech")
    f32 = rows[0]["snr_gain_db"]
    best = max(r["snr_gain_db"] for r in rows[1:] if "error" not in r)
    y, _ = model.forward(m.features)
    float_db = m.scores(y)[0]
    assert abs(f32 - float_db) < 1e-6  # torch's protocol is ours
    check("speech", figures, float_db, best, True, int16_budget=0.01)


def test_charlm_defaults_within_budget(charlm):
    model, xc, xh, bpc = charlm
    ptq = fixq.GruPtq(model)
    ptq.observe(xc)
    figures = {}
    for cfg, scales in CONFIGS:
        y, _ = ptq.quantize(cfg, scales).quantized().forward(xh)
        figures[f"{cfg} {scales}"] = bpc(y)
    y, _ = model.forward(xh)
    float_bpc = bpc(y)
    rows = torch_rows("charlm", ROOT / "data" / "charlm")
    best = min(r["bpc"] for r in rows[1:] if "error" not in r)
    check("charlm", figures, float_bpc, best, False, int16_budget=0.0005 * float_bpc)
