"""fixq.formats low-precision floats (fp8/fp6/fp4, e8m0, bf16, fp16) and code packing against
independent oracles: the ml_dtypes tables of tests/vectors/float8 (with the three
departures fixq documents), decoding of every code from the format definitions, a
round-to-nearest-even encoder written from the same definitions (formats_util.rne_encode),
numpy's own float16 / bf16 rounding, and numpy's little-endian bit packing.

Missing golden files fail (never skip): they are the acceptance criterion, as in the C++
suite. Run from the repository: PYTHONPATH=<build>/python /usr/bin/python3 -m pytest -q tests/python
"""

import numpy as np
import pytest

from formats_util import F, FLOAT8, NARROW, f32_bits, formula_decode, golden, pack_bits_reference, rne_encode


# ============================================================= low-precision floats

GOLDEN_NAME = {
    "e4m3fn": "float8_e4m3fn", "e4m3fnuz": "float8_e4m3fnuz", "e5m2": "float8_e5m2",
    "e5m2fnuz": "float8_e5m2fnuz", "e8m0fnu": "float8_e8m0fnu", "e4m3b11fnuz": "float8_e4m3b11fnuz",
    "e2m3fn": "float6_e2m3fn", "e3m2fn": "float6_e3m2fn", "e2m1fn": "float4_e2m1fn",
    "bf16": "bfloat16", "fp16": "float16",
}


@pytest.mark.parametrize("name", list(NARROW))
def test_lowp_decode_every_code_matches_the_definition(name):
    info = F.lowp_type_info(name)
    codes = np.arange(2**info.bits, dtype=np.uint8)
    np.testing.assert_array_equal(f32_bits(F.lowp_decode(name, codes)), formula_decode(name))


def test_lowp_info_matches_the_definitions():
    want = {  # bits, exponent, mantissa, bias, signed, inf, nan, -0, max, min_positive
        "e4m3fn": (8, 4, 3, 7, True, False, True, True, 448, 2.0**-9),
        "e4m3fnuz": (8, 4, 3, 8, True, False, True, False, 240, 2.0**-10),
        "e5m2": (8, 5, 2, 15, True, True, True, True, 57344, 2.0**-16),
        "e5m2fnuz": (8, 5, 2, 16, True, False, True, False, 57344, 2.0**-17),
        "e8m0fnu": (8, 8, 0, 127, False, False, True, False, 2.0**127, 2.0**-127),
        "e4m3b11fnuz": (8, 4, 3, 11, True, False, True, False, 30, 2.0**-13),
        "e2m3fn": (6, 2, 3, 1, True, False, False, True, 7.5, 0.125),
        "e3m2fn": (6, 3, 2, 3, True, False, False, True, 28, 0.0625),
        "e2m1fn": (4, 2, 1, 1, True, False, False, True, 6, 0.5),
        "bf16": (16, 8, 7, 127, True, True, True, True, (2 - 2.0**-7) * 2.0**127, 2.0**-133),
        "fp16": (16, 5, 10, 15, True, True, True, True, 65504, 2.0**-24),
    }
    assert [t.name for t in F.lowp_types()] == list(want)
    for t in F.lowp_types():
        got = (t.bits, t.exponent_bits, t.mantissa_bits, t.bias, t.is_signed, t.has_inf, t.has_nan,
               t.has_negative_zero, t.max, t.min_positive)
        assert got == want[t.name], t.name


@pytest.mark.parametrize("name", list(GOLDEN_NAME))
def test_lowp_decode_matches_ml_dtypes_tables(name):
    info = F.lowp_type_info(name)
    want = golden(FLOAT8, f"{GOLDEN_NAME[name]}.decode.u32", np.uint32)
    codes = np.arange(2**info.bits, dtype=np.uint16 if info.bits == 16 else np.uint8)
    np.testing.assert_array_equal(f32_bits(F.lowp_decode(name, codes)), want)


@pytest.mark.parametrize("policy", ["default", "saturate"])
@pytest.mark.parametrize("name", list(NARROW))
def test_lowp_encode_is_round_to_nearest_even(name, policy):
    x = np.concatenate([golden(FLOAT8, "edges.f32", np.float32), golden(FLOAT8, "random.f32", np.float32)])
    x = x[~np.isnan(x)]
    got = F.lowp_encode(name, x, overflow=policy)
    want = rne_encode(name, x, policy == "saturate")
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(float(x[i]), hex(got[i]), hex(want[i])) for i in bad[:5]]


# e8m0 has no mantissa: its ties round up (the encoder test above covers it).
@pytest.mark.parametrize("name", [n for n in NARROW if n != "e8m0fnu"])
def test_lowp_encode_ties_go_to_the_even_code(name):
    info = F.lowp_type_info(name)
    table = formula_decode(name).view(np.float32)
    grid = np.unique(table[np.isfinite(table) & (table >= 0)]).astype(np.float64)
    mids = (grid[:-1] + grid[1:]) / 2
    lower = F.lowp_encode(name, grid[:-1])
    codes = F.lowp_encode(name, mids)
    assert np.all(codes % 2 == 0)  # neighbours differ by one code: exactly one of them is even
    assert np.all((codes == lower) | (codes == lower + 1))
    # -mid is the mirror image: the sign bit added, except that fnuz types have no -0.
    sign = 1 << (info.bits - 1)
    mirrored = np.where((codes == 0) & (not info.has_negative_zero), 0, codes | sign)
    np.testing.assert_array_equal(F.lowp_encode(name, -mids), mirrored)


def test_lowp_encode_examples_from_the_definitions():
    enc = F.lowp_encode
    assert enc("e4m3fn", [464.0, 480.0, 1e9, np.inf, -np.inf]).tolist() == [0x7E, 0x7F, 0x7F, 0x7F, 0xFF]
    assert enc("e4m3fn", [464.0, 1e9, np.inf, -np.inf], overflow="saturate").tolist() == [0x7E, 0x7E, 0x7E, 0xFE]
    assert enc("e5m2", [61440.0, 61439.0, -np.inf]).tolist() == [0x7C, 0x7B, 0xFC]
    assert enc("e5m2", [61440.0, np.inf], overflow="saturate").tolist() == [0x7B, 0x7B]
    assert enc("e4m3fn", [np.nan, -np.nan]).tolist() == [0x7F, 0xFF]
    assert enc("e5m2", [np.nan, -np.nan]).tolist() == [0x7E, 0xFE]
    assert enc("e4m3fnuz", [np.nan, -0.0, -1e-30]).tolist() == [0x80, 0x00, 0x00]
    assert enc("e8m0fnu", [1.0, 1.5, 0.75, 0.0, -1.0]).tolist() == [127, 128, 127, 0xFF, 0xFF]
    assert enc("e8m0fnu", [0.0, -1.0, np.inf], overflow="saturate").tolist() == [0, 0, 0xFE]
    assert enc("e2m1fn", [7.0, np.inf, -np.inf, 2.5, 3.5, 0.25]).tolist() == [0x7, 0x7, 0xF, 0x4, 0x6, 0x0]
    assert enc("fp16", [65520.0, 65519.0]).tolist() == [0x7C00, 0x7BFF]
    assert enc("fp16", [65520.0, np.inf], overflow="saturate").tolist() == [0x7BFF, 0x7BFF]
    assert enc("bf16", [np.nan, -np.nan, 1.0]).tolist() == [0x7FC0, 0xFFC0, 0x3F80]
    assert enc("e4m3fn", 1.0).shape == () and enc("e4m3fn", 1.0) == 0x38
    assert enc("bf16", [1.0]).dtype == np.uint16 and enc("e2m1fn", [1.0]).dtype == np.uint8


def bf16_reference(x, saturate):
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, np.float32))
    out = np.where(nan, np.where(bits >> 31, 0xFFC0, 0x7FC0), rounded).astype(np.uint16)
    if saturate:
        out = np.where((out & 0x7FFF) == 0x7F80, (out & 0x8000) | 0x7F7F, out)
    return out.astype(np.uint16)


def fp16_reference(x, saturate):
    x = np.asarray(x, np.float32)
    with np.errstate(over="ignore"):
        out = x.astype(np.float16).view(np.uint16)
    nan = np.isnan(x)
    out = np.where(nan, np.where(np.signbit(x), 0xFE00, 0x7E00), out)
    if saturate:
        out = np.where((out & 0x7FFF) == 0x7C00, (out & 0x8000) | 0x7BFF, out)
    return out.astype(np.uint16)


@pytest.mark.parametrize("policy", ["default", "saturate"])
@pytest.mark.parametrize("name, reference", [("bf16", bf16_reference), ("fp16", fp16_reference)])
def test_lowp_16bit_encode_matches_numpy_rounding(name, reference, policy):
    x = np.concatenate([golden(FLOAT8, "edges.f32", np.float32), golden(FLOAT8, "random.f32", np.float32)])
    np.testing.assert_array_equal(F.lowp_encode(name, x, overflow=policy), reference(x, policy == "saturate"))


def documented_departure(name, policy, x):
    """Where fixq may differ from the ml_dtypes tables (see tests/lowp/golden_test.cpp)."""
    info = F.lowp_type_info(name)
    b = x.view(np.uint32)
    nan_into_no_nan = np.isnan(x) & (not info.has_nan)
    inf_saturates = np.isinf(x) & (policy == "saturate") & (name not in ("e2m3fn", "e3m2fn", "e2m1fn"))
    e8m0_subnormal = (name == "e8m0fnu") & (b > 0x00400000) & (b < 0x00600000)
    return nan_into_no_nan, inf_saturates, e8m0_subnormal


@pytest.mark.parametrize("policy", ["default", "saturate"])
@pytest.mark.parametrize("name", list(GOLDEN_NAME))
def test_lowp_encode_matches_ml_dtypes_except_where_documented(name, policy):
    info = F.lowp_type_info(name)
    suffix = "u16" if info.bits == 16 else "u8"
    e8m0_counts = {"random": 2, "edges": 97, "from_bf16": 31, "from_f16": 0}
    for inputs, set_name in [("inputs_bf16_widened.f32", "from_bf16"), ("inputs_f16_widened.f32", "from_f16"),
                             ("random.f32", "random"), ("edges.f32", "edges")]:
        x = golden(FLOAT8, inputs, np.float32)
        want = golden(FLOAT8, f"{GOLDEN_NAME[name]}.{set_name}.{policy}.{suffix}", np.uint16 if info.bits == 16 else np.uint8)
        nan_dep, inf_dep, e8m0_dep = documented_departure(name, policy, x)
        # NaN into a type without NaN is an error in fixq (ml_dtypes gives -0 for +NaN, +0 for -NaN).
        if nan_dep.any():
            sign = np.signbit(x[nan_dep])
            assert np.all(want[nan_dep] == np.where(sign, 0, 1 << (info.bits - 1)))
            with pytest.raises(ValueError, match=f"element {np.flatnonzero(nan_dep)[0]} is NaN"):
                F.lowp_encode(name, x, overflow=policy)
        keep = ~nan_dep
        got = F.lowp_encode(name, x[keep], overflow=policy)
        w, inf_dep, e8m0_dep = want[keep], inf_dep[keep], e8m0_dep[keep]
        # Infinities under saturate: fixq gives +-max (e8m0: max for +inf, 0x00 for -inf).
        if inf_dep.any():
            xs = x[keep][inf_dep]
            maxcode = int(F.lowp_encode(name, info.max))
            if info.is_signed:
                sign_bit = 0x8000 if info.bits == 16 else 1 << (info.bits - 1)
                expect = np.where(xs < 0, maxcode | sign_bit, maxcode)
            else:
                expect = np.where(xs < 0, 0, maxcode)
            np.testing.assert_array_equal(got[inf_dep], expect)
        # e8m0 inputs in (2^-127, 1.5 * 2^-127): fixq gives the nearer 0x00, ml_dtypes 0x01.
        assert np.all(got[e8m0_dep] == 0) and np.all(w[e8m0_dep] == 1)
        if name == "e8m0fnu":
            assert int(e8m0_dep.sum()) == e8m0_counts[set_name], set_name
        same = ~(inf_dep | e8m0_dep)
        bad = np.flatnonzero(got[same] != w[same])
        assert bad.size == 0, f"{set_name}: {[(hex(x[keep][same][i].view(np.uint32)), got[same][i], w[same][i]) for i in bad[:5]]}"


def test_lowp_decode_then_encode_returns_every_code():
    for t in F.lowp_types():
        dtype = np.uint16 if t.bits == 16 else np.uint8
        codes = np.arange(2**t.bits, dtype=dtype)
        back = F.lowp_encode(t.name, F.lowp_decode(t.name, codes))
        nan = np.isnan(F.lowp_decode(t.name, codes))
        np.testing.assert_array_equal(back[~nan], codes[~nan], err_msg=t.name)


@pytest.mark.parametrize("bits", [2, 4, 6, 8])
def test_pack_codes_is_the_little_endian_bit_string(bits):
    rng = np.random.default_rng(bits)
    for n in [0, 1, 2, 3, 4, 5, 31, 32, 33, 1000]:
        codes = rng.integers(0, 2**bits, n).astype(np.uint8)
        packed = F.pack_codes(bits, codes)
        assert packed.shape == (F.packed_code_bytes(bits, n),) == ((n * bits + 7) // 8,)
        np.testing.assert_array_equal(packed, pack_bits_reference(codes, bits))
        np.testing.assert_array_equal(F.unpack_codes(bits, packed, n), codes)
    assert F.pack_codes(4, np.array([0x1, 0x2, 0x3], np.uint8)).tolist() == [0x21, 0x03]
    assert F.pack_codes(2, np.array([1, 2, 3, 0, 3], np.uint8)).tolist() == [0b00111001, 0b11]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: F.lowp_encode("e4m3", [1.0]), "unknown low-precision type 'e4m3'; known: e4m3fn"),
        (lambda: F.lowp_encode("e4m3fn", [1.0], overflow="clip"), "overflow must be default or saturate"),
        (lambda: F.lowp_encode("e2m1fn", [1.0, 2.0, np.nan]), "element 2 is NaN"),
        (lambda: F.lowp_encode("e3m2fn", ["a"]), "real numeric"),
        (lambda: F.lowp_decode("e4m3fn", np.zeros(3, np.uint16)), "expected dtype uint8, got uint16"),
        (lambda: F.lowp_decode("bf16", np.zeros(3, np.uint8)), "expected dtype uint16, got uint8"),
        (lambda: F.lowp_decode("e4m3fn", [1, 2]), "expected dtype uint8"),
        (lambda: F.lowp_decode("e2m1fn", np.array([1, 16], np.uint8)), "element 1 = 16"),
        (lambda: F.lowp_decode("e3m2fn", np.array([0x40], np.uint8)), "element 0 = 64"),
        (lambda: F.pack_codes(5, np.zeros(4, np.uint8)), "2, 4, 6 or 8 bits, not 5"),
        (lambda: F.pack_codes(4, np.array([1, 16], np.uint8)), "code 16 at index 1"),
        (lambda: F.unpack_codes(4, np.array([0x10], np.uint8), 1), "nonzero unused bits"),
        (lambda: F.unpack_codes(6, np.zeros(3, np.uint8), 5), "take 4 packed bytes; got 3"),
        (lambda: F.unpack_codes(4, np.zeros(1, np.uint8), -1), "bad element count"),
    ],
)
def test_lowp_bad_input_is_a_value_error(call, message):
    with pytest.raises(ValueError) as e:
        call()
    assert message in str(e.value)
