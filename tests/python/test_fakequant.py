"""fixq.torch.FakeQuantGRU: the integer GRU in torch, trainable.

In eval mode its outputs equal the integer model's (QuantGRU, `fixq gru run`) bit for bit
in the configurations the fast-path tests cover; its gradients are finite and reach every
operator; with 16-bit operators they are close to the float GRU's own."""

import numpy as np
import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence

import fixq
from fixq import _qsim
from fixq.torch import FakeQuantGRU, QuantGRU
from conftest import make_torch_gru, run_cli


# ---- the integer primitives against the library's ----------------------------------------

def _extremes(rng, n, bound):
    x = rng.integers(-bound, bound, n, dtype=np.int64)
    return np.concatenate([x, [0, 1, -1, 2, -2, bound - 1, -bound, 3, -3, 1 << 20, -(1 << 20) - 1]]).astype(np.int64)


def test_apply_scale_equals_fixed_point_scale():
    rng = np.random.default_rng(1)
    for sigma in [2.0 ** -40, 3e-9, 1.0 / 7, 0.3, 0.5, 0.99999, 1.0, 3.0, 1000.5, 2.0 ** 20]:
        s = fixq.FixedPointScale.from_real(sigma)
        # The integer GRU's operands stay below 2^47 and its results below 2^55 (spec 5.3);
        # the simulation is exact while |x sigma| < 2^62.
        bound = min(1 << 46, int(2.0 ** 61 / sigma))
        x = _extremes(rng, 2000, bound)
        got = _qsim.apply_scale(torch.from_numpy(x), {"m": s.m, "shift": s.shift})
        assert np.array_equal(got.numpy(), s.apply(x)), sigma
    for n in [-62, -40, -3, -1, 0, 1, 2, 7, 31, 32, 33, 62, 63, 64, 100, 126]:
        s = fixq.FixedPointScale.pow2(n)
        x = _extremes(rng, 2000, 1 << 62)
        got = _qsim.apply_scale(torch.from_numpy(x), {"m": 1, "shift": n})
        assert np.array_equal(got.numpy(), s.apply(x)), n


@pytest.mark.parametrize("kind", ["pow2", "multiplier", "pow2_mixed"])
def test_per_row_scales_equal_fixed_point_scale(kind):
    rng = np.random.default_rng(2)
    rows = 40
    if kind == "multiplier":
        scales = [fixq.FixedPointScale.from_real(float(v)) for v in np.exp(rng.uniform(np.log(2e-12), np.log(2e5), rows))]
    elif kind == "pow2":
        scales = [fixq.FixedPointScale.pow2(int(n)) for n in rng.integers(1, 64, rows)]
    else:  # left shifts, no shift and beyond 63: the general path
        scales = [fixq.FixedPointScale.pow2(int(n)) for n in rng.integers(-20, 90, rows)]
    m = np.array([s.m for s in scales], np.int64)
    shift = np.array([s.shift for s in scales], np.int64)
    x = rng.integers(-(1 << 40), 1 << 40, (25, rows), dtype=np.int64)
    got = _qsim.apply_scale(torch.from_numpy(x), _qsim.per_row(m, shift)).numpy()
    want = np.stack([s.apply(x[:, j]) for j, s in enumerate(scales)], axis=1)
    assert np.array_equal(got, want)


# ---- eval: bit for bit -----------------------------------------------------------------------

CONFIGS = [("int8", "pow2"), ("int8", "multiplier"), ("int16", "pow2"), ("int16", "multiplier")]
SHAPES = [(1, False), (2, False), (2, True)]


def _calib(C, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(14, 4, C, generator=g) for _ in range(2)]


@pytest.mark.parametrize("config,scales", CONFIGS)
@pytest.mark.parametrize("layers,bidir", SHAPES)
def test_eval_equals_the_integer_model_bit_for_bit(config, scales, layers, bidir):
    C, H, T, B = 5, 9, 12, 3
    gru = make_torch_gru(C, H, num_layers=layers, bidirectional=bidir, seed=layers + 3 * bidir)
    calib = _calib(C, 4)
    # Plain calibration keeps this test fast; the PTQ steps only change the starting weights.
    fq = FakeQuantGRU.from_float(gru, calib, config=config, scales=scales, method="minmax").eval()
    q = fq.to_quantized()
    D = 2 if bidir else 1
    g = torch.Generator().manual_seed(9)
    x = torch.randn(T, B, C, generator=g)
    h0 = 0.5 * torch.randn(layers * D, B, H, generator=g)
    with torch.no_grad():
        for args in [(x,), (x, h0), (40 * x,), (x[:, 1],)]:  # plain, h0, far outside the calibrated range, unbatched
            y1, h1 = fq(*args)
            y2, h2 = q(*args)
            assert torch.equal(y1, y2) and torch.equal(h1, h2), (config, scales, len(args))
        # ragged lengths (PackedSequence, unsorted) and h0
        lengths = torch.tensor([5, T, 1])
        packed = pack_padded_sequence(x, lengths, enforce_sorted=False)
        (o1, h1), (o2, h2) = fq(packed, h0), q(packed, h0)
        assert torch.equal(o1.data, o2.data) and torch.equal(h1, h2)
        assert torch.equal(o1.batch_sizes, o2.batch_sizes) and torch.equal(o1.sorted_indices, o2.sorted_indices)
    # batch_first, and the same values in training mode (the forward value is the integer one)
    fqb = FakeQuantGRU(gru, fq.quant_params(), batch_first=True)
    fqb.load_state_dict(fq.state_dict())
    xb = x.transpose(0, 1).contiguous()
    with torch.no_grad():
        assert torch.equal(fqb.eval()(xb)[0], QuantGRU(q.quantized, batch_first=True)(xb)[0])
    fq.train()
    y_train, _ = fq(x.requires_grad_(True), h0)
    assert torch.equal(y_train.detach(), q(x.detach(), h0)[0])


# The rest of the fast-path tests' configurations (tests/gru/q_fast_test.cpp): hidden sizes
# that are not whole vectors, batch 16 with ragged lengths (some 0), percentile and MSE
# ranges, a 256-unit int16 layer; inputs at 1x and 40x the calibrated range.
FAST_PATH_CASES = [  # C, H, layers, bidir, config, scales, method
    (13, 24, 2, True, "int8", "pow2", "minmax"),
    (13, 24, 2, True, "int8", "multiplier", "minmax"),
    (13, 21, 2, True, "int16", "pow2", "minmax"),
    (13, 21, 2, True, "int16", "multiplier", "minmax"),
    (32, 64, 1, False, "int8", "pow2", "percentile"),
    (16, 40, 2, False, "int8", "multiplier", "mse"),
    (64, 256, 1, False, "int16", "pow2", "minmax"),
]


@pytest.mark.parametrize("C,H,layers,bidir,config,scales,method", FAST_PATH_CASES)
def test_eval_equals_the_integer_model_in_the_fast_path_configs(C, H, layers, bidir, config, scales, method):
    gru = make_torch_gru(C, H, num_layers=layers, bidirectional=bidir, seed=7)
    fq = FakeQuantGRU.from_float(gru, _calib(C, 10), config=config, scales=scales, method=method).eval()
    q = fq.to_quantized()
    D = 2 if bidir else 1
    T, B = 9, 16
    lengths = torch.tensor([T if b == 0 else (b * 5) % (T + 1) for b in range(B)])  # as the C++ test
    nonzero = lengths > 0  # PackedSequence has no room for empty sequences
    g = torch.Generator().manual_seed(77)
    for sigma in (1.0, 40.0):
        x = sigma * torch.randn(T, B, C, generator=g)
        h0 = sigma * torch.randn(layers * D, B, H, generator=g)
        with torch.no_grad():
            y1, h1 = fq(x, h0)
            y2, h2 = q(x, h0)
            assert torch.equal(y1, y2) and torch.equal(h1, h2), sigma
            packed = pack_padded_sequence(x[:, nonzero], lengths[nonzero], enforce_sorted=False)
            (o1, h1), (o2, h2) = fq(packed, h0[:, nonzero]), q(packed, h0[:, nonzero])
            assert torch.equal(o1.data, o2.data) and torch.equal(h1, h2), sigma


def test_to_quantized_is_what_the_cli_runs(tmp_path):
    gru = make_torch_gru(4, 8, num_layers=2, seed=12)
    fq = FakeQuantGRU.from_float(gru, _calib(4, 13), scales="multiplier")
    x = torch.randn(10, 3, 4, generator=torch.Generator().manual_seed(14))
    fq.to_quantized().save(tmp_path / "q.fixq")
    np.save(tmp_path / "x.npy", x.numpy())
    run_cli("gru", "run", "--model", tmp_path / "q.fixq", "--input", tmp_path / "x.npy", "-o", tmp_path / "y.npy")
    with torch.no_grad():
        assert np.array_equal(fq.eval()(x)[0].numpy(), np.load(tmp_path / "y.npy"))


def test_from_float_starts_from_quantgru_from_float():
    gru = make_torch_gru(4, 10, num_layers=2, bidirectional=True, seed=15)
    calib = _calib(4, 16)
    fq = FakeQuantGRU.from_float(gru, calib, config="int8", scales="pow2")  # every PTQ step on
    ref = QuantGRU.from_float(gru, calib, config="int8", scales="pow2")
    x = torch.randn(9, 2, 4, generator=torch.Generator().manual_seed(17))
    with torch.no_grad():
        assert torch.equal(fq.eval()(x)[0], ref(x)[0])
    assert fq.quant_params() == ref.params()
    # Its state_dict is an nn.GRU's.
    plain = torch.nn.GRU(4, 10, num_layers=2, bidirectional=True)
    plain.load_state_dict(fq.state_dict())


# ---- training --------------------------------------------------------------------------------

def _gate_blocks(t, H):
    """torch's gate order: r, z, n."""
    return {"r": t[:H], "z": t[H:2 * H], "n": t[2 * H:]}


@pytest.mark.parametrize("config,scales", [("int8", "pow2"), ("int16", "multiplier")])
def test_gradients_are_finite_and_reach_every_operator(config, scales):
    C, H = 4, 8
    gru = make_torch_gru(C, H, num_layers=2, bidirectional=True, seed=21)
    fq = FakeQuantGRU.from_float(gru, _calib(C, 22), config=config, scales=scales, method="mse").train()
    g = torch.Generator().manual_seed(23)
    x = torch.randn(10, 3, C, generator=g, requires_grad=True)
    h0 = (0.3 * torch.randn(4, 3, H, generator=g)).requires_grad_(True)
    y, h_n = fq(x, h0)
    (y * torch.randn(y.shape, generator=g)).sum().add((h_n * torch.randn(h_n.shape, generator=g)).sum()).backward()
    # Each gate's rows of W, R, bx and br reach the loss only through that gate's operators
    # (z: z_pre, z_out, old/new_contrib; r: r_pre, r_out, rRh; n: g_pre, g_out,
    # Rh_add_br for br), W through Wx and R through Rh; x and h0 through x and h.
    for name, p in fq.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
        for gate, block in _gate_blocks(p.grad, H).items():
            assert block.abs().sum() > 0, f"no gradient reaches gate {gate} of {name}"
    for name, t in (("x", x), ("h0", h0)):
        assert torch.isfinite(t.grad).all() and t.grad.abs().sum() > 0, name
        assert (t.grad.abs().sum(-1) > 0).all(), f"some {name} rows get no gradient"


def test_straight_through_gradient_is_close_to_the_float_gradient():
    """With 16-bit operators the integer model is close to float, and so must be the
    gradient the estimator gives: a wrong gate order or formula would not be."""
    C, H = 4, 10
    gru = make_torch_gru(C, H, seed=31)
    fq = FakeQuantGRU.from_float(gru, _calib(C, 32), config="int16", scales="multiplier", method="minmax",
                                 rounding="nearest", bias_correction=False).train()
    x = torch.randn(12, 3, C, generator=torch.Generator().manual_seed(33))
    target = torch.randn(12, 3, H, generator=torch.Generator().manual_seed(34))
    for module in (fq, gru):
        y, _ = module(x)
        ((y - target) ** 2).sum().backward()
    for name, p in fq.named_parameters():
        a, b = p.grad.flatten(), dict(gru.named_parameters())[name].grad.flatten()
        cos = float(a @ b / (a.norm() * b.norm()))
        assert cos > 0.99, (name, cos)


def test_a_few_steps_of_training_lower_the_integer_models_loss():
    C, H = 3, 8
    torch.manual_seed(41)
    teacher = make_torch_gru(C, H, seed=42)
    student = make_torch_gru(C, H, seed=43)
    x = torch.randn(15, 8, C, generator=torch.Generator().manual_seed(44))
    with torch.no_grad():
        target, _ = teacher(x)
    fq = FakeQuantGRU.from_float(student, [x], config="int8", scales="pow2")
    opt = torch.optim.Adam(fq.parameters(), lr=0.02)

    def loss_of_integer_model():
        with torch.no_grad():
            return float(((fq.to_quantized()(x)[0] - target) ** 2).mean())

    before = loss_of_integer_model()
    fq.train()
    for _ in range(15):
        y, _ = fq(x)
        loss = ((y - target) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    after = loss_of_integer_model()
    assert after < 0.7 * before, (before, after)
    with torch.no_grad():  # and the module still is that integer model
        assert torch.equal(fq.eval()(x)[0], fq.to_quantized()(x)[0])


def test_deepcopy_and_torch_save(tmp_path):
    import copy
    gru = make_torch_gru(3, 6, seed=61)
    fq = FakeQuantGRU.from_float(gru, _calib(3, 62), method="minmax").eval()
    x = torch.randn(7, 2, 3, generator=torch.Generator().manual_seed(63))
    torch.save(fq, tmp_path / "fq.pt")
    for other in (copy.deepcopy(fq), torch.load(tmp_path / "fq.pt")):
        with torch.no_grad():
            assert torch.equal(other(x)[0], fq(x)[0])


def test_bad_arguments():
    gru = make_torch_gru(3, 4, seed=51)
    fq = FakeQuantGRU.from_float(gru, _calib(3, 52), method="minmax")
    with pytest.raises(TypeError):
        FakeQuantGRU(torch.nn.LSTM(3, 4), fq.quant_params())
    with pytest.raises(ValueError):
        fq(torch.randn(5, 2, 4))  # 4 features, the model has 3
    with pytest.raises(ValueError):
        fq(torch.full((5, 2, 3), float("nan")))
    with pytest.raises(RuntimeError):
        fq(torch.randn(5, 2, 3), torch.zeros(1, 3, 4))  # h0 for 3 items, the batch has 2
    with pytest.raises(ValueError):
        FakeQuantGRU(make_torch_gru(3, 5, seed=53), fq.quant_params())  # parameters of another shape
