"""Integer GEMM and its epilogues against numpy int64 products and per-element formulas."""

import numpy as np
import pytest

import fixq

RANGES = {np.uint8: (0, 255), np.int8: (-128, 127), np.int16: (-32768, 32767)}


def rand(rng, dtype, shape, lo=None, hi=None):
    a, b = RANGES[dtype]
    return rng.integers(a if lo is None else lo, (b if hi is None else hi) + 1, size=shape).astype(dtype)


# int16 x int16 is refused by the library (a pair of products reaches 2^31).
CASES = [(np.uint8, np.int8), (np.int8, np.int8), (np.int16, np.int8), (np.uint8, np.int16), (np.int8, np.int16)]


@pytest.mark.parametrize("a_type,b_type", CASES)
@pytest.mark.parametrize("M,N,K", [(1, 1, 1), (3, 17, 5), (9, 33, 64), (16, 16, 257)])
def test_raw_products_equal_numpy(a_type, b_type, M, N, K):
    rng = np.random.default_rng(M * 1000 + N * 10 + K)
    a, b = rand(rng, a_type, (M, K)), rand(rng, b_type, (N, K))
    ref = a.astype(np.int64) @ b.astype(np.int64).T
    c64 = fixq.gemm_s64(a, b)
    assert c64.dtype == np.int64 and np.array_equal(c64, ref)
    if K * max(abs(x) for x in RANGES[a_type]) * max(abs(x) for x in RANGES[b_type]) < 2**31:
        c32 = fixq.gemm_s32(a, fixq.PackedB(b))
        assert c32.dtype == np.int32 and np.array_equal(c32, ref)


def test_packed_b_and_strided_a():
    rng = np.random.default_rng(1)
    b = rand(rng, np.int8, (20, 30))
    pb = fixq.PackedB(b)
    assert (pb.n, pb.k, pb.shape, pb.dtype) == (20, 30, (20, 30), "int8")
    assert np.array_equal(pb.colsum, b.astype(np.int64).sum(1))
    big = rand(rng, np.uint8, (12, 50))
    for a in (big[2:9, 5:35], big[::2, :30], np.asfortranarray(big[:4, :30]), big[:1, 10:40]):
        assert np.array_equal(fixq.gemm_s32(a, pb), a.astype(np.int64) @ b.astype(np.int64).T)


@pytest.mark.parametrize("per_token", [False, True])
@pytest.mark.parametrize("azp_kind", [None, "tensor", "token"])
def test_dequant_epilogue_is_the_float32_formula(per_token, azp_kind):
    rng = np.random.default_rng(2)
    M, N, K = 7, 19, 40
    a, b = rand(rng, np.uint8, (M, K)), rand(rng, np.int8, (N, K))
    sa = rng.uniform(0.001, 0.1, M if per_token else 1).astype(np.float32)
    sb = rng.uniform(0.001, 0.1, N).astype(np.float32)
    bias = rng.standard_normal(N).astype(np.float32)
    azp = {None: None, "tensor": np.array([128], np.int32), "token": rng.integers(0, 256, M).astype(np.int32)}[azp_kind]
    d = fixq.gemm_f32(a, b, sa, sb, bias=bias, azp=azp)
    acc = a.astype(np.int64) @ b.astype(np.int64).T
    if azp is not None:
        acc = acc - np.broadcast_to(azp.astype(np.int64), (M,))[:, None] * b.astype(np.int64).sum(1)[None, :]
    want = (acc.astype(np.float32) * sb[None, :]) * np.broadcast_to(sa, (M,))[:, None] + bias[None, :]
    assert d.dtype == np.float32 and np.array_equal(d, want)  # same float32 operations, same bits


@pytest.mark.parametrize("out_dtype", ["int8", "uint8", "int16"])
def test_requant_epilogue_matches_python_integers(out_dtype):
    rng = np.random.default_rng(3)
    M, N, K = 6, 21, 33
    a, b = rand(rng, np.int8, (M, K)), rand(rng, np.int8, (N, K))
    scales = [fixq.FixedPointScale.from_real(s) for s in rng.uniform(1e-4, 5e-3, N)]
    bias = rng.integers(-5000, 5000, N).astype(np.int32)
    azp = rng.integers(-10, 10, M).astype(np.int32)
    zp_out, lo, hi = 3, {"int8": -100, "uint8": 10, "int16": -2000}[out_dtype], {"int8": 90, "uint8": 200, "int16": 1500}[out_dtype]
    y = fixq.gemm_requant(a, fixq.PackedB(b), scales, bias=bias, azp=azp, zp_out=zp_out, out_dtype=out_dtype,
                          out_min=lo, out_max=hi)
    assert y.dtype == np.dtype(out_dtype)
    acc = a.astype(np.int64) @ b.astype(np.int64).T
    colsum = b.astype(np.int64).sum(1)
    for m in range(M):
        for n in range(N):
            v = int(acc[m, n]) - int(azp[m]) * int(colsum[n]) + int(bias[n])
            s = scales[n]
            r = (v * s.m + (1 << (s.shift - 1))) >> s.shift  # round half up, Python ints
            assert y[m, n] == min(max(r + zp_out, lo), hi), (m, n)
    # Real factors are taken as FixedPointScale.from_real; one scale applies to every column.
    assert np.array_equal(fixq.gemm_requant(a, b, 0.002), fixq.gemm_requant(a, b, fixq.FixedPointScale.from_real(0.002)))


def test_thread_count_does_not_change_results():
    rng = np.random.default_rng(4)
    a, b = rand(rng, np.uint8, (128, 256)), rand(rng, np.int8, (160, 256))
    old = fixq.gemm_threads()
    try:
        fixq.set_gemm_threads(1)
        one = fixq.gemm_s32(a, b)
        fixq.set_gemm_threads(2)
        two = fixq.gemm_s32(a, b)
    finally:
        fixq.set_gemm_threads(0)
    assert old >= 1 and np.array_equal(one, two)


def test_bad_operands_raise_value_error():
    a, b = np.zeros((2, 4), np.uint8), np.zeros((3, 4), np.int8)
    with pytest.raises(ValueError, match="K|mismatch|columns"):
        fixq.gemm_s32(a, np.zeros((3, 5), np.int8))
    with pytest.raises(ValueError, match="a: dtype float32"):
        fixq.gemm_s32(a.astype(np.float32), b)
    with pytest.raises(ValueError, match="uint8"):
        fixq.PackedB(b.astype(np.uint8))
    with pytest.raises(ValueError, match="2-D"):
        fixq.gemm_s32(np.zeros(4, np.uint8), b)
    # The int32 bound is max|A| times the largest row sum of |B|: 32768 * 128000 overflows,
    # 32768 * 1000 does not, whatever K.
    with pytest.raises(ValueError, match="largest row sum of \\|B\\| is 128000.*use gemm_s64"):
        fixq.gemm_s32(np.zeros((1, 1000), np.int16), np.full((1, 1000), -128, np.int8))
    assert fixq.gemm_s32(np.full((1, 1000), -32768, np.int16), np.ones((1, 1000), np.int8))[0, 0] == -1000 * 32768
    assert fixq.gemm_s64(np.full((1, 1000), -32768, np.int16), np.full((1, 1000), -128, np.int8))[0, 0] == 1000 * 32768 * 128
    with pytest.raises(ValueError, match="s16 activations with s16 weights"):
        fixq.gemm_s64(np.zeros((1, 4), np.int16), np.zeros((1, 4), np.int16))
    with pytest.raises(ValueError, match="scale"):
        fixq.gemm_f32(a, b, [1.0, 2.0, 3.0], [1.0])  # scale_a neither 1 nor M
    with pytest.raises(ValueError, match="out_min|range"):
        fixq.gemm_requant(a, b, 0.5, out_dtype="int8", out_min=-200)
    with pytest.raises(ValueError, match="integer type must be uint8, int8 or int16, got 'int32'"):
        fixq.gemm_requant(a, b, 0.5, out_dtype="int32")
