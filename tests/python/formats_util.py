"""Helpers shared by the tests of fixq.formats (test_formats_*.py): the golden-vector
readers, float32 bit patterns, and the low-precision float definitions with the
round-to-nearest-even encoder written from them (used by the low-precision tests and, for
the MX elements, by the OCP MX reference).

Missing golden files fail (never skip): they are the acceptance criterion, as in the C++ suite.
"""

import pathlib
import re

import numpy as np
import pytest

import fixq

F = fixq.formats

REPO = pathlib.Path(__file__).resolve().parents[2]
VECTORS = REPO / "tests" / "vectors"
GGML = VECTORS / "ggml"
FLOAT8 = VECTORS / "float8"


def _float8_rule(name):
    """The float8 tables that the repository's copy builds from their rule instead of storing
    them (tests/vectors/float8/README.md, "This copy"), as uint32; None for a stored one."""
    i = np.arange(65536, dtype=np.uint32)
    if name in ("inputs_bf16_widened.f32", "bfloat16.decode.u32"):
        return i << 16
    if name == "inputs_f16_widened.f32":
        return golden(FLOAT8, "float16.decode.u32", np.uint32)
    m = re.fullmatch(r"(bfloat16\.from_bf16|float16\.from_f16)\.(default|saturate)\.u16", name)
    if m:
        exponent, canonical = (0x7F80, 0x7FC0) if name.startswith("bfloat16") else (0x7C00, 0x7E00)
        nan = ((i & exponent) == exponent) & ((i & ~np.uint32(exponent | 0x8000)) != 0)
        return np.where(nan, (i & 0x8000) | canonical, i).astype(np.uint32)
    return None


def golden(folder, name, dtype):
    if folder == FLOAT8:
        rule = _float8_rule(name)
        if rule is not None:
            dtype = np.dtype(dtype)
            return rule.astype(dtype) if dtype.itemsize == 2 else rule.view(dtype)
    path = folder / name
    if not path.is_file():
        pytest.fail(f"golden vector file {path} is missing (see {folder}/README.md)")
    return np.fromfile(path, dtype=dtype)


def f32_bits(a):
    return np.asarray(a, dtype=np.float32).view(np.uint32)


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


def pack_bits_reference(codes, bits):
    c = np.asarray(codes, np.uint8).ravel()
    bitstring = np.unpackbits(c[:, None], axis=1, bitorder="little")[:, :bits].ravel()
    return np.packbits(bitstring, bitorder="little")
