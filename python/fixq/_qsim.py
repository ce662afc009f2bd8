"""fixq's integer GRU arithmetic in int64 torch tensors, exactly (docs/spec.md).

The primitives that :class:`fixq.torch.FakeQuantGRU` composes into the time step: the
fixed-point scale ``A(rho, x)`` (spec 2.3), requantize (2.4), quantize / dequantize (3.1)
and the activation tables (4.4). Every function computes the library's integers bit for
bit; the constants come from the library itself (``QuantizedGru.cell_constants``).
A multiplier scale is applied without a 128-bit product, exactly while |x sigma| < 2^62;
the GRU's rescaled values stay below 2^55 (spec 5.3), where the library saturates nothing.
"""

import torch

I64 = torch.int64
_I64_MAX = 2 ** 63 - 1
_I64_MIN = -(2 ** 63)
_REQUANT_CLAMP = 2 ** 40  # spec 2.4


def _as_i64(v, like: torch.Tensor) -> torch.Tensor:
    return torch.as_tensor(v, dtype=I64, device=like.device)


def rshr(x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
    """RSHR (spec 2.1): x / 2^n rounded half up (ties toward +infinity); n >= 1, elementwise.
    ``n >= 64`` gives 0, as the library's rounding_shift_right_half_up."""
    n = _as_i64(n, x)
    nc = n.clamp(1, 63)
    r = (x >> nc) + ((x >> (nc - 1)) & 1)
    return torch.where(n >= 64, torch.zeros_like(r), r)


def _pow2_apply(x: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """A(2^-shift, x): a rounding right shift, or for shift < 0 a left shift saturated to int64."""
    shift = _as_i64(shift, x)
    left = (-shift).clamp(0, 62)
    limit = _I64_MAX >> left
    shifted = x * (torch.ones_like(left) << left)
    sat = torch.where(x > limit, torch.full_like(x, _I64_MAX),
                      torch.where(x < -limit - 1, torch.full_like(x, _I64_MIN), shifted))
    zero_x = x == 0
    sat = torch.where(zero_x, x, sat)
    right = rshr(x, shift.clamp(min=1))
    return torch.where(shift < 0, sat, torch.where(shift == 0, x, right))


def _mul_apply(x: torch.Tensor, m: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """A((m, shift), x) = RSHR(x * m, shift) for a 31-bit multiplier (2^30 <= m < 2^31) and
    shift >= 1, without the 128-bit product: x = xh 2^31 + xl (0 <= xl < 2^31), so
    x m = hi 2^31 + lo with hi = xh m and lo = xl m, both inside int64. Exact while
    |x m 2^-shift| < 2^62, which every buildable model keeps (spec 5.3 bounds it by 2^40)."""
    m = _as_i64(m, x)
    s = _as_i64(shift, x)
    xh = x >> 31
    xl = x & 0x7FFFFFFF
    hi = xh * m
    lo = xl * m
    # shift >= 32: floor((2^31 (hi + 2^(s-32)) + lo) / 2^s) = (hi + 2^(s-32) + (lo >> 31)) >> (s - 31)
    s_hi = s.clamp(32, 94)
    big = (hi + (torch.ones_like(s_hi) << (s_hi - 32)) + (lo >> 31)) >> (s_hi - 31)
    # shift <= 31: hi 2^(31-s) + floor((lo + 2^(s-1)) / 2^s)
    s_lo = s.clamp(1, 31)
    small = hi * (torch.ones_like(s_lo) << (31 - s_lo)) + ((lo + (torch.ones_like(s_lo) << (s_lo - 1))) >> s_lo)
    r = torch.where(s >= 32, big, small)
    return torch.where(s >= 95, torch.zeros_like(r), r)


def _apply_scalar(x: torch.Tensor, m: int, s: int) -> torch.Tensor:
    """A((m, s), x) for one scale: the same integers as the tensor path, fewer operations."""
    if m == 1:  # a power of two
        if s >= 64:
            return torch.zeros_like(x)
        if s >= 1:
            return (x >> s) + ((x >> (s - 1)) & 1)
        if s == 0:
            return x
        n = -s
        limit = _I64_MAX >> n
        return torch.where(x > limit, torch.full_like(x, _I64_MAX),
                           torch.where(x < -limit - 1, torch.full_like(x, _I64_MIN), x * (1 << n)))
    if s < 1:
        raise ValueError("a fixed-point multiplier with shift < 1 does not occur in fixq's GRU")
    if s >= 95:
        return torch.zeros_like(x)
    hi = (x >> 31) * m
    lo = (x & 0x7FFFFFFF) * m
    if s >= 32:
        return (hi + (1 << (s - 32)) + (lo >> 31)) >> (s - 31)
    return hi * (1 << (31 - s)) + ((lo + (1 << (s - 1))) >> s)


def per_row(m, shift) -> dict:
    """Per-row scales ({"m", "shift"} int64 tensors) tagged with the one case of apply()
    that covers every row, when there is one, so that apply() computes only that case."""
    m = torch.as_tensor(m, dtype=I64)
    shift = torch.as_tensor(shift, dtype=I64)
    case = None
    if bool((m == 1).all()) and bool(((shift >= 1) & (shift <= 63)).all()):
        case = "pow2_right"
    elif bool((m >= 1 << 30).all()) and bool(((shift >= 32) & (shift <= 94)).all()):
        case = "mul_big"
    elif bool((m >= 1 << 30).all()) and bool(((shift >= 1) & (shift <= 31)).all()):
        case = "mul_small"
    return {"m": m, "shift": shift, "case": case,
            "lo_half": torch.ones_like(shift) << (shift - 1).clamp(0, 62),     # 2^(s-1), s <= 31
            "big_half": torch.ones_like(shift) << (shift - 32).clamp(0, 62)}   # 2^(s-32), s >= 32


def apply_scale(x: torch.Tensor, scale) -> torch.Tensor:
    """A(rho, x) (spec 2.3) for an int64 tensor x; ``scale`` is {"m", "shift"} with ints,
    or as per_row() makes it for per-row scales that broadcast against x (GEMM rows)."""
    if isinstance(scale["m"], int) and isinstance(scale["shift"], int):
        return _apply_scalar(x, scale["m"], scale["shift"])
    case = scale.get("case")
    if case == "pow2_right":
        s = scale["shift"]
        return (x >> s) + ((x >> (s - 1)) & 1)
    if case == "mul_big":
        m, s = scale["m"], scale["shift"]
        hi = (x >> 31) * m
        lo = (x & 0x7FFFFFFF) * m
        return (hi + scale["big_half"] + (lo >> 31)) >> (s - 31)
    if case == "mul_small":
        m, s = scale["m"], scale["shift"]
        hi = (x >> 31) * m
        lo = (x & 0x7FFFFFFF) * m
        return hi * (torch.ones_like(s) << (31 - s)) + ((lo + scale["lo_half"]) >> s)
    m = _as_i64(scale["m"], x)
    shift = _as_i64(scale["shift"], x)
    if bool((m == 1).all()):
        return _pow2_apply(x, shift)
    if bool((shift < 1).any()):
        raise ValueError("a fixed-point multiplier with shift < 1 does not occur in fixq's GRU")
    return _mul_apply(x, m, shift)


def requantize(v: torch.Tensor, scale, zp: int, qmin: int, qmax: int) -> torch.Tensor:
    """sat(clamp(A(rho, v), +-2^40) + zp) into [qmin, qmax] (spec 2.4)."""
    a = apply_scale(v, scale).clamp(-_REQUANT_CLAMP, _REQUANT_CLAMP)
    return (a + zp).clamp(qmin, qmax)


def quantize(x: torch.Tensor, scale: float, zp: int, qmin: int, qmax: int) -> torch.Tensor:
    """Spec 3.1: zp + RNE_SAT(fl32(x / S), qmin - zp, qmax - zp) for float32 x; int64 result."""
    s = torch.tensor(scale, dtype=torch.float32, device=x.device)
    r = torch.round(x.detach().float() / s)  # binary32 division, then half to even
    return r.clamp(qmin - zp, qmax - zp).to(I64) + zp


def dequantize(q: torch.Tensor, scale: float, zp: int) -> torch.Tensor:
    """Spec 3.1: fl32(float(q - zp) * S)."""
    return (q - zp).float() * torch.tensor(scale, dtype=torch.float32, device=q.device)


class Lut:
    """An activation table (spec 4.4) as the library built it: direct for an 8-bit input,
    knots with integer linear interpolation for a 16-bit one."""

    def __init__(self, d: dict, device=None):
        self.input_min = int(d["input_min"])
        self.shift = int(d["shift"])
        self.frac_bits = int(d["frac_bits"])
        self.direct = bool(d["direct"])
        self.out_min = int(d["output_min"])
        self.out_max = int(d["output_max"])
        self.table = torch.as_tensor(d["table"], dtype=I64, device=device)

    def __call__(self, q: torch.Tensor) -> torch.Tensor:
        i = q - self.input_min
        if self.direct:
            return self.table[i]
        k = i >> self.shift
        fr = i & ((1 << self.shift) - 1)
        lo, hi = self.table[k], self.table[k + 1]
        v = lo * (1 << self.shift) + (hi - lo) * fr
        return rshr(v, torch.tensor(self.frac_bits + self.shift)).clamp(self.out_min, self.out_max)
