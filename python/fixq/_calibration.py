"""The one calibration loop of the Python package: fixq.quantize_gru and fixq.torch's
from_float both feed their batches to fixq.GruPtq through it, each unpacking its own kinds
of batch (arrays and tuples; torch tensors and PackedSequences)."""

from ._fixq import GruPtq


def calibrated_ptq(model, calib, unpack, who, method="auto", rounding="gptq", bias_correction=True,
                   **options) -> GruPtq:
    """A GruPtq of ``model`` that has observed every batch of ``calib``; ``unpack(batch)``
    gives ``(x, lengths, batch_first)`` of one batch. Raises ValueError, naming ``who``,
    when ``calib`` yields no batch."""
    ptq = GruPtq(model, method=method, rounding=rounding, bias_correction=bias_correction, **options)
    for batch in calib:
        x, lengths, batch_first = unpack(batch)
        ptq.observe(x, lengths=lengths, batch_first=batch_first)
    if ptq.batches == 0:
        raise ValueError(f"{who}: the calibration iterable yielded no batches")
    return ptq
