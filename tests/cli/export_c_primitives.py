#!/usr/bin/python3
"""Writes a C test program for the primitives of the C that `fixq gru export-c` generates
(rshr, scale_apply with its 128-bit path, quantize_value), with expected values from
independent oracles: the worked examples of docs/spec.md section 9 (computed with exact
rational arithmetic), and Python's exact integers and numpy's IEEE binary32 division for
random and tie cases. The program #includes the generated NAME.c, so it sees its static
functions; it prints "N passed, 0 failed" or the first failures and exits non-zero.
  usage: export_c_primitives.py SPEC.md GENERATED.c > test.c
"""
import random
import re
import sys

import numpy as np

spec, generated = sys.argv[1], sys.argv[2]
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def blocks(text):
    for body in re.findall(r"```fixq-example\n(.*?)```", text, re.S):
        kv = {}
        for line in body.splitlines():
            if line.strip() and not line.startswith("#"):
                k, v = line.split("=", 1)
                kv[k.strip()] = v.strip()
        yield kv


def ints(s):
    return [int(v) for v in s.split(",")]


def lit(v):
    """A C int64 literal valid for every value."""
    return "INT64_MIN" if v == INT64_MIN else f"INT64_C({v})"


def apply_exact(x, m, shift):
    """A(rho, x) of docs/spec.md 2.3 with Python's exact integers."""
    p = x * m
    if shift <= 0:
        r = p << -shift
    elif shift >= 127:
        r = 0
    else:
        r = (p + (1 << (shift - 1))) >> shift
    return max(INT64_MIN, min(INT64_MAX, r))


def quantize_exact(x, scale, zp, qmin, qmax):
    """docs/spec.md 3.1: binary32 division (numpy), then round half to even, then clamp."""
    if np.isnan(x):
        return zp
    with np.errstate(over="ignore"):  # beyond binary32: +-inf, saturated below as in C
        t = float(np.float32(x) / np.float32(scale))
    if t <= qmin - zp:
        return qmin
    if t >= qmax - zp:
        return qmax
    return zp + round(t)  # Python rounds ties to even


rshr_cases, apply_cases, quant_cases = [], [], []  # rows of C initializers
for ex in blocks(open(spec).read()):
    kind = ex["example"]
    if kind == "rounding_shift":
        n = int(ex["n"])
        rshr_cases += [f"{{{lit(x)}, {n}, {lit(y)}}}" for x, y in zip(ints(ex["x"]), ints(ex["y"]))]
    elif kind in ("scale_from_real", "scale_pow2"):
        m, shift = (int(ex["m"]), int(ex["shift"])) if kind == "scale_from_real" else (1, int(ex["n"]))
        for x, y in zip(ints(ex["x"]), ints(ex["apply"])):
            assert apply_exact(x, m, shift) == y, ("oracle disagrees with the spec", x, m, shift, y)
            apply_cases.append(f"{{{lit(x)}, {m}, {shift}, {lit(y)}}}")
    elif kind == "quantize":
        bits, scale, zp = int(ex["bits"]), float(ex["scale"]), int(ex["zero_point"])
        qmin, qmax = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        for x, q in zip([float(v) for v in ex["x"].split(",")], ints(ex["q"])):
            quant_cases.append(f"{{{x.hex()}f, {scale.hex()}f, {zp}, {qmin}, {qmax}, {q}}}")
assert len(rshr_cases) + len(apply_cases) + len(quant_cases) > 40, "the spec's examples were not found"

rng = random.Random(14)
# A(rho, x) on random int64 values of every magnitude, multipliers of 31 bits and shifts
# of both modes: the products beyond int64 take the generated 128-bit path.
for _ in range(3000):
    x = rng.choice([rng.randint(INT64_MIN, INT64_MAX), rng.randint(-(1 << 40), 1 << 40), rng.randint(-70000, 70000),
                    rng.choice([INT64_MIN, INT64_MAX, -(1 << 32) - 1, (1 << 32) + 1, -(1 << 32), 1 << 32])])
    if rng.random() < 0.5:
        m, shift = rng.randint(1 << 30, (1 << 31) - 1), rng.randint(10, 70)
    else:
        m, shift = 1, rng.randint(-62, 126)
    apply_cases.append(f"{{{lit(x)}, {m}, {shift}, {lit(apply_exact(x, m, shift))}}}")
# Exact ties and their neighbours: x = (k + 1/2) S with a power-of-two S, both signs.
for _ in range(1500):
    scale = 2.0 ** rng.randint(-12, 4)
    k, zp, bits = rng.randint(-300, 300), rng.randint(-20, 20), rng.choice([8, 16])
    qmin, qmax = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    for x in (np.float32((k + 0.5) * scale), np.nextafter(np.float32((k + 0.5) * scale), np.float32(np.inf)),
              np.float32(rng.uniform(-200, 200) * scale)):
        q = quantize_exact(x, scale, zp, qmin, qmax)
        quant_cases.append(f"{{{float(x).hex()}f, {scale.hex()}f, {zp}, {qmin}, {qmax}, {q}}}")
# Free scales: random binary32 scales and inputs, saturating ones included.
for _ in range(1500):
    scale = np.float32(rng.uniform(1e-4, 1.0))
    x = np.float32(rng.choice([rng.uniform(-3, 3), rng.uniform(-1e6, 1e6), 3e38, -3e38]))
    zp = rng.randint(-100, 100)
    q = quantize_exact(x, scale, zp, -32768, 32767)
    quant_cases.append(f"{{{float(x).hex()}f, {float(scale).hex()}f, {zp}, -32768, 32767, {q}}}")


def table(decl, rows):
    return decl + " = {\n  " + ",\n  ".join(rows) + "};"


n = len(rshr_cases) + len(apply_cases) + len(quant_cases)
print(f"/* Generated by tests/cli/export_c_primitives.py: {n} checks. */")
print(f'#include "{generated}"')
print("#include <stdio.h>")
print(table("static const struct { int64_t x; int n; int64_t want; } rshr_cases[]", rshr_cases))
print(table("static const struct { int64_t x; int32_t m, shift; int64_t want; } apply_cases[]", apply_cases))
print(table("static const struct { float x, scale; int32_t zp, qmin, qmax, want; } quant_cases[]", quant_cases))
print("""#define COUNT(a) (sizeof(a) / sizeof(a[0]))
int main(void) {
  int failed = 0, passed = 0;
  size_t i;
  for (i = 0; i < COUNT(rshr_cases); ++i) {
    if (rshr(rshr_cases[i].x, rshr_cases[i].n) == rshr_cases[i].want) ++passed;
    else if (++failed <= 10) printf("FAILED: rshr case %u\\n", (unsigned)i);
  }
  for (i = 0; i < COUNT(apply_cases); ++i) {
    fx_scale s;
    s.m = apply_cases[i].m;
    s.shift = apply_cases[i].shift;
    if (scale_apply(s, apply_cases[i].x) == apply_cases[i].want) ++passed;
    else if (++failed <= 10) printf("FAILED: scale_apply case %u\\n", (unsigned)i);
  }
  for (i = 0; i < COUNT(quant_cases); ++i) {
    if (quantize_value(quant_cases[i].x, quant_cases[i].scale, quant_cases[i].zp, quant_cases[i].qmin,
                       quant_cases[i].qmax) == quant_cases[i].want) ++passed;
    else if (++failed <= 10) printf("FAILED: quantize case %u\\n", (unsigned)i);
  }
  printf("%d passed, %d failed\\n", passed, failed);
  return failed != 0;
}""")
