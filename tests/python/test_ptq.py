"""fixq.GruPtq from Python: the same post-training steps and auto bits as `fixq gru quantize`."""

import json

import numpy as np
import pytest

import fixq
from conftest import run_cli


def ptq_on(f, **options):
    ptq = fixq.GruPtq(fixq.GruModel.load(f["model"]), **options)
    ptq.observe(f["calib"])  # one batch of 8 sequences, as --calib-batch 8
    return ptq


def test_quantize_defaults_equal_the_cli_defaults(small_gru_files, tmp_path):
    f = small_gru_files
    run_cli("gru", "quantize", "--model", f["model"], "--calib", f["dir"] / "calib.npy", "--calib-batch", 8,
            "-o", tmp_path / "cli.fixq")
    result = ptq_on(f).quantize()
    result.quantized().save(tmp_path / "py.fixq")
    assert (tmp_path / "py.fixq").read_bytes() == (tmp_path / "cli.fixq").read_bytes()
    # One choice per activation operator per cell, each a calibration method's name.
    assert len(result.choices) == 2 and all(result.choices)
    assert 0.99 < result.calib_cosine <= 1.0


def test_auto_bits_equals_the_cli_and_meets_its_target(small_gru_files, tmp_path):
    f = small_gru_files
    out = run_cli("gru", "quantize", "--model", f["model"], "--calib", f["dir"] / "calib.npy", "--calib-batch", 8,
                  "--auto-bits", "--target-cosine", 0.99999, "--config-out", tmp_path / "widths.json",
                  "-o", tmp_path / "cli.fixq")
    auto = ptq_on(f).auto_bits(target_cosine=0.99999)
    assert auto.target_met and auto.result.calib_cosine >= 0.99999
    assert auto.config == fixq.GruQuantConfig.from_dict(json.load(open(tmp_path / "widths.json")))
    assert sorted(auto.promoted) == sorted(op for op, b in auto.config.bits.items() if b == 16)
    assert auto.promoted, "int8 alone should not reach 0.99999 on this model"
    for op in auto.promoted:
        assert op in out
    # Promoting operators costs more than the int8 base, and the cost is the one gru_bits_cost states.
    assert auto.cost == fixq.gru_bits_cost(fixq.GruModel.load(f["model"]), auto.config)
    assert auto.cost["weight_bytes"] >= auto.base_cost["weight_bytes"]
    auto.result.quantized().save(tmp_path / "py.fixq")
    assert (tmp_path / "py.fixq").read_bytes() == (tmp_path / "cli.fixq").read_bytes()


def test_bad_options_name_what_is_wrong(small_gru_files):
    model = fixq.GruModel.load(small_gru_files["model"])
    with pytest.raises(ValueError, match="method must be one of auto, minmax, ema, percentile, mse"):
        fixq.GruPtq(model, method="best")
    with pytest.raises(ValueError, match="adaround"):
        fixq.GruPtq(model, rounding="adaround")
    with pytest.raises(ValueError, match="no calibration|observe"):
        fixq.GruPtq(model).quantize()
    ptq = ptq_on(small_gru_files)
    with pytest.raises(ValueError, match="target cosine"):
        ptq.auto_bits(target_cosine=2.0)
    with pytest.raises(ValueError):
        ptq.observe(np.zeros((3, 2, 5), dtype=np.float32))  # C = 6 expected
