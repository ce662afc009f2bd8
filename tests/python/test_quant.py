"""quantize / dequantize at every granularity, the parameter derivation, observers and the
rounding primitives, against numpy formulas written out here."""

import itertools

import numpy as np
import pytest

import fixq


def broadcast_params(values, scheme, shape):
    """Parameter array (param_shape) expanded to the tensor's shape, for the oracle."""
    v = np.asarray(values)
    g = scheme.granularity
    if g == "per_tensor":
        return np.broadcast_to(v.reshape(()), shape)
    if g == "per_token":
        return np.broadcast_to(v[..., None], shape)
    axis = scheme.axis % len(shape)
    if g == "per_channel":
        s = [1] * len(shape)
        s[axis] = shape[axis]
        return np.broadcast_to(v.reshape(s), shape)
    return np.repeat(v, scheme.group_size, axis=axis)  # per_group


def oracle_quantize(x, params, shape):
    s = broadcast_params(params.scale, params.scheme, shape).astype(np.float32)
    z = broadcast_params(params.zero_point, params.scheme, shape).astype(np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        r = np.rint(np.float32(x) / s)  # float32 division, round half to even
    return np.clip(r.astype(np.float64) + z, params.scheme.qmin, params.scheme.qmax).astype(np.int64)


def oracle_dequantize(q, params, shape):
    s = broadcast_params(params.scale, params.scheme, shape).astype(np.float32)
    z = broadcast_params(params.zero_point, params.scheme, shape).astype(np.int64)
    return (q.astype(np.int64) - z).astype(np.float32) * s


SCHEMES = [
    dict(granularity="per_tensor"),
    dict(granularity="per_channel", axis=0),
    dict(granularity="per_channel", axis=-1),
    dict(granularity="per_group", axis=1, group_size=4),
    dict(granularity="per_group", axis=-1, group_size=3),
    dict(granularity="per_token"),
]


@pytest.mark.parametrize("gran,bits,signed,symmetry,scale", list(itertools.product(
    range(len(SCHEMES)), (2, 4, 8, 12, 16), (True, False), ("symmetric", "asymmetric"), ("multiplier", "pow2"))))
def test_quantize_dequantize_match_numpy(gran, bits, signed, symmetry, scale):
    shape = (3, 8, 6)
    rng = np.random.default_rng(bits * 7 + gran)
    x = (rng.standard_normal(shape) * rng.uniform(0.1, 4, size=(1, 1, 6))).astype(np.float32)
    scheme = fixq.QuantScheme(bits=bits, signed=signed, symmetry=symmetry, scale=scale, **SCHEMES[gran])
    p = fixq.params_from_tensor(x, scheme)
    assert p.shape == scheme.param_shape(shape)
    q = fixq.quantize(x, p)
    want_dtype = {(True, True): np.int8, (False, True): np.uint8, (True, False): np.int16, (False, False): np.uint16}
    assert q.dtype == want_dtype[(signed, bits <= 8)] and q.shape == shape
    assert np.array_equal(q.astype(np.int64), oracle_quantize(x, p, shape))
    d = fixq.dequantize(q, p)
    assert d.dtype == np.float32 and np.array_equal(d, oracle_dequantize(q, p, shape))
    # Min/max calibration never clips: each value is within half a step of its dequantization
    # (plus the float32 rounding of x / scale and of the product, a few ulp of x).
    step = broadcast_params(p.scale, scheme, shape)
    assert np.all(np.abs(d - x) <= 0.5 * step * (1 + 1e-6) + 2 * np.spacing(np.abs(x)))
    if scale == "pow2":
        assert np.array_equal(p.scale, np.ldexp(np.float32(1), -p.exponent))
    if symmetry == "symmetric":
        assert np.all(p.zero_point == scheme.symmetric_zero_point())
    # A wider output dtype holds the same values.
    assert np.array_equal(fixq.quantize(x, p, dtype="int32"), q.astype(np.int32))


def test_minmax_ranges_and_coverage():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 10)).astype(np.float32) + np.arange(10, dtype=np.float32)
    for kw, axis in ((dict(granularity="per_channel", axis=1), 0), (dict(granularity="per_token"), 1)):
        scheme = fixq.QuantScheme(bits=8, signed=False, **kw)
        r = fixq.minmax_ranges(x, scheme)
        assert np.array_equal(r, np.stack([x.min(axis=axis), x.max(axis=axis)], axis=1))
        p = fixq.params_from_ranges(scheme, x.shape, r)
        # docs/spec.md 3.3: the grid covers each range widened to 0, evaluated in float32.
        lo = (np.float32(scheme.qmin) - p.zero_point).astype(np.float32) * p.scale
        hi = (np.float32(scheme.qmax) - p.zero_point).astype(np.float32) * p.scale
        assert np.all(lo <= np.minimum(r[:, 0], 0)) and np.all(hi >= np.maximum(r[:, 1], 0))


def test_quantize_rounds_half_to_even_and_saturates():
    p = fixq.QuantParams(fixq.QuantScheme(bits=8, scale="pow2"), scale=np.float32(0.5), zero_point=0)
    assert int(p.exponent) == 1  # derived: 0.5 == 2^-1
    x = np.array([0.25, 0.75, -0.25, -0.75, 1.25, 100.0, -100.0, np.inf, -np.inf], np.float32)
    assert fixq.quantize(x, p).tolist() == [0, 2, 0, -2, 2, 127, -128, 127, -128]
    nan = np.array([1.0, np.nan], np.float32)
    with pytest.raises(ValueError, match="NaN"):
        fixq.quantize(nan, p)
    p7 = fixq.QuantParams(fixq.QuantScheme(bits=4, signed=False), scale=0.1, zero_point=7)
    assert fixq.quantize(nan, p7, nan="zero_point").tolist() == [15, 7]  # 1 / 0.1 + 7 = 17 saturates to 15


def test_float64_and_strided_inputs_are_converted():
    rng = np.random.default_rng(2)
    x64 = rng.standard_normal((5, 6))
    p = fixq.params_from_tensor(x64, fixq.QuantScheme(bits=8, granularity="per_channel", axis=1))
    assert np.array_equal(fixq.quantize(x64, p), fixq.quantize(x64.astype(np.float32), p))
    x = rng.standard_normal((5, 12)).astype(np.float32)
    view = x[:, ::2]  # not contiguous
    assert np.array_equal(fixq.quantize(view, p), fixq.quantize(np.ascontiguousarray(view), p))


def test_quant_params_construction_and_errors():
    scheme = fixq.QuantScheme(bits=8, granularity="per_channel", axis=0)
    p = fixq.QuantParams(scheme, scale=[0.5, 0.25], zero_point=np.array([1, -3], np.int64))
    assert p.zero_point.dtype == np.int32 and p.zero_point.tolist() == [1, -3] and p.exponent is None
    with pytest.raises(ValueError, match="shape"):
        fixq.QuantParams(scheme, scale=[0.5, 0.25], zero_point=[1])
    with pytest.raises(ValueError, match="range"):
        fixq.QuantParams(scheme, scale=[0.5], zero_point=[200])
    with pytest.raises(ValueError, match="not a power of two"):
        fixq.QuantParams(fixq.QuantScheme(scale="pow2"), scale=0.3, zero_point=0)
    with pytest.raises(ValueError, match="integers"):
        fixq.QuantParams(scheme, scale=[0.5], zero_point=[1.5])
    with pytest.raises(ValueError, match="bits"):
        fixq.QuantScheme(bits=17)
    with pytest.raises(ValueError, match="granularity"):
        fixq.QuantScheme(granularity="per_row")
    with pytest.raises(ValueError, match="group size"):
        fixq.QuantScheme(granularity="per_group", group_size=0)
    with pytest.raises(ValueError, match="does not divide"):
        fixq.params_from_tensor(np.ones((3, 5), np.float32), fixq.QuantScheme(granularity="per_group", axis=1, group_size=2))
    with pytest.raises(ValueError, match="zero-width|min == max|slot"):
        fixq.params_from_ranges(fixq.QuantScheme(), (4,), [[0.0, 0.0]])
    with pytest.raises(ValueError, match=r"\[n, 2\]"):
        fixq.params_from_ranges(fixq.QuantScheme(), (4,), [[0.0, 1.0, 2.0]])
    with pytest.raises(ValueError, match="range"):  # a value outside int8 while dequantizing
        fixq.dequantize(np.array([300], np.int32), fixq.params_from_tensor(np.array([-1.0, 1.0]), fixq.QuantScheme()))
    with pytest.raises(ValueError, match="storage type"):
        fixq.dequantize(np.array([1.0]), fixq.params_from_tensor(np.array([-1.0, 1.0]), fixq.QuantScheme()))
    with pytest.raises(ValueError, match="cannot hold"):
        fixq.quantize(np.ones(3), fixq.params_from_tensor(np.array([-1.0, 1.0]), fixq.QuantScheme(bits=12)), dtype="int8")


# ---- observers ---------------------------------------------------------------------------

def test_observer_minmax_and_ema():
    rng = np.random.default_rng(3)
    batches = [rng.standard_normal((4, 3)).astype(np.float32) * (i + 1) for i in range(3)]
    target = fixq.QuantScheme()
    mm, ema = fixq.Observer("minmax"), fixq.Observer("ema", ema_decay=0.75)
    for b in batches:
        mm.observe(b)
        ema.observe(b)
    allx = np.concatenate(batches)
    assert mm.ranges(target).tolist() == [[allx.min(), allx.max()]]
    lo, hi = batches[0].min(), batches[0].max()
    for b in batches[1:]:
        lo, hi = 0.75 * lo + 0.25 * b.min(), 0.75 * hi + 0.25 * b.max()
    assert np.allclose(ema.ranges(target), [[lo, hi]], rtol=1e-6)
    assert ema.batches == 3
    pc = fixq.Observer(per_channel=True, axis=1)
    pc.observe(allx)
    assert np.array_equal(pc.ranges(fixq.QuantScheme(granularity="per_channel", axis=1)),
                          np.stack([allx.min(0), allx.max(0)], 1))
    with pytest.raises(ValueError, match="finite|NaN"):
        mm.observe(np.array([np.nan], np.float32))
    with pytest.raises(ValueError, match="no data"):
        fixq.Observer().ranges(target)


# ---- rounding primitives -----------------------------------------------------------------

def test_rounding_primitives_match_python_integers():
    for v in (0.5, 1.5, 2.5, -0.5, -1.5, 2.4999, 1e300):
        assert fixq.round_half_even(v) == float(np.rint(v))
    rng = np.random.default_rng(4)
    for x in list(rng.integers(-2**62, 2**62, 200)) + [2**63 - 1, -2**63, 5, -5, 6, -6]:
        for n in (0, 1, 2, 7, 31, 62, 63):
            x = int(x)
            want = x if n == 0 else (x + (1 << (n - 1))) >> n  # Python ints: no overflow
            assert fixq.rounding_shift_right_half_up(x, n) == want, (x, n)


def test_fixed_point_scale_apply_matches_python_integers():
    rng = np.random.default_rng(5)
    for sigma in (1e-6, 0.1234, 0.5, 1.0, 3.75, 1000.5):
        s = fixq.FixedPointScale.from_real(sigma)
        assert 2**30 <= s.m < 2**31 and abs(s.real() - sigma) <= 2.0**-(s.shift + 1)
        xs = rng.integers(-2**40, 2**40, 300, dtype=np.int64)
        want = [(int(x) * s.m + (1 << (s.shift - 1))) >> s.shift for x in xs]
        assert s.apply(xs).tolist() == want
        assert s.apply(int(xs[0])) == want[0]
    p = fixq.FixedPointScale.pow2(3)
    assert (p.m, p.shift, p.is_pow2, p.apply(20), p.apply(-20)) == (1, 3, True, 3, -2)  # 2.5 -> 3, -2.5 -> -2
    assert fixq.requantize(1000, p, 5, -128, 127) == 127 and fixq.requantize(-1000, p, 0, -128, 127) == -125
    with pytest.raises(ValueError, match="outside"):
        fixq.FixedPointScale.from_real(1e9)
    with pytest.raises(ValueError, match="multiplier"):
        fixq.FixedPointScale(0, 3)
