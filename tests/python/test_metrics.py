"""fixq.metrics against numpy formulas in float64 and llama.cpp's quantize-stats rules.

The oracles: rmse/nmse/mae/maxerr/cosine/SQNR written out with numpy (float64, math.fsum
for the sums), the 150-bucket histogram floor(|x-y| / 0.03 * 150) clamped to the last
bucket, find_quantile over its running counts, and the report lines through Python's
%-formatting (the same printf conversions).
"""

import math
import pathlib
import threading

import numpy as np
import pytest

import fixq

M = fixq.metrics

REPO = pathlib.Path(__file__).resolve().parents[2]
VECTORS = REPO / "tests" / "vectors"


def reference_metrics(x, y):
    x = np.asarray(x, np.float32).astype(np.float64).ravel()
    y = np.asarray(y, np.float32).astype(np.float64).ravel()
    d = x - y
    err2, ref2, app2 = math.fsum(d * d), math.fsum(x * x), math.fsum(y * y)
    return {
        "rmse": math.sqrt(err2 / len(x)),
        "nmse": err2 / ref2,
        "mae": math.fsum(np.abs(d)) / len(x),
        "maxerr": float(np.max(np.abs(d))),
        "cosine": math.fsum(x * y) / math.sqrt(ref2 * app2),
        "sqnr_db": 10 * math.log10(ref2 / err2),
    }


def reference_histogram(x, y):
    d = np.abs(np.asarray(x, np.float32).astype(np.float64) - np.asarray(y, np.float32).astype(np.float64))
    pos = d.ravel() / 0.03 * 150
    bucket = np.where(pos >= 149, 149, np.floor(pos)).astype(np.int64)
    return np.bincount(bucket, minlength=150).astype(np.uint64)


def reference_quantile(hist, q):
    target = float(hist.sum()) * q
    running = 0.0
    for k in range(149):
        running += float(hist[k])
        if running >= target:
            return (k + 1) * 0.03 / 150
    return 150 * 0.03 / 150


def sample(seed, n=10_000, noise=1e-3):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n).astype(np.float32)
    y = (x + rng.standard_normal(n) * noise * rng.uniform(0, 20, n)).astype(np.float32)
    return x, y


NAMES = ["rmse", "nmse", "mae", "maxerr", "cosine", "sqnr_db"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_metrics_match_numpy_formulas(seed):
    x, y = sample(seed)
    want = reference_metrics(x, y)
    s = M.error_stats(x, y)
    assert s.count == x.size
    for name in NAMES:
        got = getattr(s, name)()
        assert got == pytest.approx(want[name], rel=1e-13, abs=0), name
        assert getattr(M, name)(x, y) == got, name  # the shorthand is the same computation
    assert s.maxerr() == want["maxerr"]  # exact: one double difference


def test_histogram_quantiles_and_report_lines_match_quantize_stats():
    x, y = sample(4, n=20_000, noise=2e-3)
    s = M.error_stats(x.reshape(100, 200), y.reshape(100, 200))
    hist = reference_histogram(x, y)
    assert s.histogram.dtype == np.uint64 and s.histogram.shape == (M.ErrorStats.HISTOGRAM_BUCKETS,)
    np.testing.assert_array_equal(s.histogram, hist)
    assert hist[0] > 0 and hist[149] > 0 and hist[1:149].sum() > 0  # the test covers all three regions
    for q in [0.0, 0.1, 0.5, 0.95, 0.999, 1.0]:
        assert s.quantile(q) == reference_quantile(hist, q), q
    want = reference_metrics(x, y)
    assert s.llama_line("q4_0::w") == "%-50s: rmse %.8f, maxerr %.8f, 95pct<%.4f, median<%.4f" % (
        "q4_0::w", want["rmse"], want["maxerr"], reference_quantile(hist, 0.95), reference_quantile(hist, 0.5))
    assert s.summary() == "n %d, nmse %.6e, mae %.8f, cosine %.8f, sqnr %.2f dB" % (
        x.size, want["nmse"], want["mae"], want["cosine"], want["sqnr_db"])
    assert s.quantile(0.0) == pytest.approx(0.0002) and M.ErrorStats.HISTOGRAM_RANGE == 0.03


def test_histogram_buckets_of_chosen_errors():
    err = np.array([0.0, 0.0001, 0.00045, 0.0297, 0.03, 1.0, 3e38], np.float32)
    s = M.error_stats(np.zeros_like(err), err)
    want = np.bincount([0, 0, 2, 148, 149, 149, 149], minlength=150).astype(np.uint64)
    np.testing.assert_array_equal(s.histogram, want)
    np.testing.assert_array_equal(M.error_stats(err, np.zeros_like(err)).histogram, want)  # |x-y|: sign-free


def test_quantile_stops_where_the_running_count_reaches_the_target():
    # 50 errors in bucket 2, 50 in bucket 5: the running count equals count * 0.5 exactly at
    # bucket 2 (find_quantile compares with >=), and reaches count * 1.0 at bucket 5.
    err = np.r_[np.full(50, 0.0005), np.full(50, 0.0011)].astype(np.float32)
    s = M.error_stats(np.zeros_like(err), err)
    assert s.quantile(0.5) == 3 * 0.03 / 150
    assert s.quantile(0.51) == 6 * 0.03 / 150
    assert s.quantile(1.0) == 6 * 0.03 / 150
    assert s.quantile(0.0) == 1 * 0.03 / 150


def test_golden_q4_0_roundtrip_error_matches_numpy():
    # ggml's own q4_0 reconstruction of the golden inputs: the quantize-stats use case.
    folder = VECTORS / "ggml"
    for name in ["inputs.f32", "q4_0.dequant.f32"]:
        if not (folder / name).is_file():
            pytest.fail(f"golden vector file {folder / name} is missing")
    x = np.fromfile(folder / "inputs.f32", np.float32)
    y = np.fromfile(folder / "q4_0.dequant.f32", np.float32)
    s = M.error_stats(x, y)
    want = reference_metrics(x, y)
    for name in ["rmse", "nmse", "mae", "maxerr", "cosine", "sqnr_db"]:
        assert getattr(s, name)() == pytest.approx(want[name], rel=1e-13), name
    np.testing.assert_array_equal(s.histogram, reference_histogram(x, y))
    # fixq's own round trip through the formats gives the same statistics.
    fx = fixq.formats
    r = M.error_stats(x, fx.gguf_dequantize("q4_0", fx.gguf_quantize("q4_0", x)))
    assert (r.rmse(), r.maxerr(), r.count) == (s.rmse(), s.maxerr(), s.count)


def test_special_values_follow_the_documented_definitions():
    x = np.array([1.0, -2.0, 3.0], np.float32)
    same = M.error_stats(x, x)
    assert (same.rmse(), same.nmse(), same.mae(), same.maxerr(), same.cosine()) == (0, 0, 0, 0, 1)
    assert same.sqnr_db() == math.inf
    z = np.zeros(3, np.float32)
    zero_ref = M.error_stats(z, x)
    assert (zero_ref.nmse(), zero_ref.sqnr_db(), zero_ref.cosine()) == (math.inf, -math.inf, 0)
    assert M.error_stats(x, z).cosine() == 0
    both_zero = M.error_stats(z, z)
    assert (both_zero.nmse(), both_zero.cosine(), both_zero.sqnr_db()) == (0, 1, math.inf)
    assert M.cosine(x, -x) == -1 and M.cosine(x, 2 * x) == 1  # clamped, exact for y = c x
    assert M.error_stats(z, x).summary().endswith("sqnr -inf dB")


def test_merge_and_streaming_agree_with_one_pass():
    x, y = sample(7, n=9_000)
    whole = M.error_stats(x, y)
    streamed, merged = M.ErrorStats(), M.ErrorStats()
    for i in range(0, x.size, 1000):
        streamed.add(x[i:i + 1000], y[i:i + 1000])
        part = M.ErrorStats()
        part.add(x[i:i + 1000], y[i:i + 1000])
        merged.merge(part)
    for s in (streamed, merged):
        assert s.count == whole.count and s.maxerr() == whole.maxerr()
        np.testing.assert_array_equal(s.histogram, whole.histogram)
        for name in NAMES:
            assert getattr(s, name)() == pytest.approx(getattr(whole, name)(), rel=1e-14), name
    merged.merge(merged)  # merging with itself doubles every count
    assert merged.count == 2 * whole.count
    np.testing.assert_array_equal(merged.histogram, 2 * whole.histogram)
    assert merged.rmse() == pytest.approx(whole.rmse(), rel=1e-14)


def test_dtypes_and_layouts_convert_to_float32():
    rng = np.random.default_rng(9)
    x64, y64 = rng.standard_normal((30, 40)), rng.standard_normal((30, 40))
    want = M.error_stats(x64.astype(np.float32), y64.astype(np.float32))
    for a, b in [(x64, y64), (x64.T.copy().T, y64), (np.asfortranarray(x64), y64)]:
        got = M.error_stats(a, b)
        assert (got.rmse(), got.cosine()) == (want.rmse(), want.cosine())
    ints = np.arange(-5, 5, dtype=np.int16)
    assert M.maxerr(ints, np.zeros(10, np.float32)) == 5
    assert M.rmse([1.0, 2.0], [1.0, 4.0]) == math.sqrt(2)


def test_concurrent_adds_to_one_accumulator_count_every_pair():
    x, y = sample(11, n=200_000)
    s = M.ErrorStats()
    threads = [threading.Thread(target=s.add, args=(x, y)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert s.count == 4 * x.size
    np.testing.assert_array_equal(s.histogram, 4 * reference_histogram(x, y))
    assert s.rmse() == pytest.approx(M.rmse(x, y), rel=1e-13)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: M.rmse([1.0, 2.0], [1.0, 2.0, 3.0]), "must have the same shape"),
        (lambda: M.rmse(np.ones((2, 3)), np.ones((3, 2))), "must have the same shape"),
        (lambda: M.rmse([], []), "no samples"),
        (lambda: M.ErrorStats().cosine(), "no samples"),
        (lambda: M.mae([1.0, np.nan], [1.0, 2.0]), "reference[1] is nan"),
        (lambda: M.mae([1.0, 2.0, 3.0], [1.0, 2.0, -np.inf]), "approx[2] is -inf"),
        (lambda: M.rmse(np.ones(3, np.complex64), np.ones(3)), "real numeric"),
        (lambda: M.rmse(["a"], ["b"]), "real numeric"),
        (lambda: M.error_stats([1.0], [2.0]).quantile(1.5), "outside [0, 1]"),
        (lambda: M.error_stats([1.0], [2.0]).quantile(-0.1), "outside [0, 1]"),
    ],
)
def test_bad_input_is_a_value_error(call, message):
    with pytest.raises(ValueError) as e:
        call()
    assert message in str(e.value)


def test_a_rejected_add_leaves_the_stats_unchanged():
    s = M.error_stats([1.0, 2.0], [1.5, 2.0])
    before = (s.count, s.rmse(), s.histogram.copy())
    with pytest.raises(ValueError, match=r"approx\[1\]"):
        s.add([1.0, 2.0], [1.0, np.nan])
    assert (s.count, s.rmse()) == before[:2]
    np.testing.assert_array_equal(s.histogram, before[2])
