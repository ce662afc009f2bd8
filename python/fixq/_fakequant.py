"""fixq.torch.FakeQuantGRU: quantization-aware training of fixq's integer GRU.

The forward pass is fixq's integer pipeline itself, computed exactly in int64 torch
tensors (``fixq._qsim``) from the constants the library derives for the current weights
(``QuantizedGru.cell_constants``): every operator's quantization, half-up rescale,
saturation and table. In eval mode (or without grad) the outputs therefore equal the
integer model's, ``fixq gru run`` on :meth:`FakeQuantGRU.to_quantized`, bit for bit.

In training, each operator's output keeps that exact value while its gradient is the one
of the operator's float formula evaluated on its (exact) inputs, masked to zero where the
formula leaves the operator's range (a straight-through estimator per operator):
``y = q(y) + (f(x) - f(x).detach()) * [f(x) inside the range]``. The weights pass through
round-to-nearest with the same estimator.

What learns, and what stays frozen:

* **Weights and biases learn** (``weight_ih_l0`` ..., the names of ``nn.GRU``, so its
  ``state_dict`` loads back into an ``nn.GRU``).
* **Every activation scale and zero point is frozen** at the calibrated values, and so are
  the per-row scales of W and R. A pow2 scale must stay a power of two: a learned one
  (LSQ-style) would have to be rounded to one after every update, a jump of 2x that the
  gradient knows nothing about. Frozen scales also keep every fixed-point ratio and table
  of the integer step constant, so only the weight-dependent integers change while
  training, and the integer model is always one that the calibrated parameters describe.
  The weights adapt to the grid instead: that is what the fine-tune is for.
* **Bias parameters follow the biases**: a bias is quantized per element, so its scale is
  re-derived from its current value at every step (as calibration derives it), letting a
  bias grow past its starting magnitude; what the integer step uses is the bias constant
  in the pre-activation's LSBs, which the library computes from it.
"""

from typing import Iterable, Optional, Tuple, Union

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

from . import _fixq
from . import _qsim as qs
from ._quantgru import QuantGRU
from ._torch_common import calibrate, gru_repr

I64 = torch.int64


def _bits_range(bits: int):
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


class _Op:
    """One per-tensor operator's parameters: scale, zero point, integer range."""

    def __init__(self, p: dict, bits: int):
        self.scale = float(p["scale"][0])
        self.zp = int(p["zero_point"][0])
        self.qmin, self.qmax = _bits_range(bits)
        s = np.float32(self.scale)
        self.lo = float(np.float32(self.qmin - self.zp) * s)  # dequantize(qmin), the range's real ends
        self.hi = float(np.float32(self.qmax - self.zp) * s)

    def deq(self, q):
        return qs.dequantize(q, self.scale, self.zp)

    def quant(self, x):
        return qs.quantize(x, self.scale, self.zp, self.qmin, self.qmax)

    def sat(self, v):
        return v.clamp(self.qmin, self.qmax)

    def ste(self, q, f):
        """The exact value deq(q) carrying f's gradient where f lies inside the range."""
        mask = ((f.detach() >= self.lo) & (f.detach() <= self.hi)).to(f.dtype)
        return self.deq(q) + (f - f.detach()) * mask


_ACTIVATION_OPS = ("x", "h", "Wx", "Rh", "z_pre", "r_pre", "g_pre", "z_out", "r_out", "g_out", "Rh_add_br", "rRh",
                   "old_contrib", "new_contrib")
_SCALE_NAMES = ("wx_to_z", "rh_to_z", "wx_to_r", "rh_to_r", "rh_to_rhab", "wx_to_g", "rrh_to_g", "rrh_mul", "old_mul",
                "new_mul", "old_to_h", "new_to_h")


class _Cell:
    """The constants of one cell as torch tensors, plus its operators' parameters."""

    def __init__(self, k: dict, params: dict, bits: dict):
        self.op = {name: _Op(params[name], bits[name]) for name in _ACTIVATION_OPS}
        self.q_w = torch.as_tensor(k["q_w"], dtype=I64)
        self.q_r = torch.as_tensor(k["q_r"], dtype=I64)
        self.w_scale = torch.tensor(params["W"]["scale"], dtype=torch.float32)
        self.r_scale = torch.tensor(params["R"]["scale"], dtype=torch.float32)
        self.w_range = _bits_range(bits["W"])
        self.r_range = _bits_range(bits["R"])
        # The GEMM operands as float64: products and sums of these integers stay below
        # 2^53 (16-bit weights need 8-bit inputs), so float64 matmuls are exact.
        self.q_w_t = self.q_w.to(torch.float64).t().contiguous()
        self.q_r_t = self.q_r.to(torch.float64).t().contiguous()
        self.wx_scale = qs.per_row(k["wx_scale"]["m"], k["wx_scale"]["shift"])
        self.rh_scale = qs.per_row(k["rh_scale"]["m"], k["rh_scale"]["shift"])
        self.s = {name: {"m": int(k[name]["m"]), "shift": int(k[name]["shift"])} for name in _SCALE_NAMES}
        self.bias = {name: torch.as_tensor(k[name], dtype=I64) for name in ("bias_z", "bias_r", "bias_rhab", "bias_g")}
        self.q_one = int(k["q_one"])
        self.sig_z, self.sig_r, self.tanh_g = qs.Lut(k["sig_z"]), qs.Lut(k["sig_r"]), qs.Lut(k["tanh_g"])
        self.x_from_below = [{"m": int(s["m"]), "shift": int(s["shift"])} for s in k["x_from_below"]]


def _haste_rows(H: int) -> torch.Tensor:
    """Row order z, r, g (fixq, Haste) from torch's r, z, n."""
    return torch.cat([torch.arange(H, 2 * H), torch.arange(0, H), torch.arange(2 * H, 3 * H)])


def _haste(v: np.ndarray, H: int) -> np.ndarray:
    return np.concatenate([v[H:2 * H], v[:H], v[2 * H:]])


class FakeQuantGRU(nn.Module):
    """``nn.GRU`` whose forward pass is fixq's integer GRU, trainable (see the module doc).

    Build one with :meth:`from_float` (calibrate a float ``nn.GRU``, as
    ``QuantGRU.from_float`` does, and start from the same integer model) or from a float
    ``nn.GRU`` and parameters. ``forward(input, hx=None)`` has ``nn.GRU``'s signature and
    layouts (``batch_first``, unbatched 2-D input, ``PackedSequence``);
    :meth:`to_quantized` returns the :class:`~fixq.torch.QuantGRU` of the current
    weights, whose outputs equal this module's in eval mode bit for bit.
    """

    def __init__(self, gru: nn.GRU, params, batch_first: Optional[bool] = None):
        super().__init__()
        if not isinstance(gru, nn.GRU):
            raise TypeError(f"FakeQuantGRU expects a torch.nn.GRU, got {type(gru).__name__}")
        if gru.proj_size if hasattr(gru, "proj_size") else 0:
            raise ValueError("FakeQuantGRU: GRUs have no projections")
        self.input_size = gru.input_size
        self.hidden_size = gru.hidden_size
        self.num_layers = gru.num_layers
        self.bidirectional = gru.bidirectional
        self.bias = gru.bias
        self.batch_first = gru.batch_first if batch_first is None else bool(batch_first)
        for name, p in gru.named_parameters():
            self.register_parameter(name, nn.Parameter(p.detach().clone().float()))
        if isinstance(params, _fixq.GruQuantParams):
            params = params.to_dict()
        elif isinstance(params, str):
            params = _fixq.GruQuantParams.from_json(params).to_dict()
        self._params = _fixq.GruQuantParams.from_dict(params).to_dict()  # validated, a private copy
        self._config = _fixq.GruQuantConfig.from_dict(self._params["config"])
        self._cache_key = None
        self._cache = None
        # Building the integer model checks that the parameters fit the GRU.
        self._integer_model()

    # ---- construction ------------------------------------------------------------------

    @classmethod
    def from_float(cls, gru: nn.GRU, calib: Iterable, config="int8", scales: Optional[str] = None,
                   method: str = "auto", rounding: str = "gptq", bias_correction: bool = True,
                   **options) -> "FakeQuantGRU":
        """Calibrates ``gru`` on ``calib`` exactly as ``QuantGRU.from_float`` with the same
        arguments, and starts from that integer model (its rounded weights and corrected
        biases are the starting float weights): before any training this module's eval
        outputs equal that ``QuantGRU``'s."""
        model, params = calibrate(gru, calib, config, scales, method, rounding, bias_correction, **options)
        start = nn.GRU(gru.input_size, gru.hidden_size, num_layers=gru.num_layers, bias=gru.bias,
                       batch_first=gru.batch_first, bidirectional=gru.bidirectional)
        sd = {k: torch.from_numpy(np.asarray(v)) for k, v in model.state_dict().items()}
        start.load_state_dict({k: v for k, v in sd.items() if k in start.state_dict()})
        return cls(start, params)

    @property
    def config(self) -> "_fixq.GruQuantConfig":
        return self._config

    # torch.save / copy.deepcopy: the parameters (a dict) travel, the library objects built
    # from them (the config, the cached integer model) are rebuilt.
    def __getstate__(self):
        state = self.__dict__.copy()
        state["_config"] = None
        state["_cache"] = None
        state["_cache_key"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._config = _fixq.GruQuantConfig.from_dict(self._params["config"])

    def quant_params(self) -> dict:
        """The parameters of the integer model of the current weights (a dict as
        ``QuantizedGru.params()``): the frozen ones, and bias parameters from the biases."""
        return self._integer_model().params()

    def to_quantized(self) -> "QuantGRU":
        """The :class:`~fixq.torch.QuantGRU` of the current weights (``.save()`` writes the
        ``.fixq`` file that ``fixq gru run`` executes)."""
        return QuantGRU(self._integer_model(), batch_first=self.batch_first)

    def extra_repr(self) -> str:
        return gru_repr(self, self._config.scales)

    # ---- the integer model of the current weights ---------------------------------------

    def _state_dict_numpy(self) -> dict:
        sd = {}
        D = 2 if self.bidirectional else 1
        for layer in range(self.num_layers):
            for d in range(D):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                    p = getattr(self, kind + sfx, None)
                    if p is not None:
                        sd[kind + sfx] = p.detach().cpu().float().numpy()
                    else:  # bias=False: zeros, as nn.GRU computes
                        sd[kind + sfx] = np.zeros(3 * self.hidden_size, np.float32)
        return sd

    def _integer_model(self) -> "_fixq.QuantizedGru":
        key = tuple((p._version, p.data_ptr()) for p in self.parameters())
        if self._cache is not None and self._cache_key == key:
            return self._cache[0]
        sd = self._state_dict_numpy()
        model = _fixq.GruModel.from_state_dict(sd)
        params = {"version": self._params["version"], "config": self._params["config"],
                  "cells": [dict(c) for c in self._params["cells"]]}
        H, D = self.hidden_size, 2 if self.bidirectional else 1
        for c, cell in enumerate(params["cells"]):
            sfx = f"_l{c // D}" + ("_reverse" if c % D else "")
            for op, kind in (("bx", "bias_ih"), ("br", "bias_hh")):
                qp = _fixq.gru_parameter_params(op, self._config, _haste(sd[kind + sfx], H))
                entry = {"scale": [float(v) for v in qp.scale], "zero_point": [int(v) for v in qp.zero_point]}
                if self._config.scales == "pow2":
                    entry["exponent"] = [int(v) for v in qp.exponent]
                cell[op] = entry
        q = _fixq.QuantizedGru(model, params)
        bits = self._config.bits
        cells = [_Cell(q.cell_constants(c), params["cells"][c], bits) for c in range(len(params["cells"]))]
        self._cache, self._cache_key = (q, cells), key
        return q

    def _cells(self):
        self._integer_model()
        return self._cache[1]

    # ---- forward -----------------------------------------------------------------------

    def forward(self, input: Union[torch.Tensor, PackedSequence], hx: Optional[torch.Tensor] = None
                ) -> Tuple[Union[torch.Tensor, PackedSequence], torch.Tensor]:
        """As ``nn.GRU.forward``: returns ``(output, h_n)`` (float32)."""
        if isinstance(input, PackedSequence):
            # pad_packed_sequence restores the caller's batch order, in which hx is given and
            # h_n returned (as nn.GRU); the output is re-packed in the input's order.
            padded, lengths = pad_packed_sequence(input, batch_first=False)
            y, h_n = self._run(padded, lengths.to(I64), hx)
            if input.sorted_indices is not None:
                order = input.sorted_indices.cpu()
                y, lengths = y.index_select(1, order), lengths.index_select(0, order)
            data = pack_padded_sequence(y, lengths, enforce_sorted=True).data
            return PackedSequence(data, input.batch_sizes, input.sorted_indices, input.unsorted_indices), h_n
        if input.dim() == 2:
            if hx is not None and hx.dim() != 2:
                raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
            y, h_n = self._run(input[:, None, :], None, None if hx is None else hx[:, None, :])
            return y[:, 0, :], h_n[:, 0, :]
        if input.dim() != 3:
            raise ValueError(f"FakeQuantGRU: expected input of 2 (unbatched) or 3 dimensions, got {tuple(input.shape)}")
        if hx is not None and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
        x = input.transpose(0, 1) if self.batch_first else input
        y, h_n = self._run(x, None, hx)
        return (y.transpose(0, 1) if self.batch_first else y), h_n

    def _run(self, x: torch.Tensor, lengths: Optional[torch.Tensor], hx: Optional[torch.Tensor]):
        T, B, C = x.shape
        if C != self.input_size:
            raise ValueError(f"FakeQuantGRU: input has {C} features per step, the model expects {self.input_size}")
        H, L, D = self.hidden_size, self.num_layers, 2 if self.bidirectional else 1
        if hx is not None and tuple(hx.shape) != (L * D, B, H):
            raise RuntimeError(f"Expected hidden size {(L * D, B, H)}, got {tuple(hx.shape)}")
        if not torch.isfinite(x.detach()).all():
            raise ValueError("FakeQuantGRU: inputs must be finite")
        device = x.device
        x = x.detach().cpu().float() if not torch.is_grad_enabled() else x.cpu().float()
        grad = self.training and torch.is_grad_enabled()
        cells = self._cells()
        if lengths is None:
            lengths = torch.full((B,), T, dtype=I64)
        lengths = lengths.cpu().to(I64)
        if bool(((lengths < 0) | (lengths > T)).any()):
            raise ValueError(f"FakeQuantGRU: lengths must lie in [0, {T}]")
        hp = _haste_rows(H)

        c0 = cells[0].op["x"]
        q_in = c0.quant(x)
        r_in = c0.ste(q_in, x) if grad else None
        h_codes, h_reals = [], []
        for layer in range(L):
            outs_q, outs_r = [], []
            for d in range(D):
                c = layer * D + d
                cell = cells[c]
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                h0 = None if hx is None else hx[c].cpu().float()
                q_y, r_y, q_h, r_h = self._run_cell(cell, sfx, hp, q_in, r_in, lengths, d == 1, h0, grad)
                outs_q.append(q_y)
                outs_r.append(r_y)
                h_codes.append(q_h)
                h_reals.append(r_h)
            if layer + 1 == L:
                break
            nxt = cells[(layer + 1) * D]
            xo = nxt.op["x"]
            pad = (torch.arange(T)[:, None] >= lengths[None, :])[:, :, None]
            q_parts, r_parts = [], []
            for d in range(D):
                ho = cells[layer * D + d].op["h"]
                q = qs.requantize(outs_q[d] - ho.zp, nxt.x_from_below[d], xo.zp, xo.qmin, xo.qmax)
                q = torch.where(pad, torch.full_like(q, xo.zp), q)
                q_parts.append(q)
                if grad:
                    r_parts.append(xo.ste(q, outs_r[d]))
            q_in = torch.cat(q_parts, 2)
            r_in = torch.cat(r_parts, 2) if grad else None
        # Outputs: the top layer's states dequantized; padding exactly 0 (as the library).
        top = [cells[(L - 1) * D + d] for d in range(D)]
        pad = (torch.arange(T)[:, None] >= lengths[None, :])[:, :, None]
        ys = []
        for d in range(D):
            v = outs_r[(d)] if grad else top[d].op["h"].deq(outs_q[d])
            ys.append(torch.where(pad, torch.zeros_like(v), v))
        y = torch.cat(ys, 2)
        h_n = torch.stack([h_reals[c] if grad else cells[c].op["h"].deq(h_codes[c]) for c in range(L * D)])
        return y.to(device), h_n.to(device)

    def _run_cell(self, cell: _Cell, sfx: str, hp: torch.Tensor, q_x, r_x, lengths, reverse: bool, h0, grad: bool):
        """One direction of one layer: q_x [T, B, C] codes of the layer input in this
        cell's x parameters (r_x their STE reals when training). Returns the outputs
        [T, B, H] (codes, and reals when training; padding at h's zero point) and the final
        state (codes, reals)."""
        T, B, _ = q_x.shape
        H = self.hidden_size
        o = cell.op
        t_idx = torch.arange(T)[:, None].expand(T, B)
        active_all = t_idx < lengths[None, :]
        if reverse:  # each item's real steps reversed in place; padding stays
            t_idx = torch.where(active_all, lengths[None, :] - 1 - t_idx, t_idx)
        q_x = q_x.gather(0, t_idx[:, :, None].expand_as(q_x))
        if grad:
            r_x = r_x.gather(0, t_idx[:, :, None].expand_as(r_x))

        # Wx for every step (spec 5.1), exact in float64.
        v = ((q_x - o["x"].zp).to(torch.float64) @ cell.q_w_t).to(I64)
        q_wx = qs.requantize(v, cell.wx_scale, o["Wx"].zp, o["Wx"].qmin, o["Wx"].qmax)
        if grad:
            W = getattr(self, "weight_ih" + sfx)[hp]
            Rw = getattr(self, "weight_hh" + sfx)[hp]
            W_ste = self._weight_ste(W, cell.q_w, cell.w_scale, cell.w_range)
            R_ste = self._weight_ste(Rw, cell.q_r, cell.r_scale, cell.r_range)
            r_wx = o["Wx"].ste(q_wx, r_x @ W_ste.t())
            bx, br = self._bias(sfx, hp)

        q_h = o["h"].quant(h0) if h0 is not None else torch.full((B, H), o["h"].zp, dtype=I64)
        r_h = (o["h"].ste(q_h, h0) if h0 is not None else o["h"].deq(q_h)) if grad else None
        zp_h = o["h"].zp
        q_out = torch.full((T, B, H), zp_h, dtype=I64)
        r_out = [] if grad else None
        s = cell.s
        for i in range(T):
            active = active_all[i][:, None]
            v = ((q_h - zp_h).to(torch.float64) @ cell.q_r_t).to(I64)
            q_rh = qs.requantize(v, cell.rh_scale, o["Rh"].zp, o["Rh"].qmin, o["Rh"].qmax)
            wx = q_wx[i] - o["Wx"].zp
            rh = q_rh - o["Rh"].zp
            z_pre = o["z_pre"].sat(qs.apply_scale(wx[:, :H], s["wx_to_z"]) + qs.apply_scale(rh[:, :H], s["rh_to_z"]) +
                                   cell.bias["bias_z"] + o["z_pre"].zp)
            r_pre = o["r_pre"].sat(qs.apply_scale(wx[:, H:2 * H], s["wx_to_r"]) +
                                   qs.apply_scale(rh[:, H:2 * H], s["rh_to_r"]) + cell.bias["bias_r"] + o["r_pre"].zp)
            z = cell.sig_z(z_pre)
            r = cell.sig_r(r_pre)
            rhab = o["Rh_add_br"].sat(qs.apply_scale(rh[:, 2 * H:], s["rh_to_rhab"]) + cell.bias["bias_rhab"] +
                                      o["Rh_add_br"].zp)
            rrh = o["rRh"].sat(qs.apply_scale((r - o["r_out"].zp) * (rhab - o["Rh_add_br"].zp), s["rrh_mul"]) +
                               o["rRh"].zp)
            g_pre = o["g_pre"].sat(qs.apply_scale(wx[:, 2 * H:], s["wx_to_g"]) +
                                   qs.apply_scale(rrh - o["rRh"].zp, s["rrh_to_g"]) + cell.bias["bias_g"] +
                                   o["g_pre"].zp)
            g = cell.tanh_g(g_pre)
            old = o["old_contrib"].sat(qs.apply_scale((z - o["z_out"].zp) * (q_h - zp_h), s["old_mul"]) +
                                       o["old_contrib"].zp)
            one_minus_z = cell.q_one - z + o["z_out"].zp
            new = o["new_contrib"].sat(qs.apply_scale((one_minus_z - o["z_out"].zp) * (g - o["g_out"].zp),
                                                      s["new_mul"]) + o["new_contrib"].zp)
            h_new = o["h"].sat(qs.apply_scale(old - o["old_contrib"].zp, s["old_to_h"]) +
                               qs.apply_scale(new - o["new_contrib"].zp, s["new_to_h"]) + zp_h)
            if grad:
                r_rh = o["Rh"].ste(q_rh, r_h @ R_ste.t())
                f_z = o["z_pre"].ste(z_pre, r_wx[i][:, :H] + r_rh[:, :H] + bx[:H] + br[:H])
                f_r = o["r_pre"].ste(r_pre, r_wx[i][:, H:2 * H] + r_rh[:, H:2 * H] + bx[H:2 * H] + br[H:2 * H])
                f_zo = o["z_out"].ste(z, torch.sigmoid(f_z))
                f_ro = o["r_out"].ste(r, torch.sigmoid(f_r))
                f_rhab = o["Rh_add_br"].ste(rhab, r_rh[:, 2 * H:] + br[2 * H:])
                f_rrh = o["rRh"].ste(rrh, f_ro * f_rhab)
                f_g = o["g_pre"].ste(g_pre, r_wx[i][:, 2 * H:] + f_rrh + bx[2 * H:])
                f_go = o["g_out"].ste(g, torch.tanh(f_g))
                f_old = o["old_contrib"].ste(old, f_zo * r_h)
                f_new = o["new_contrib"].ste(new, (1 - f_zo) * f_go)
                f_h = o["h"].ste(h_new, f_old + f_new)
                r_h = torch.where(active, f_h, r_h)
                r_out.append(torch.where(active, f_h, torch.zeros_like(f_h)))
            q_h = torch.where(active, h_new, q_h)
            q_out[i] = torch.where(active, h_new, q_out[i])
        q_out = q_out.gather(0, t_idx[:, :, None].expand_as(q_out))  # back to time order (an involution)
        if grad:
            r_out = torch.stack(r_out).gather(0, t_idx[:, :, None].expand(T, B, H))
        return q_out, r_out, q_h, r_h

    @staticmethod
    def _weight_ste(w: torch.Tensor, q: torch.Tensor, scale: torch.Tensor, rng):
        """The integer weights' real values, with round-to-nearest's straight-through
        gradient where w lies inside the row's range."""
        deq = q.float() * scale[:, None]
        s = scale[:, None]
        mask = ((w.detach() >= rng[0] * s) & (w.detach() <= rng[1] * s)).to(w.dtype)
        return deq + (w - w.detach()) * mask

    def _bias(self, sfx: str, hp: torch.Tensor):
        """The float biases in fixq's row order (zeros without bias), carrying gradient."""
        if not self.bias:
            z = torch.zeros(3 * self.hidden_size)
            return z, z
        return getattr(self, "bias_ih" + sfx)[hp], getattr(self, "bias_hh" + sfx)[hp]
