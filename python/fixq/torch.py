"""fixq.torch: the integer GRU as a ``torch.nn.Module``.

:class:`QuantGRU` is a drop-in for ``torch.nn.GRU`` at inference: same ``forward(input,
hx=None)``, same layouts (``batch_first``, unbatched 2-D input, ``PackedSequence``), same
outputs ``(output, h_n)`` as float32 tensors, computed by fixq's integer-only GRU. Its
outputs are those of ``fixq gru run`` on the same ``.fixq`` model and input, bit for bit.

Inference only: the integer path has no gradient. ``forward`` raises ``RuntimeError`` when
autograd would need one (an input that requires grad while grad mode is on); run it under
``torch.no_grad()`` / ``torch.inference_mode()`` or detach the input. ``train()`` /
``eval()`` are accepted and change nothing (there is no dropout).

Example::

    gru = torch.nn.GRU(32, 64, num_layers=2, batch_first=True)
    qgru = fixq.torch.QuantGRU.from_float(gru, calib_batches, config="int8")
    with torch.no_grad():
        y, h = qgru(x)              # as gru(x), through the integer GRU
    qgru.save("gru.fixq")           # readable by `fixq gru run --model gru.fixq`

Whole models: ``quantize_module(module, example, calib, preset="int16")`` exports a user's
``nn.Module`` to ONNX in a temporary directory (dynamic batch and time axes), imports and
quantizes it with fixq and returns a :class:`FixqModel` (an ``nn.Module``; ``.stream(batch)``
steps one frame at a time); ``export_model`` gives the float ``fixq.Model``.
"""

from ._fakequant import FakeQuantGRU
from ._model_torch import FixqModel, FixqModelStream, export_model, quantize_module
from ._quantgru import QuantGRU

__all__ = ["QuantGRU", "FakeQuantGRU", "FixqModel", "FixqModelStream", "export_model", "quantize_module"]
