"""fixq.formats packed weights (PackedWeights, GPTQ v1 import/export, weight-only matmul)
against independent oracles: GPTQ v1 tensors packed by numpy, the dequantization formula
(q - z) * s, and the documented float error bound of the weight-only matmul against an exact
float64 product.

Run from the repository: PYTHONPATH=<build>/python /usr/bin/python3 -m pytest -q tests/python
"""

import numpy as np
import pytest

from formats_util import F


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
    ],
)
def test_packed_bad_input_is_a_value_error(call, message):
    with pytest.raises(ValueError) as e:
        call()
    assert message in str(e.value)
