"""fixq.formats GGUF block types against independent oracles: the golden vectors of ggml
itself (tests/vectors/ggml: bytes, dequantized floats, dot products), and numpy
re-implementations of ggml's published q8_0 / q4_0 reference quantizers. Also checks that
concurrent threads and the portable scalar kernels (FIXQ_ISA=scalar, fixq/cpu.h) give the
same bytes as the default path, for the GGUF, low-precision and MX encoders.

Missing golden files fail (never skip): they are the acceptance criterion, as in the C++
suite. Run from the repository: PYTHONPATH=<build>/python /usr/bin/python3 -m pytest -q tests/python
"""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from formats_util import F, GGML, f32_bits, golden

ROWS, ROW_LEN = 64, 256


def tsv(folder, name):
    path = folder / name
    if not path.is_file():
        pytest.fail(f"golden vector file {path} is missing")
    lines = path.read_text().splitlines()[1:]
    return [line.split("\t") for line in lines if line]


# ================================================================= GGUF: ggml's own outputs


def gguf_names():
    return [t.name for t in F.gguf_types()]


def test_gguf_traits_match_types_tsv():
    # types_more.tsv: the types ggml's golden set added later (iq4_xs, tq1_0, tq2_0).
    rows = {f[0]: f for f in tsv(GGML, "types.tsv") + tsv(GGML, "types_more.tsv")}
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
    assert pairs == 16


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


# The later types, from the block layouts of the golden vectors' README (ggml-common.h).
IQ4NL_VALUES = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113], np.float32)
# ggml's E2M1 table (kvalues_mxfp4 / 2): code 8 is +0, not -0.
E2M1_VALUES = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, 0, -.5, -1, -1.5, -2, -3, -4, -6], np.float32)


def ue4m3_value(code):
    """UE4M3 as ggml reads it: bit 7 ignored, 0 and 0x7F (NaN) read as 0, bias 7, subnormals m * 2^-9."""
    code = np.asarray(code, np.int64)
    e, m = (code >> 3) & 15, code & 7
    v = np.where(e == 0, m * 2.0**-9, (1 + m / 8) * np.exp2(e - 7.0))
    return np.where((code == 0) | (code == 0x7F), 0.0, v).astype(np.float32)


def tq1_0_digits(b, n):
    """Digit n (most significant first) of TQ1_0 bytes: ((b * 3^n) mod 256 * 3) >> 8."""
    return ((np.asarray(b, np.int64) * 3**n) % 256 * 3) >> 8


def tq1_0_codes(blocks):
    """The 256 codes t + 1 of each TQ1_0 block [nb, 54], in element order."""
    qs, qh = blocks[:, :48], blocks[:, 48:52]
    parts = [tq1_0_digits(qs[:, :32], n) for n in range(5)] + [tq1_0_digits(qs[:, 32:], n) for n in range(5)]
    parts += [tq1_0_digits(qh, n) for n in range(4)]
    return np.concatenate(parts, axis=1)


def tq2_0_codes(blocks):
    qs = blocks[:, :64].astype(np.int64)
    return np.concatenate([(qs[:, 32 * c:32 * c + 32] >> (2 * n)) & 3 for c in range(2) for n in range(4)], axis=1)


def ternary_dequant_reference(name, data):
    nb_bytes, d_at, codes = (54, 52, tq1_0_codes) if name == "tq1_0" else (66, 64, tq2_0_codes)
    blocks = np.asarray(data, np.uint8).reshape(-1, nb_bytes)
    d = fp16_value(blocks[:, d_at:d_at + 2])
    return ((codes(blocks) - 1).astype(np.float32) * d[:, None]).astype(np.float32).ravel()


def ternary_quantize_reference(name, x):
    """ggml's quantize_row_tq*_ref: d = amax, code = lroundf(x * (1/d)) + 1 (ties away from 0)."""
    blocks = np.asarray(x, np.float32).reshape(-1, 256)
    d = np.max(np.abs(blocks), axis=1)
    with np.errstate(divide="ignore"):
        inv = np.where(d != 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
    v = (blocks * inv[:, None]).astype(np.float32)
    c = (np.sign(v) * np.floor(np.abs(v.astype(np.float64)) + 0.5)).astype(np.int64) + 1
    if name == "tq2_0":
        qs = [sum(c[:, 128 * k + 32 * n:128 * k + 32 * n + 32] << (2 * n) for n in range(4)) for k in range(2)]
        body = np.concatenate(qs, axis=1)
    else:
        def pack(groups, extra=0):  # base 3, first digit most significant, scaled to ceil(v * 256 / 243)
            v = sum(g * 3 ** (len(groups) - 1 - i) for i, g in enumerate(groups)) * 3**extra
            return (v * 256 + 242) // 243
        qs0 = pack([c[:, 32 * n:32 * n + 32] for n in range(5)])
        qs1 = pack([c[:, 160 + 16 * n:176 + 16 * n] for n in range(5)])
        qh = pack([c[:, 240 + 4 * n:244 + 4 * n] for n in range(4)], extra=1)
        body = np.concatenate([qs0, qs1, qh], axis=1)
    return np.concatenate([body.astype(np.uint8), fp16_bytes(d)], axis=1).ravel()


def iq4_xs_dequant_reference(data):
    blocks = np.asarray(data, np.uint8).reshape(-1, 136)
    d = fp16_value(blocks[:, :2])
    h = blocks[:, 2].astype(np.int64) | (blocks[:, 3].astype(np.int64) << 8)
    out = []
    for ib in range(8):
        ls = ((blocks[:, 4 + ib // 2] >> (4 * (ib % 2))) & 15) | (((h >> (2 * ib)) & 3) << 4)
        dl = (d * (ls - 32).astype(np.float32)).astype(np.float32)
        q = blocks[:, 8 + 16 * ib:24 + 16 * ib]
        values = IQ4NL_VALUES[np.concatenate([q & 15, q >> 4], axis=1)]
        out.append((dl[:, None] * values).astype(np.float32))
    return np.concatenate(out, axis=1).ravel()


def nvfp4_dequant_reference(data):
    blocks = np.asarray(data, np.uint8).reshape(-1, 36)
    out = []
    for s in range(4):
        q = blocks[:, 4 + 8 * s:12 + 8 * s]
        values = E2M1_VALUES[np.concatenate([q & 15, q >> 4], axis=1)]
        out.append((values * ue4m3_value(blocks[:, s])[:, None]).astype(np.float32))
    return np.concatenate(out, axis=1).ravel()


@pytest.mark.parametrize("name", ["tq1_0", "tq2_0", "iq4_xs", "nvfp4"])
def test_gguf_later_types_dequantize_any_bytes_as_their_layout_says(name):
    # Arbitrary bytes (tq2_0's unused code 3, every UE4M3 code, every scale code) with
    # moderate fp16 scales, and the quantized golden inputs.
    t = F.gguf_type_info(name)
    rng = np.random.default_rng(11)
    data = rng.integers(0, 256, (200, t.block_bytes), dtype=np.uint8)
    d_at = {"tq1_0": 52, "tq2_0": 64, "iq4_xs": 0, "nvfp4": None}[name]
    if d_at is not None:
        data[:, d_at:d_at + 2] = fp16_bytes(rng.standard_normal(200).astype(np.float32))
    reference = {"tq1_0": lambda b: ternary_dequant_reference("tq1_0", b),
                 "tq2_0": lambda b: ternary_dequant_reference("tq2_0", b),
                 "iq4_xs": iq4_xs_dequant_reference, "nvfp4": nvfp4_dequant_reference}[name]
    for packed in (data.ravel(), F.gguf_quantize(name, golden(GGML, "inputs.f32", np.float32))):
        np.testing.assert_array_equal(f32_bits(F.gguf_dequantize(name, packed)), f32_bits(reference(packed)))


@pytest.mark.parametrize("name", ["tq1_0", "tq2_0"])
def test_gguf_ternary_quantize_matches_ggml_published_formula(name):
    x = formula_inputs()
    rng = np.random.default_rng(12)
    ties = rng.integers(-2, 3, 256 * 8).astype(np.float32) * 0.5  # +-0.5 of amax 1: ties away from zero
    ties[::256] = 1.0
    zeros = np.zeros(256, np.float32)
    zeros[::2] = -0.0
    x = np.concatenate([x[: len(x) // 256 * 256], ties, zeros])
    np.testing.assert_array_equal(F.gguf_quantize(name, x), ternary_quantize_reference(name, x))


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


# ============================================== every encoder: threads and the scalar path


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
