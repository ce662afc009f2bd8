"""Shared by fixq.torch's modules (QuantGRU, FakeQuantGRU): torch tensors as numpy arrays,
one calibration batch in any of the layouts nn.GRU takes, and from_float's calibration."""

from typing import Iterable

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence, pad_packed_sequence

from . import _fixq
from ._calibration import calibrated_ptq


def as_numpy(t) -> np.ndarray:
    """A float32 numpy view of a CPU tensor (a copy only when dtype, device or layout need one)."""
    if isinstance(t, torch.Tensor):
        t = t.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.dtype != torch.float32:
            t = t.float()
        return t.contiguous().numpy()
    return np.ascontiguousarray(t, dtype=np.float32)


def gru_repr(module, scales: str) -> str:
    """extra_repr of the modules that stand in for an nn.GRU: its arguments as nn.GRU
    prints them, then the kind of scale."""
    s = f"{module.input_size}, {module.hidden_size}"
    if module.num_layers != 1:
        s += f", num_layers={module.num_layers}"
    if module.batch_first:
        s += ", batch_first=True"
    if module.bidirectional:
        s += ", bidirectional=True"
    return s + f", scales={scales!r}"


def unpack_batch(batch, batch_first: bool):
    """(x, lengths, batch_first) of one calibration batch: a tensor / array in the module's
    layout (2-D = one unbatched sequence), a PackedSequence, or a tuple (x, lengths)."""
    if isinstance(batch, PackedSequence):
        padded, lengths = pad_packed_sequence(batch, batch_first=False)
        return as_numpy(padded), lengths.numpy().astype(np.int64), False
    lengths = None
    if isinstance(batch, tuple):
        if len(batch) != 2:
            raise ValueError("a tuple calibration batch must be (x, lengths)")
        batch, lengths = batch
        lengths = np.asarray(lengths.cpu() if isinstance(lengths, torch.Tensor) else lengths, dtype=np.int64)
    x = as_numpy(batch)
    if x.ndim == 2:  # unbatched [T, C], whatever batch_first says (as nn.GRU)
        return x[:, None, :], lengths, False
    return x, lengths, batch_first


def calibrate(gru: nn.GRU, calib: Iterable, config, scales, method, rounding="gptq", bias_correction=True, **options):
    """(float model, parameters) of ``gru`` calibrated on ``calib`` with fixq.GruPtq: the
    model's weights on their integer grids and its biases corrected; what from_float builds."""
    if not isinstance(gru, nn.GRU):
        raise TypeError(f"from_float expects a torch.nn.GRU, got {type(gru).__name__}")
    ptq = calibrated_ptq(_fixq.GruModel.from_torch(gru), calib, lambda batch: unpack_batch(batch, gru.batch_first),
                         "from_float", method=method, rounding=rounding, bias_correction=bias_correction, **options)
    result = ptq.quantize(config, scales)
    return result.model, result.params
