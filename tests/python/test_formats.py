"""fixq.formats against independent oracles.

* GGUF: the golden vectors of ggml itself (../shared/vectors/ggml: bytes, dequantized
  floats, dot products), and numpy re-implementations of ggml's published q8_0 / q4_0
  reference quantizers.
* Low-precision floats: the ml_dtypes tables of ../shared/vectors/float8 (with the three
  departures fixq documents), decoding of every code from the format definitions, and a
  round-to-nearest-even encoder written here from the same definitions.
* OCP MX: a per-block reference from the spec (shared exponent by frexp, elements by the
  encoder above on the exact scaled value, bits packed by numpy).
* Packed weights: GPTQ v1 tensors packed by numpy, the dequantization formula, and the
  documented error bound of the weight-only matmul.

Missing golden files fail (never skip): they are the acceptance criterion, as in the C++
suite. Run from the repository: PYTHONPATH=<build>/python /usr/bin/python3 -m pytest -q tests/python
"""

import os
import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest

import fixq

F = fixq.formats

REPO = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("FIXQ_SHARED_DIR", REPO.parent / "shared"))
GGML = SHARED / "vectors" / "ggml"
FLOAT8 = SHARED / "vectors" / "float8"

ROWS, ROW_LEN = 64, 256


def golden(folder, name, dtype):
    path = folder / name
    if not path.is_file():
        pytest.fail(f"golden vector file {path} is missing (see {folder}/README.md)")
    return np.fromfile(path, dtype=dtype)


def tsv(folder, name):
    path = folder / name
    if not path.is_file():
        pytest.fail(f"golden vector file {path} is missing")
    lines = path.read_text().splitlines()[1:]
    return [line.split("\t") for line in lines if line]


def f32_bits(a):
    return np.asarray(a, dtype=np.float32).view(np.uint32)


# ================================================================= GGUF: ggml's own outputs


def gguf_names():
    return [t.name for t in F.gguf_types()]


def test_gguf_traits_match_types_tsv():
    rows = {f[0]: f for f in tsv(GGML, "types.tsv") if f[0] != "nvfp4"}  # nvfp4: not implemented
    assert sorted(rows) == sorted(gguf_names())
    ids = []
    for t in F.gguf_types():
        f = rows[t.name]
        assert (t.ggml_type, t.block_elems, t.block_bytes) == (int(f[1]), int(f[2]), int(f[3])), t.name
        assert F.gguf_packed_size(t.name, ROW_LEN) == int(f[4])
        assert F.gguf_packed_size(t.name, (ROWS, ROW_LEN)) == int(f[6])
        assert t.ggml_dequantize == (f[7] == "yes")
        assert F.gguf_type_info(t.name).block_bytes == t.block_bytes
        ids.append(t.ggml_type)
    assert ids == sorted(ids)  # ggml type-id order


def caveat_blocks(kind):
    return {(f[0], int(f[1]), -1 if f[2] == "-" else int(f[2])) for f in tsv(GGML, "caveats.tsv") if f[3] == kind}


@pytest.mark.parametrize("name", gguf_names())
def test_gguf_quantize_matches_ggml_bytes(name):
    t = F.gguf_type_info(name)
    x = golden(GGML, "inputs.f32", np.float32).reshape(ROWS, ROW_LEN)
    want = golden(GGML, f"{name}.bin", np.uint8).reshape(ROWS, -1)
    got = F.gguf_quantize(name, x)
    assert got.dtype == np.uint8 and got.shape == want.shape
    # iq4_nl blocks of |x| < 1e-15: ggml packs uninitialised memory; compare d only and
    # check fixq's documented choice (d = 0, every index 8).
    unspecified = {(r, b) for f, r, b in caveat_blocks("unspecified_in_ggml") if f == f"{name}.bin"}
    blocks_got = got.reshape(ROWS, -1, t.block_bytes)
    blocks_want = want.reshape(ROWS, -1, t.block_bytes)
    for r, b in unspecified:
        assert bytes(blocks_got[r, b, :2]) == bytes(blocks_want[r, b, :2]) == b"\0\0"
        assert np.all(blocks_got[r, b, 2:] == 0x88)
        blocks_got[r, b] = blocks_want[r, b]
    mismatch = np.argwhere(np.any(blocks_got != blocks_want, axis=2))
    assert mismatch.size == 0, f"{name}: (row, block) differing from ggml: {mismatch[:5].tolist()}"


@pytest.mark.parametrize("name", ["q8_0", "q8_1", "q8_K"])
def test_gguf_activation_set_matches_ggml(name):
    xb = golden(GGML, "inputs_b.f32", np.float32)
    want = golden(GGML, f"inputs_b.{name}.bin", np.uint8)
    np.testing.assert_array_equal(F.gguf_quantize(name, xb), want)


@pytest.mark.parametrize("name", [t.name for t in F.gguf_types() if t.ggml_dequantize])
def test_gguf_dequantize_matches_ggml_bit_for_bit(name):
    data = golden(GGML, f"{name}.bin", np.uint8).reshape(ROWS, -1)
    want = golden(GGML, f"{name}.dequant.f32", np.float32).reshape(ROWS, ROW_LEN)
    got = F.gguf_dequantize(name, data)
    assert got.dtype == np.float32 and got.shape == (ROWS, ROW_LEN)
    np.testing.assert_array_equal(f32_bits(got), f32_bits(want))
    # The flat form with an explicit shape reads the same bytes.
    np.testing.assert_array_equal(
        f32_bits(F.gguf_dequantize(name, data.ravel(), shape=(ROWS, ROW_LEN))), f32_bits(want))


def test_gguf_dots_match_ggml_generic_bit_for_bit():
    nonfinite = caveat_blocks("nonfinite")
    pairs = 0
    for t in F.gguf_types():
        if t.dot_type is None:
            continue
        x = golden(GGML, f"{t.name}.bin", np.uint8).reshape(ROWS, -1)
        y = golden(GGML, f"inputs_b.{t.dot_type}.bin", np.uint8).reshape(ROWS, -1)
        file = f"dot_{t.name}_{t.dot_type}.f32"
        want = golden(GGML, file, np.float32)
        rows = F.gguf_dot(t.name, x, y)
        assert rows.shape == (ROWS,) and rows.dtype == np.float32
        for r in range(ROWS):
            one = F.gguf_dot(t.name, x[r], y[r])
            assert isinstance(one, float) and (one == rows[r] or np.isnan(one) and np.isnan(rows[r]))
            if (file, r, -1) in nonfinite:
                assert np.isnan(rows[r]) and np.isnan(want[r]), (file, r)
            else:
                assert f32_bits(rows[r]) == f32_bits(want[r]), (file, r, rows[r], want[r])
        pairs += 1
    assert pairs == 12


# ============================================ GGUF: numpy re-implementations of ggml's formulas


def fp16_bytes(d):
    return np.asarray(d, dtype=np.float32).astype("<f2").view(np.uint8).reshape(-1, 2)


def fp16_value(b):
    return np.ascontiguousarray(b).view("<f2").astype(np.float32).ravel()


def q8_0_reference(x):
    """ggml's quantize_row_q8_0_ref: d = amax / 127, q = roundf(x * (1/d)) (ties away from 0)."""
    blocks = np.asarray(x, np.float32).reshape(-1, 32)
    amax = np.max(np.abs(blocks), axis=1)
    d = (amax / np.float32(127)).astype(np.float32)
    with np.errstate(divide="ignore"):
        inv = np.where(d != 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
    x0 = (blocks * inv[:, None]).astype(np.float32)
    q = np.sign(x0) * np.floor(np.abs(x0.astype(np.float64)) + 0.5)  # roundf, exact in double
    return np.concatenate([fp16_bytes(d), q.astype(np.int8).view(np.uint8)], axis=1).ravel()


def q4_0_reference(x):
    """ggml's quantize_row_q4_0_ref: max = the first value of largest |x| (+0 for a zero block),
    d = max / -8, q = min(15, (int8)(x * (1/d) + 8.5f)); byte j holds q[j] | q[j+16] << 4."""
    blocks = np.asarray(x, np.float32).reshape(-1, 32)
    absb = np.abs(blocks)
    first = np.argmax(absb, axis=1)  # the first maximum, as ggml's strict `amax < |v|`
    mx = blocks[np.arange(len(blocks)), first]
    mx = np.where(absb.max(axis=1) == 0, np.float32(0), mx).astype(np.float32)
    d = (mx / np.float32(-8)).astype(np.float32)
    with np.errstate(divide="ignore"):
        inv = np.where(d != 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
    x0 = (blocks * inv[:, None]).astype(np.float32)
    t = (x0 + np.float32(8.5)).astype(np.float32)
    q = np.minimum(15, np.trunc(t)).astype(np.uint8)
    qs = q[:, :16] | (q[:, 16:] << 4)
    return np.concatenate([fp16_bytes(d), qs], axis=1).ravel()


def q8_0_dequant_reference(data):
    blocks = np.asarray(data, np.uint8).reshape(-1, 34)
    d = fp16_value(blocks[:, :2])
    return (blocks[:, 2:].view(np.int8).astype(np.float32) * d[:, None]).astype(np.float32).ravel()


def q4_0_dequant_reference(data):
    blocks = np.asarray(data, np.uint8).reshape(-1, 18)
    d = fp16_value(blocks[:, :2])
    q = np.concatenate([blocks[:, 2:] & 0x0F, blocks[:, 2:] >> 4], axis=1).astype(np.int32) - 8
    return (q.astype(np.float32) * d[:, None]).astype(np.float32).ravel()


def formula_inputs():
    rng = np.random.default_rng(8)
    parts = [
        golden(GGML, "inputs.f32", np.float32),
        rng.standard_normal(32 * 512).astype(np.float32),
        (rng.standard_normal(32 * 256) * 10.0 ** rng.integers(-20, 5, 32 * 256)).astype(np.float32),
        rng.integers(-127, 127, 32 * 64).astype(np.float32) + 0.5,  # half-integers
        np.zeros(64, np.float32),
    ]
    x = np.concatenate(parts)
    x[-32:] = -0.0
    return x


@pytest.mark.parametrize(
    "name, quant_ref, dequant_ref",
    [("q8_0", q8_0_reference, q8_0_dequant_reference), ("q4_0", q4_0_reference, q4_0_dequant_reference)],
)
def test_gguf_matches_ggml_published_formula(name, quant_ref, dequant_ref):
    x = formula_inputs()
    got = F.gguf_quantize(name, x)
    want = quant_ref(x)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"{name}: first differing bytes at {bad[:5]} (block {bad[0] // F.gguf_type_info(name).block_bytes})"
    np.testing.assert_array_equal(f32_bits(F.gguf_dequantize(name, got)), f32_bits(dequant_ref(got)))


def test_gguf_q8_0_rounds_ties_away_from_zero():
    # Each block holds +-127 so d = 1 exactly: 85.5 -> 86, -16.5 -> -17 (roundf).
    x = np.zeros(32, np.float32)
    x[:4] = [127, 85.5, -16.5, 0.5]
    q = F.gguf_quantize("q8_0", x)[2:].view(np.int8)
    assert q[:4].tolist() == [127, 86, -17, 1]


def test_gguf_shapes_layouts_and_dtypes():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 2, 64)).astype(np.float32)
    b = F.gguf_quantize("q4_K", np.zeros((2, 256), np.float32))
    assert b.shape == (2, 144)
    b = F.gguf_quantize("q8_0", x)
    assert b.shape == (3, 2, 68)
    assert F.gguf_dequantize("q8_0", b).shape == (3, 2, 64)
    # Strided, Fortran-ordered and float64 inputs give the bytes of their float32 C copy.
    big = rng.standard_normal((4, 128))
    np.testing.assert_array_equal(F.gguf_quantize("q8_0", big[:, ::2]),
                                  F.gguf_quantize("q8_0", np.ascontiguousarray(big[:, ::2], np.float32)))
    np.testing.assert_array_equal(F.gguf_quantize("q8_0", np.asfortranarray(big)),
                                  F.gguf_quantize("q8_0", big.astype(np.float32)))
    # bytes-like packed data.
    np.testing.assert_array_equal(F.gguf_dequantize("q8_0", bytes(b.tobytes()), shape=(3, 2, 64)),
                                  F.gguf_dequantize("q8_0", b))
    assert F.gguf_quantize("q4_0", np.zeros((0, 32), np.float32)).shape == (0, 18)


def test_gguf_scale_beyond_fp16_is_stored_as_ggml_does_and_reported():
    x = np.ones(96, np.float32)
    x[40] = 1e6  # q4_0: d = -1e6 / 8 overflows fp16
    b = F.gguf_quantize("q4_0", x)
    assert F.gguf_first_invalid_block("q4_0", b) == 1
    assert np.isinf(fp16_value(b.reshape(3, 18)[1, :2])[0])
    assert F.gguf_first_invalid_block("q4_0", F.gguf_quantize("q4_0", np.ones(96))) == -1


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: F.gguf_quantize("q4_2", np.zeros(32)), "unknown GGUF type 'q4_2'; known types: q4_0"),
        (lambda: F.gguf_quantize("q4_0", np.zeros(33)), "multiple of 32"),
        (lambda: F.gguf_quantize("q4_K", np.zeros((2, 32))), "multiple of 256"),
        (lambda: F.gguf_quantize("q4_0", np.float32(1)), "has no axis"),
        (lambda: F.gguf_quantize("q4_0", np.zeros(32, np.complex64)), "real numeric"),
        (lambda: F.gguf_quantize("q4_0", np.r_[np.zeros(40), np.nan, np.zeros(23)]), "element 40 (in block 1) is NaN"),
        (lambda: F.gguf_quantize("q8_0", np.r_[np.zeros(3), -np.inf, np.zeros(28)]), "-inf"),
        (lambda: F.gguf_dequantize("q8_0", np.zeros(35, np.uint8)), "not a whole number of blocks"),
        (lambda: F.gguf_dequantize("q8_0", np.zeros(34, np.int8)), "expected dtype uint8, got int8"),
        (lambda: F.gguf_dequantize("q8_0", np.zeros(34, np.float32)), "expected dtype uint8"),
        (lambda: F.gguf_dequantize("q8_0", np.zeros(34, np.uint8), shape=(64,)), "(truncated)"),
        (lambda: F.gguf_dequantize("q8_0", np.zeros(102, np.uint8), shape=(64,)), "(oversized)"),
        (lambda: F.gguf_dot("q8_1", np.zeros(36, np.uint8), np.zeros(36, np.uint8)), "no dot product"),
        (lambda: F.gguf_dot("q4_0", np.zeros(18, np.uint8), np.zeros(68, np.uint8)), "32 elements"),
        (lambda: F.gguf_dot("q4_0", np.zeros((2, 18), np.uint8), np.zeros((3, 34), np.uint8)), "same leading shape"),
        (lambda: F.gguf_first_invalid_block("q4_0", np.zeros(17, np.uint8)), "not a whole number"),
        (lambda: F.gguf_packed_size("q4_0", 31), "not a multiple of 32"),
    ],
)
def test_gguf_bad_input_is_a_value_error(call, message):
    with pytest.raises(ValueError) as e:
        call()
    assert message in str(e.value)


# ============================================================= low-precision floats

# name -> (exponent bits, mantissa bits, bias, kind); kind picks the special codes:
#   ieee: all-ones exponent is inf (mantissa 0) or NaN; fn: only S.1111.111 is NaN;
#   fnuz: 0x80 is the only NaN, no -0, no inf; e8m0: unsigned 2^(c - 127), 0xFF NaN; none: no specials.
NARROW = {
    "e4m3fn": (4, 3, 7, "fn"),
    "e4m3fnuz": (4, 3, 8, "fnuz"),
    "e5m2": (5, 2, 15, "ieee"),
    "e5m2fnuz": (5, 2, 16, "fnuz"),
    "e8m0fnu": (8, 0, 127, "e8m0"),
    "e4m3b11fnuz": (4, 3, 11, "fnuz"),
    "e2m3fn": (2, 3, 1, "none"),
    "e3m2fn": (3, 2, 3, "none"),
    "e2m1fn": (2, 1, 1, "none"),
}
GOLDEN_NAME = {
    "e4m3fn": "float8_e4m3fn", "e4m3fnuz": "float8_e4m3fnuz", "e5m2": "float8_e5m2",
    "e5m2fnuz": "float8_e5m2fnuz", "e8m0fnu": "float8_e8m0fnu", "e4m3b11fnuz": "float8_e4m3b11fnuz",
    "e2m3fn": "float6_e2m3fn", "e3m2fn": "float6_e3m2fn", "e2m1fn": "float4_e2m1fn",
    "bf16": "bfloat16", "fp16": "float16",
}
QNAN, QNAN_NEG = 0x7FC00000, 0xFFC00000


def formula_decode(name):
    """float32 bit patterns of every code, from the definition of the format."""
    e, m, bias, kind = NARROW[name]
    if kind == "e8m0":
        vals = [2.0 ** (c - 127) for c in range(255)]
        return np.r_[np.array(vals, np.float32).view(np.uint32), np.uint32(QNAN)]
    sign_bit = 1 << (e + m)
    out = []
    for c in range(2 * sign_bit):
        s, ex, man = c >> (e + m), (c >> m) & ((1 << e) - 1), c & ((1 << m) - 1)
        if kind == "fnuz" and c == 0x80:
            out.append(QNAN_NEG)
            continue
        if (kind == "fn" and ex == (1 << e) - 1 and man == (1 << m) - 1) or (kind == "ieee" and ex == (1 << e) - 1 and man):
            out.append(QNAN_NEG if s else QNAN)
            continue
        if kind == "ieee" and ex == (1 << e) - 1:
            v = np.inf
        elif ex == 0:
            v = man * 2.0 ** (1 - bias - m)
        else:
            v = (1 + man / 2**m) * 2.0 ** (ex - bias)
        out.append(int(np.array(-v if s else v, np.float32).view(np.uint32)))
    return np.array(out, np.uint32)


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


def rne_encode(name, x, saturate):
    """Round-to-nearest-even encoder of the narrow types, written from the definitions: x (float64,
    exact) -> code. Ties go to the even code; a value past max rounds against the next grid point
    max + ulp (the code after max), and landing there is overflow. NaN is left to the caller."""
    e, m, bias, kind = NARROW[name]
    table = formula_decode(name).view(np.float32).astype(np.float64)
    x = np.asarray(x, np.float64)
    neg, a = np.signbit(x), np.abs(x)
    if kind == "e8m0":
        grid, top_code = table[:255], 254
        past_max = 2 * grid[-1]
    else:
        positive = table[: len(table) // 2]
        top_code = int(np.flatnonzero(np.isfinite(positive))[-1])
        grid = positive[: top_code + 1]
        past_max = 2 * grid[-1] - grid[-2]  # max + one ulp of its binade
    ext = np.r_[grid, past_max]
    hi = np.clip(np.searchsorted(ext, a, side="left"), 1, len(ext) - 1)
    lo = hi - 1
    mid = (ext[lo] + ext[hi]) / 2  # exact: neighbours are dyadic with few bits
    if kind == "e8m0":
        up = a >= mid  # no mantissa: ties round up
    else:
        up = (a > mid) | ((a == mid) & (hi % 2 == 0))
    mag = np.where(a <= ext[0], 0, np.where(up, hi, lo))
    over = np.isinf(a) | (mag == len(ext) - 1)
    mag = np.where(over, top_code, mag).astype(np.int64)
    if kind == "e8m0":
        code = np.where(over & (not saturate), 0xFF, mag)
        return np.where(neg | (a == 0), 0 if saturate else 0xFF, code).astype(np.uint8)
    sign = 1 << (e + m)
    overflow_nan = np.zeros_like(over)
    if not saturate:
        if kind == "ieee":
            mag = np.where(over, top_code + 1, mag)  # the infinity code
        elif kind == "fn":
            mag = np.where(over, sign - 1, mag)  # S.1111.111, NaN with the sign kept
        elif kind == "fnuz":
            overflow_nan = over  # the one unsigned NaN 0x80
    negative = neg & ((mag != 0) | (kind != "fnuz"))  # fnuz has no -0
    code = np.where(negative, mag | sign, mag)
    return np.where(overflow_nan, 0x80, code).astype(np.uint8)


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
    e8m0_counts = {"random": 269, "edges": 97, "from_bf16": 31, "from_f16": 0}
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


def pack_bits_reference(codes, bits):
    c = np.asarray(codes, np.uint8).ravel()
    bitstring = np.unpackbits(c[:, None], axis=1, bitorder="little")[:, :bits].ravel()
    return np.packbits(bitstring, bitorder="little")


@pytest.mark.parametrize("bits", [4, 6, 8])
def test_pack_codes_is_the_little_endian_bit_string(bits):
    rng = np.random.default_rng(bits)
    for n in [0, 1, 2, 3, 4, 5, 31, 32, 33, 1000]:
        codes = rng.integers(0, 2**bits, n).astype(np.uint8)
        packed = F.pack_codes(bits, codes)
        assert packed.shape == (F.packed_code_bytes(bits, n),) == ((n * bits + 7) // 8,)
        np.testing.assert_array_equal(packed, pack_bits_reference(codes, bits))
        np.testing.assert_array_equal(F.unpack_codes(bits, packed, n), codes)
    assert F.pack_codes(4, np.array([0x1, 0x2, 0x3], np.uint8)).tolist() == [0x21, 0x03]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: F.lowp_encode("e4m3", [1.0]), "unknown low-precision type 'e4m3'; known: e4m3fn"),
        (lambda: F.lowp_encode("e4m3fn", [1.0], overflow="clip"), "'default' or 'saturate'"),
        (lambda: F.lowp_encode("e2m1fn", [1.0, 2.0, np.nan]), "element 2 is NaN"),
        (lambda: F.lowp_encode("e3m2fn", ["a"]), "real numeric"),
        (lambda: F.lowp_decode("e4m3fn", np.zeros(3, np.uint16)), "expected dtype uint8, got uint16"),
        (lambda: F.lowp_decode("bf16", np.zeros(3, np.uint8)), "expected dtype uint16, got uint8"),
        (lambda: F.lowp_decode("e4m3fn", [1, 2]), "expected dtype uint8"),
        (lambda: F.lowp_decode("e2m1fn", np.array([1, 16], np.uint8)), "element 1 = 16"),
        (lambda: F.lowp_decode("e3m2fn", np.array([0x40], np.uint8)), "element 0 = 64"),
        (lambda: F.pack_codes(5, np.zeros(4, np.uint8)), "4, 6 or 8 bits, not 5"),
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


# ======================================================================== packed weights


def gamma(j):
    u = 2.0**-24
    return j * u / (1 - j * u)


def exact_weights(w):
    """(q - z) * s per element in float64 (exact), from the parts the weights report."""
    q = w.codes().astype(np.float64)
    g = w.g_idx()
    return (q - w.zeros()[g].astype(np.float64)) * w.scales()[g].astype(np.float64)


@pytest.mark.parametrize("bits", [2, 4, 8])
@pytest.mark.parametrize("symmetric", [False, True])
def test_packed_quantize_dequantize_properties(bits, symmetric):
    rng = np.random.default_rng(bits)
    k, n, gs = 256, 40, 64
    wf = (rng.standard_normal((k, n)) * rng.uniform(0.01, 10, n)).astype(np.float32)
    wf[:gs, 3] = 0  # an all-zero group dequantizes to exact zeros
    w = F.PackedWeights.quantize(wf, bits=bits, group_size=gs, symmetric=symmetric)
    assert (w.bits, w.rows, w.cols, w.group_size, w.groups, w.act_order) == (bits, k, n, gs, k // gs, False)
    q, s, z = w.codes(), w.scales(), w.zeros()
    assert q.shape == (k, n) and s.shape == z.shape == (k // gs, n)
    assert q.max() <= 2**bits - 1 and np.all(s > 0) and np.all((z >= 0) & (z <= 2**bits - 1))
    if symmetric:
        assert np.all(z == 2 ** (bits - 1))
    np.testing.assert_array_equal(w.g_idx(), np.arange(k) // gs)
    deq = w.dequantize()
    g = np.arange(k) // gs
    np.testing.assert_array_equal(deq, (q.astype(np.int32) - z[g]).astype(np.float32) * s[g])
    # Ranges are never clipped: every weight is within half a step (plus float32 rounding).
    tol = 0.5 * s[g].astype(np.float64) * (1 + 2.0**-20) + 2 * np.spacing(np.abs(wf)).astype(np.float64)
    assert np.all(np.abs(wf.astype(np.float64) - deq) <= tol)
    assert np.all(deq[:gs, 3] == 0)
    # from_parts rebuilds the same weights.
    w2 = F.PackedWeights.from_parts(bits, q, s, z, w.g_idx())
    np.testing.assert_array_equal(w2.dequantize(), deq)
    assert w.packed_bytes >= k * n * bits // 8 + s.nbytes + z.nbytes


@pytest.mark.parametrize("bits", [2, 4, 8])
def test_weight_only_matmul_within_documented_bound(bits):
    rng = np.random.default_rng(10 + bits)
    k, n, gs, m = 512, 70, 128, 5
    w = F.PackedWeights.quantize(rng.standard_normal((k, n)).astype(np.float32), bits=bits, group_size=gs)
    x = rng.standard_normal((m, k)).astype(np.float32)
    y = F.weight_only_matmul(x, w)
    assert y.shape == (m, n) and y.dtype == np.float32
    ex = exact_weights(w)
    exact = x.astype(np.float64) @ ex
    bound = gamma(gs + w.groups + 1) * (np.abs(x.astype(np.float64)) @ np.abs(ex))
    assert np.all(np.abs(y - exact) <= bound * (1 + 1e-9))
    np.testing.assert_array_equal(w.matmul(x), y)
    np.testing.assert_array_equal(F.weight_only_matmul(x[2], w), y[2])  # 1-D x
    np.testing.assert_array_equal(F.weight_only_matmul(x.reshape(1, m, k), w), y.reshape(1, m, n))
    assert F.weight_only_matmul(np.zeros((0, k), np.float32), w).shape == (0, n)
    xn = x.copy()
    xn[1, 7] = np.nan
    yn = F.weight_only_matmul(xn, w)
    assert np.all(np.isnan(yn[1])) and not np.any(np.isnan(np.delete(yn, 1, axis=0)))


def gptq_pack_rows(q, bits):
    """GPTQ v1 qweight: row r packs q[r * 32/bits + j, n] at bits [bits*j, bits*j + bits)."""
    per = 32 // bits
    k, n = q.shape
    q = q.astype(np.uint32).reshape(k // per, per, n)
    out = np.zeros((k // per, n), np.uint32)
    for j in range(per):
        out |= q[:, j, :] << np.uint32(bits * j)
    return out.view(np.int32)


def gptq_pack_zeros(z, bits):
    """GPTQ v1 qzeros: column c packs (z[g, c * 32/bits + j] - 1) mod 2^bits at bits [bits*j, ...)."""
    per = 32 // bits
    g, n = z.shape
    stored = ((z.astype(np.int64) - 1) % (1 << bits)).astype(np.uint32).reshape(g, n // per, per)
    out = np.zeros((g, n // per), np.uint32)
    for j in range(per):
        out |= stored[:, :, j] << np.uint32(bits * j)
    return out.view(np.int32)


@pytest.mark.parametrize("bits", [2, 4, 8])
@pytest.mark.parametrize("act_order", [False, True])
def test_gptq_import_export_and_npy(bits, act_order, tmp_path):
    rng = np.random.default_rng(100 + bits + act_order)
    k, n, gs = 128, 32, 32
    groups = k // gs
    q = rng.integers(0, 2**bits, (k, n)).astype(np.uint8)
    z = rng.integers(1, 2**bits, (groups, n)).astype(np.int32)
    z[0, :3] = 0  # stored as 2^bits - 1 and read back as 0
    s = (rng.uniform(0.001, 0.1, (groups, n))).astype(np.float16).astype(np.float32)
    g_idx = np.repeat(np.arange(groups, dtype=np.int32), gs)
    if act_order:
        rng.shuffle(g_idx)
    qweight, qzeros = gptq_pack_rows(q, bits), gptq_pack_zeros(z, bits)
    w = F.import_gptq(qweight, qzeros, s.astype(np.float16), g_idx=g_idx, bits=bits)
    assert w.act_order == act_order
    np.testing.assert_array_equal(w.codes(), q)
    np.testing.assert_array_equal(w.zeros(), z)
    np.testing.assert_array_equal(w.scales(), s)
    np.testing.assert_array_equal(w.g_idx(), g_idx)
    np.testing.assert_array_equal(w.dequantize(), (q.astype(np.int32) - z[g_idx]).astype(np.float32) * s[g_idx])
    t = F.export_gptq(w)
    assert t["bits"] == bits
    np.testing.assert_array_equal(t["qweight"], qweight)
    np.testing.assert_array_equal(t["qzeros"], qzeros)
    np.testing.assert_array_equal(t["scales"], s)
    np.testing.assert_array_equal(t["g_idx"], g_idx)
    prefix = str(tmp_path / "layer.")
    F.save_gptq_npy(prefix, w)
    assert np.load(prefix + "scales.npy").dtype == np.float16  # every scale is a float16
    np.testing.assert_array_equal(np.load(prefix + "qweight.npy"), qweight)
    np.testing.assert_array_equal(F.load_gptq_npy(prefix, bits).dequantize(), w.dequantize())
    if not act_order:  # without g_idx the groups are k // gs
        np.testing.assert_array_equal(F.import_gptq(qweight, qzeros, s, bits=bits).dequantize(), w.dequantize())


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: F.PackedWeights.quantize(np.ones((64, 4)), bits=3, group_size=32), "2, 4 or 8 bits, not 3"),
        (lambda: F.PackedWeights.quantize(np.ones((64, 4)), group_size=48), "does not divide K = 64"),
        (lambda: F.PackedWeights.quantize(np.ones(64), group_size=32), "expected a 2-D array"),
        (lambda: F.PackedWeights.quantize(np.r_[np.ones(63), np.inf].reshape(64, 1), group_size=32), "inf"),
        (lambda: F.PackedWeights.from_parts(4, np.full((8, 2), 16, np.uint8), np.ones((1, 2)), np.zeros((1, 2), np.int32)),
         "does not fit in 4 bits"),
        (lambda: F.PackedWeights.from_parts(4, np.zeros((8, 2), np.uint8), np.ones((1, 2)), np.zeros((2, 1), np.int32)),
         "must have the shape of scales"),
        (lambda: F.PackedWeights.from_parts(4, np.zeros((8, 2), np.uint8), np.ones((1, 2)), np.zeros((1, 2), np.int64)),
         "expected dtype int32, got int64"),
        (lambda: F.PackedWeights.from_parts(4, np.zeros((8, 2), np.uint8), np.ones((1, 2)), np.zeros((1, 2), np.int32),
                                            g_idx=np.ones(8, np.int32)), "g_idx"),
        (lambda: F.weight_only_matmul(np.ones((2, 63)), F.PackedWeights.quantize(np.ones((64, 4)), group_size=32)),
         "K = 64"),
        (lambda: F.import_gptq(np.zeros((8, 4), np.int32), np.zeros((2, 1), np.int32), np.ones((2, 3)), bits=4),
         "do not match qweight's N = 4"),
        (lambda: F.load_gptq_npy("/nonexistent/prefix.", 4), "qweight.npy"),
    ],
)
def test_packed_bad_input_is_a_value_error(call, message):
    with pytest.raises(ValueError) as e:
        call()
    assert message in str(e.value)


def test_formats_give_the_same_bytes_from_concurrent_threads():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 4096)).astype(np.float32)
    want = F.gguf_quantize("q4_K", x)
    results = [None] * 4

    def work(i):
        results[i] = F.gguf_quantize("q4_K", x)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, want)


SCALAR_SCRIPT = """
import sys, numpy as np, fixq
F = fixq.formats
x = np.fromfile(sys.argv[1], np.float32)
out = [F.gguf_quantize(t.name, x) for t in F.gguf_types()]
out += [F.lowp_encode(t.name, x, overflow=o) for t in F.lowp_types() if t.has_nan for o in ("default", "saturate")]
out += [F.mx_quantize(t.name, x) for t in F.mx_types()]
np.savez(sys.argv[2], *out)
"""


def test_the_scalar_reference_path_gives_the_same_bytes(tmp_path):
    # FIXQ_ISA=scalar forces the portable reference kernels (fixq/cpu.h) in a fresh process.
    x = golden(GGML, "inputs.f32", np.float32)
    inputs, result = tmp_path / "x.f32", tmp_path / "scalar.npz"
    x.tofile(inputs)
    env = dict(os.environ, FIXQ_ISA="scalar")
    subprocess.run([sys.executable, "-c", SCALAR_SCRIPT, str(inputs), str(result)], env=env, check=True)
    want = [F.gguf_quantize(t.name, x) for t in F.gguf_types()]
    want += [F.lowp_encode(t.name, x, overflow=o) for t in F.lowp_types() if t.has_nan for o in ("default", "saturate")]
    want += [F.mx_quantize(t.name, x) for t in F.mx_types()]
    with np.load(result) as scalar:
        assert len(scalar.files) == len(want)
        for i, w in enumerate(want):
            np.testing.assert_array_equal(scalar[f"arr_{i}"], w, err_msg=f"output {i}")
