"""fixq.formats OCP MX block types (mxfp8/mxfp6/mxfp4/mxint8) against a per-block reference
from the OCP MX v1.0 spec: shared exponent by frexp, elements by the round-to-nearest-even
encoder of formats_util (on the exact scaled value), bits packed by numpy.

Run from the repository: PYTHONPATH=<build>/python /usr/bin/python3 -m pytest -q tests/python
"""

import numpy as np
import pytest

from formats_util import F, f32_bits, pack_bits_reference, rne_encode


# ========================================================================== OCP MX

MX_ELEMENT = {"mxfp8_e4m3": "e4m3fn", "mxfp8_e5m2": "e5m2", "mxfp6_e2m3": "e2m3fn", "mxfp6_e3m2": "e3m2fn",
              "mxfp4": "e2m1fn", "mxint8": None}
MX_EMAX = {"mxfp8_e4m3": 8, "mxfp8_e5m2": 15, "mxfp6_e2m3": 2, "mxfp6_e3m2": 4, "mxfp4": 2, "mxint8": 0}
MX_BITS = {"mxfp8_e4m3": 8, "mxfp8_e5m2": 8, "mxfp6_e2m3": 6, "mxfp6_e3m2": 6, "mxfp4": 4, "mxint8": 8}


def mx_reference(name, x):
    """OCP MX v1.0 section 6.3, per 32-block: s = clamp(floor(log2 amax) - emax, -127, 127),
    elements = saturating RNE encoding of the exact V * 2^-s; NaN/inf blocks get scale 0xFF."""
    blocks = np.asarray(x, np.float32).reshape(-1, 32).astype(np.float64)
    finite = np.all(np.isfinite(blocks), axis=1)
    amax = np.max(np.abs(np.where(np.isfinite(blocks), blocks, 0)), axis=1)
    _, e = np.frexp(amax)  # amax = f * 2^e, f in [0.5, 1): floor(log2 amax) = e - 1
    s = np.where(amax > 0, np.clip(e - 1 - MX_EMAX[name], -127, 127), -127)
    scaled = np.ldexp(np.where(finite[:, None], blocks, 0), -s[:, None])
    if MX_ELEMENT[name] is None:
        elements = np.clip(np.rint(scaled * 64), -127, 127).astype(np.int8)
    else:
        elements = rne_encode(MX_ELEMENT[name], scaled.ravel(), saturate=True).reshape(scaled.shape)
    scales = np.where(finite, s + 127, 0xFF).astype(np.uint8)
    elements[~finite] = 0
    return scales, elements


def mx_inputs():
    rng = np.random.default_rng(32)
    blocks = [rng.standard_normal(32) * 10.0 ** rng.integers(-40, 38) for _ in range(200)]
    blocks += [rng.standard_normal(32), np.zeros(32), -np.zeros(32), np.full(32, 6.0), np.full(32, 1e-45),
               np.r_[np.ones(31), 3.4e38], np.r_[np.zeros(31), 2.0**-149], np.r_[np.ones(31), np.nan],
               np.r_[np.ones(31), -np.inf], (rng.integers(-8, 9, 32) / 2.0)]
    return np.concatenate(blocks).astype(np.float32)


@pytest.mark.parametrize("name", list(MX_ELEMENT))
def test_mx_encode_matches_the_spec_reference(name):
    x = mx_inputs()
    scales, elements = F.mx_encode(name, x)
    want_scales, want_elements = mx_reference(name, x)
    np.testing.assert_array_equal(scales, want_scales)
    assert elements.dtype == (np.int8 if name == "mxint8" else np.uint8)
    bad = np.argwhere(elements.reshape(-1, 32) != want_elements)
    assert bad.size == 0, f"(block, element) {bad[:5].tolist()}"
    for b in range(len(scales)):
        if scales[b] != 0xFF:
            amax = float(np.max(np.abs(x[32 * b: 32 * b + 32])))
            assert F.mx_shared_exponent(name, amax) == int(scales[b]) - 127


@pytest.mark.parametrize("name", list(MX_ELEMENT))
def test_mx_block_layout_and_dequantize(name):
    x = mx_inputs().reshape(-1, 64)
    info = F.mx_type_info(name)
    assert (info.element_bits, info.emax, info.block_bytes) == (MX_BITS[name], MX_EMAX[name], 1 + 4 * MX_BITS[name])
    blocks = F.mx_quantize(name, x)
    assert blocks.shape == (x.shape[0], 2 * info.block_bytes)
    scales, elements = mx_reference(name, x)
    codes = elements.view(np.uint8)
    want = np.concatenate([scales[:, None], np.stack([pack_bits_reference(c, MX_BITS[name]) for c in codes])], axis=1)
    np.testing.assert_array_equal(blocks.reshape(-1, info.block_bytes), want)
    # Dequantization: element value times 2^s, one float32 rounding; NaN for scale 0xFF.
    if MX_ELEMENT[name] is None:
        values = elements.astype(np.float64) / 64
    else:
        values = F.lowp_decode(MX_ELEMENT[name], codes).astype(np.float64)
    s = scales.astype(np.int64) - 127
    with np.errstate(over="ignore"):
        expect = np.where((scales == 0xFF)[:, None], np.nan, np.ldexp(values, s[:, None])).astype(np.float32)
    got = F.mx_dequantize(name, blocks)
    assert got.shape == x.shape
    got_blocks = got.reshape(-1, 32)
    np.testing.assert_array_equal(np.isnan(got_blocks), np.isnan(expect))
    finite_out = ~np.isnan(expect)
    np.testing.assert_array_equal(f32_bits(got_blocks[finite_out]), f32_bits(expect[finite_out]))
    np.testing.assert_array_equal(F.mx_decode(name, *F.mx_encode(name, x)), got)
    np.testing.assert_array_equal(F.mx_dequantize(name, blocks.ravel(), shape=x.shape), got)
    # Quantizing the dequantized values of finite blocks gives the same bytes back.
    finite = (scales != 0xFF).reshape(x.shape[0], 2).all(axis=1)
    np.testing.assert_array_equal(F.mx_quantize(name, got[finite]), blocks[finite])


def test_mx_scale_is_a_shared_power_of_two_per_block():
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((8, 32)) * 2.0 ** rng.integers(-20, 20, (8, 1))).astype(np.float32)
    for name in MX_ELEMENT:
        scales, _ = F.mx_encode(name, x.ravel())
        y = F.mx_dequantize(name, F.mx_quantize(name, x.ravel())).reshape(8, 32)
        for b in range(8):
            amax = np.max(np.abs(x[b]))
            s = int(scales[b]) - 127
            assert 2.0 ** (s + MX_EMAX[name]) <= amax < 2.0 ** (s + MX_EMAX[name] + 1)
            unscaled = y[b].astype(np.float64) / 2.0**s  # every element on the element grid
            if MX_ELEMENT[name] is None:
                assert np.all(unscaled * 64 == np.round(unscaled * 64)) and np.all(np.abs(unscaled) <= 127 / 64)
            else:
                grid = F.lowp_decode(MX_ELEMENT[name], np.arange(2 ** MX_BITS[name], dtype=np.uint8))
                assert np.all(np.isin(unscaled, grid.astype(np.float64)))
    assert F.mx_shared_exponent("mxfp4", 0.0) == -127
    assert F.mx_shared_exponent("mxfp8_e4m3", 448.0) == 0
    assert F.mx_shared_exponent("mxint8", 3e38) == 127
    assert F.mx_shared_exponent("mxfp4", 2.0**-149) == -127


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: F.mx_quantize("mxfp5", np.zeros(32)), "unknown MX type 'mxfp5'"),
        (lambda: F.mx_quantize("mxfp4", np.zeros(48)), "not a multiple of 32"),
        (lambda: F.mx_dequantize("mxfp4", np.zeros(18, np.uint8)), "not a whole number of blocks"),
        (lambda: F.mx_dequantize("mxfp4", np.zeros(17, np.uint8), shape=(64,)), "must be 34 bytes; got 17"),
        (lambda: F.mx_decode("mxfp4", np.zeros(2, np.uint8), np.zeros(32, np.uint8)), "must be [..., 32 * nb]"),
        (lambda: F.mx_decode("mxfp4", np.zeros(1, np.uint8), np.full(32, 16, np.uint8)), "elements[0] = 16"),
        (lambda: F.mx_decode("mxint8", np.zeros(1, np.uint8), np.zeros(32, np.uint8)), "expected dtype int8"),
        (lambda: F.mx_shared_exponent("mxfp4", float("nan")), "finite and >= 0"),
        (lambda: F.mx_shared_exponent("mxfp4", -1.0), "finite and >= 0"),
    ],
)
def test_mx_bad_input_is_a_value_error(call, message):
    with pytest.raises(ValueError) as e:
        call()
    assert message in str(e.value)


def test_mx_accepts_the_cli_name_of_ocp_mxfp4():
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    np.testing.assert_array_equal(F.mx_quantize("ocp_mxfp4", x), F.mx_quantize("mxfp4", x))
