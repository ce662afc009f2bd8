"""fixq.torch.QuantGRU: the integer GRU behind torch.nn.GRU's inference interface (see
fixq.torch)."""

import os
import tempfile
from typing import Iterable, Optional, Tuple, Union

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

from . import _fixq
from ._torch_common import as_numpy, calibrate, gru_repr


class QuantGRU(nn.Module):
    """Integer-only GRU with ``torch.nn.GRU``'s inference interface.

    Build one with :meth:`from_float` (calibrate a float ``nn.GRU``), :meth:`load` (a
    ``.fixq`` file, e.g. from ``fixq gru quantize``) or :meth:`from_quantized` (a
    :class:`fixq.QuantizedGru`). Attributes ``input_size``, ``hidden_size``,
    ``num_layers``, ``bidirectional`` and ``batch_first`` are as ``nn.GRU``'s;
    ``cell_kind`` is ``"reset_after"`` (``nn.GRU``'s cell, all that :meth:`from_float`
    makes) or ``"reset_before"`` for a loaded model of that cell (an ONNX GRU with
    ``linear_before_reset = 0``, ``fixq gru quantize``; docs/spec.md 5.4), which runs the
    same way.

    The integer model is not made of torch parameters: ``state_dict()`` is empty and
    ``.to()`` / ``.half()`` change nothing; persist it with :meth:`save` (a ``.fixq``
    file) or ``torch.save(module)`` (pickles the same bytes).
    """

    def __init__(self, quantized: "_fixq.QuantizedGru", batch_first: bool = False):
        super().__init__()
        if not isinstance(quantized, _fixq.QuantizedGru):
            raise TypeError("QuantGRU(quantized, batch_first): quantized must be a fixq.QuantizedGru; "
                            "use QuantGRU.from_float(nn.GRU, calib) or QuantGRU.load(path)")
        self.quantized = quantized
        self.input_size = quantized.input_size
        self.hidden_size = quantized.hidden_size
        self.num_layers = quantized.num_layers
        self.bidirectional = quantized.bidirectional
        self.cell_kind = quantized.cell_kind
        self.batch_first = bool(batch_first)

    # ---- construction ------------------------------------------------------------------

    @classmethod
    def from_float(cls, gru: nn.GRU, calib: Iterable, config="int8", scales: Optional[str] = None,
                   method: str = "auto", rounding: str = "gptq", bias_correction: bool = True,
                   **options) -> "QuantGRU":
        """Calibrates ``gru`` on ``calib`` and returns its integer version.

        ``calib``: an iterable of batches in ``gru``'s layout (``batch_first`` honoured):
        tensors or arrays ``[T, B, C]`` / ``[B, T, C]`` (2-D: one unbatched sequence),
        ``PackedSequence`` objects, or ``(x, lengths)`` tuples. Each batch is one
        observation. ``config`` / ``scales`` as :class:`fixq.GruCalibrator`'s; the
        post-training steps are those of :class:`fixq.GruPtq`, all on by default:
        ``method="auto"`` chooses each operator's range by the output error (or one of
        ``"minmax"``, ``"ema"``, ``"percentile"``, ``"mse"`` for all), ``rounding="gptq"``
        rounds the weights against the calibration inputs (``"nearest"``: plain rounding),
        ``bias_correction`` subtracts the rounding's expected error from the biases;
        ``options``: ``ema_decay``, ``percentile``, ``bins``, ``gptq_damp``,
        ``search_sweeps``, ``max_search_steps``.
        """
        model, params = calibrate(gru, calib, config, scales, method, rounding, bias_correction, **options)
        return cls(_fixq.QuantizedGru(model, params), batch_first=gru.batch_first)

    @classmethod
    def from_quantized(cls, quantized: "_fixq.QuantizedGru", batch_first: bool = False) -> "QuantGRU":
        """Wraps an existing :class:`fixq.QuantizedGru`."""
        return cls(quantized, batch_first=batch_first)

    @classmethod
    def load(cls, path: str, batch_first: bool = False) -> "QuantGRU":
        """Reads a ``.fixq`` quantized model file (``batch_first`` is not stored in it)."""
        return cls(_fixq.QuantizedGru.load(str(path)), batch_first=batch_first)

    def save(self, path: str) -> None:
        """Writes the ``.fixq`` quantized model file (``fixq gru run --model`` reads it)."""
        self.quantized.save(str(path))

    # torch.save(module) and copy.deepcopy pickle the module: the integer model travels as
    # the bytes of its .fixq file (it has no torch parameters or buffers; state_dict() is empty).
    def __getstate__(self):
        state = self.__dict__.copy()
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "model.fixq")
            self.quantized.save(path)
            with open(path, "rb") as f:
                state["quantized"] = f.read()
        return state

    def __setstate__(self, state):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "model.fixq")
            with open(path, "wb") as f:
                f.write(state["quantized"])
            state["quantized"] = _fixq.QuantizedGru.load(path)
        self.__dict__.update(state)

    def params(self) -> dict:
        """The quantization parameters as a dict (see :meth:`fixq.QuantizedGru.params`)."""
        return self.quantized.params()

    def flatten_parameters(self) -> None:
        """No-op, for code written for ``nn.GRU`` (there are no cuDNN weights to flatten)."""

    def extra_repr(self) -> str:
        return gru_repr(self, self.quantized.config.scales)

    # ---- inference ---------------------------------------------------------------------

    def forward(self, input: Union[torch.Tensor, PackedSequence], hx: Optional[torch.Tensor] = None
                ) -> Tuple[Union[torch.Tensor, PackedSequence], torch.Tensor]:
        """As ``nn.GRU.forward``: returns ``(output, h_n)``.

        input: ``[T, B, C]`` (``[B, T, C]`` if ``batch_first``), ``[T, C]`` unbatched, or a
        ``PackedSequence`` (then output is a ``PackedSequence`` with the input's batch
        sizes and ordering). hx: ``[L*D, B, H]`` (``[L*D, H]`` unbatched) or None (zeros).
        Outputs are float32 tensors on the input's device.
        """
        tensors = [input.data if isinstance(input, PackedSequence) else input] + ([hx] if hx is not None else [])
        if torch.is_grad_enabled() and any(isinstance(t, torch.Tensor) and t.requires_grad for t in tensors):
            raise RuntimeError("QuantGRU is inference-only (the integer GRU has no gradient): call it under "
                               "torch.no_grad() or torch.inference_mode(), or detach the input")
        device = tensors[0].device if isinstance(tensors[0], torch.Tensor) else torch.device("cpu")
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx, device)

        x = as_numpy(input)
        if x.ndim == 2:  # unbatched: [T, C] and hx [L*D, H]
            if hx is not None and hx.dim() != 2:
                raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
            h0 = None if hx is None else as_numpy(hx)[:, None, :]
            y, h_n = self.quantized.forward(x[:, None, :], h0)
            return torch.from_numpy(y[:, 0, :]).to(device), torch.from_numpy(h_n[:, 0, :]).to(device)
        if x.ndim != 3:
            raise ValueError(f"QuantGRU: expected input of 2 (unbatched) or 3 dimensions, got shape {tuple(x.shape)}")
        if hx is not None and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
        h0 = None if hx is None else as_numpy(hx)
        y, h_n = self.quantized.forward(x, h0, batch_first=self.batch_first)
        return torch.from_numpy(y).to(device), torch.from_numpy(h_n).to(device)

    def _forward_packed(self, input: PackedSequence, hx, device):
        # pad_packed_sequence restores the caller's batch order, in which hx is given and
        # h_n is returned (as nn.GRU does); the output is re-packed in the input's order.
        padded, lengths = pad_packed_sequence(input, batch_first=False)
        h0 = None if hx is None else as_numpy(hx)
        y, h_n = self.quantized.forward(as_numpy(padded), h0, lengths=lengths.numpy().astype(np.int64))
        y = torch.from_numpy(y)
        if input.sorted_indices is not None:
            order = input.sorted_indices.cpu()
            y, lengths = y.index_select(1, order), lengths.index_select(0, order)
        data = pack_padded_sequence(y, lengths, enforce_sorted=True).data.to(device)
        output = PackedSequence(data, input.batch_sizes, input.sorted_indices, input.unsorted_indices)
        return output, torch.from_numpy(h_n).to(device)
