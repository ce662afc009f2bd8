"""QuantizedModel.quantize's choices from Python (docs/spec.md 10.2), on the demo's whole
speech model (data/speech/model.onnx): auto reaches its target on the calibration data and
reports it, keeps int8 where a low target allows it, survives the file round trip;
plain calibration runs; a bad target or rounding is a ValueError naming it."""

import os

import numpy as np
import pytest

import fixq

ROOT = os.environ.get("FIXQ_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(scope="module")
def speech():
    model = fixq.Model.load_onnx(os.path.join(ROOT, "data", "speech", "model.onnx"))
    feats = np.load(os.path.join(ROOT, "data", "speech", "calib.features.npy"))  # [T, B, 22]
    calib = np.ascontiguousarray(feats.transpose(1, 0, 2)[:4, :128])  # [B, T, 22], as the ONNX input
    return model, calib


def cosine(a, b):
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def test_auto_meets_its_target_and_keeps_int8_where_it_can(speech, tmp_path):
    model, calib = speech
    want = model.forward([calib])[0]
    int8 = fixq.QuantizedModel.quantize(model, [calib])
    cos8 = int8.info()["calib_cosine"]
    assert cos8 == pytest.approx(cosine(int8.forward([calib])[0], want), abs=1e-9)

    easy = fixq.QuantizedModel.quantize(model, [calib], preset="auto", target_cosine=cos8 - 1e-6)
    assert [o["bits"] for o in easy.info()["ops"]] == [8, 8, 8]
    assert np.array_equal(easy.forward([calib])[0], int8.forward([calib])[0])

    target = 1 - (1 - cos8) / 4
    q = fixq.QuantizedModel.quantize(model, [calib], preset="auto", target_cosine=target)
    info = q.info()
    assert info["preset"] == "auto" and info["calib_cosine"] >= target
    assert cosine(q.forward([calib])[0], want) >= target
    assert 16 in [o["bits"] for o in info["ops"]]
    q.save(tmp_path / "auto.fixq")
    back = fixq.QuantizedModel.load(tmp_path / "auto.fixq")
    assert np.array_equal(back.forward([calib])[0], q.forward([calib])[0])
    assert back.info()["calib_cosine"] is None  # not in the file


def test_plain_calibration_and_bad_choices(speech):
    model, calib = speech
    plain = fixq.QuantizedModel.quantize(model, [calib], method="minmax", range_search=False, rounding="nearest",
                                         bias_correction=False)
    assert plain.info()["calib_cosine"] <= fixq.QuantizedModel.quantize(model, [calib]).info()["calib_cosine"]
    for bad, words in [(dict(preset="auto", target_cosine=0.0), "target cosine must be in (0, 1]"),
                       (dict(preset="auto", target_cosine=1.5), "target cosine must be in (0, 1]"),
                       (dict(rounding="round"), "weight rounding 'round'"),
                       (dict(preset="int4"), "int8, int16 or auto")]:
        with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)").replace("]", r"\]")):
            fixq.QuantizedModel.quantize(model, [calib], **bad)
