"""fixq: integer-only quantized inference, from Python.

The C++ library does the work (module ``fixq._fixq``); this package re-exports it:

* the float GRU (:class:`GruModel`, from a ``torch.nn.GRU``, a safetensors state_dict or an ONNX model)
  and the integer GRU (:class:`GruCalibrator` -> :class:`GruQuantParams` ->
  :class:`QuantizedGru`, streaming with :meth:`QuantizedGru.stream`, ``.fixq`` files);
  :func:`quantize_gru` calibrates one in a single call;
* integer GEMM with its epilogues (:func:`gemm_s32`, :func:`gemm_s64`, :func:`gemm_f32`,
  :func:`gemm_requant`, :class:`PackedB`);
* quantize / dequantize at every granularity (:class:`QuantScheme`, :class:`QuantParams`,
  :func:`params_from_ranges`, :func:`minmax_ranges`, :func:`quantize`, :func:`dequantize`),
  calibration observers (:class:`Observer`) and fixed-point arithmetic
  (:class:`FixedPointScale`, :func:`round_half_even`, ...);
* the number formats (:mod:`fixq.formats`, ``.bin`` files included), error metrics
  (:mod:`fixq.metrics`), and :func:`file_kind`, what a file is by its bytes;
* ``fixq.torch.QuantGRU``, an ``nn.Module`` drop-in for ``nn.GRU`` inference, and
  ``fixq.torch.FakeQuantGRU`` for quantization-aware training (imported on demand:
  ``import fixq.torch``; they need torch, the rest of fixq needs only numpy).

Arrays go in and come out as numpy arrays; C-contiguous inputs of the expected dtype are
read in place, outputs are handed over without a copy. Bad input (wrong shapes or values,
corrupt or truncated file contents) raises ``ValueError`` with the library's one-line
message; a file the operating system cannot open, read or write raises ``OSError``
(``FileNotFoundError``, ``PermissionError``, ... chosen by errno, as Python's ``open`` does)
with the same kind of message. A name in a spelling fixq no longer writes (granularity
``"tensor"`` for ``"per_tensor"``, say) still works and issues a ``DeprecationWarning``.
"""

from . import formats, metrics
from ._calibration import calibrated_ptq as _calibrated_ptq
from ._fixq import (
    FixedPointScale,
    GruAutoBitsResult,
    GruCalibrator,
    GruModel,
    GruPtq,
    GruPtqResult,
    GruQuantConfig,
    GruQuantParams,
    GruStream,
    Model,
    ModelStream,
    Observer,
    PackedB,
    QuantizedGru,
    QuantizedGruStream,
    QuantizedModel,
    QuantizedModelStream,
    QuantParams,
    QuantScheme,
    __version__,
    dequantize,
    dequantize_value,
    file_kind,
    gemm_f32,
    gemm_requant,
    gemm_s32,
    gemm_s64,
    gemm_threads,
    gru_bits_cost,
    gru_ops,
    minmax_ranges,
    params_from_ranges,
    params_from_tensor,
    quantize,
    quantize_value,
    requantize,
    round_half_even,
    rounding_shift_right_half_up,
    set_gemm_threads,
)


def _plain_batch(item, batch_first):
    """(x, lengths, batch_first) of a quantize_gru batch: an array, or a tuple (x, lengths)."""
    if isinstance(item, tuple):
        if len(item) != 2:
            raise ValueError("quantize_gru: a tuple batch must be (x, lengths)")
        return item[0], item[1], batch_first
    return item, None, batch_first


def quantize_gru(model, calib, config="int8", scales=None, method="auto", rounding="gptq",
                 bias_correction: bool = True, batch_first: bool = False, **options) -> QuantizedGru:
    """Calibrates ``model`` (a :class:`GruModel`, or a ``torch.nn.GRU``) on ``calib`` and
    returns the integer GRU, with the post-training steps of :class:`GruPtq`.

    ``calib`` is an iterable of batches, each an array ``[T, B, C]`` (``[B, T, C]`` with
    ``batch_first``) or a tuple ``(x, lengths)``; every batch is one observation (one EMA
    step per time step). ``config``: ``"int8"``, ``"int16"``, a :class:`GruQuantConfig`
    (``GruQuantConfig.from_json(text)`` for JSON text), a dict, or a ``pathlib.Path`` of a JSON
    config file; ``scales``: ``"pow2"`` (default) or ``"multiplier"``; ``method``:
    ``"auto"`` (each operator's range by the output error) or one of ``"minmax"``,
    ``"ema"``, ``"percentile"``, ``"mse"`` for all; ``rounding``: ``"gptq"`` or
    ``"nearest"``; ``bias_correction``: subtract the rounding's expected error from the
    biases; ``options``: ``ema_decay``, ``percentile``, ``bins``, ``gptq_damp``,
    ``search_sweeps``, ``max_search_steps``. With ``method`` a method, ``rounding="nearest"``
    and ``bias_correction=False`` this is exactly :class:`GruCalibrator`'s calibration.

    Feeding the same batches as ``fixq gru quantize --calib-batch N`` with the same
    options gives the same model as the command line.
    """
    if not isinstance(model, GruModel):
        model = GruModel.from_torch(model)
    ptq = _calibrated_ptq(model, calib, lambda item: _plain_batch(item, batch_first), "quantize_gru", method=method,
                          rounding=rounding, bias_correction=bias_correction, **options)
    return ptq.quantize(config, scales).quantized()


__all__ = [
    "FixedPointScale", "GruAutoBitsResult", "GruCalibrator", "GruModel", "GruPtq", "GruPtqResult", "GruQuantConfig",
    "GruQuantParams", "GruStream", "Model", "ModelStream", "Observer", "PackedB", "QuantizedGru", "QuantizedGruStream",
    "QuantizedModel", "QuantizedModelStream", "QuantParams",
    "QuantScheme", "dequantize", "dequantize_value", "file_kind", "formats", "gemm_f32", "gemm_requant", "gemm_s32",
    "gemm_s64", "gemm_threads", "gru_bits_cost", "gru_ops", "metrics", "minmax_ranges", "params_from_ranges",
    "params_from_tensor", "quantize", "quantize_gru", "quantize_value", "requantize", "round_half_even",
    "rounding_shift_right_half_up", "set_gemm_threads",
]
