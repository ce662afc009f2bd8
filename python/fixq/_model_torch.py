"""fixq.torch's whole-model helpers: a user's nn.Module, exported to ONNX in a temporary
directory (dynamic batch and time axes), imported and quantized by fixq, wrapped as an
nn.Module that runs the fixq model on tensors."""

import os
import tempfile
from typing import Sequence

import numpy as np
import torch
from torch import nn

from . import _fixq
from ._torch_common import as_numpy


def _tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def export_model(module: nn.Module, example_inputs, time_axis: int = 1, opset: int = 13) -> "_fixq.Model":
    """module exported by torch.onnx.export on example_inputs (a tensor or a tuple of them, each
    with batch on axis 0 and time on `time_axis`), loaded as a fixq.Model. Outputs keep batch
    on axis 0 and, where 3-D, time on `time_axis`."""
    args = _tuple(example_inputs)
    with torch.no_grad():
        outs = _tuple(module.eval()(*args))
    inames = [f"input{i}" for i in range(len(args))]
    onames = [f"output{i}" for i in range(len(outs))]
    dyn = {n: {0: "B", time_axis: "T"} for n in inames}
    for n, o in zip(onames, outs):
        dyn[n] = {0: "B", time_axis: "T"} if o.dim() >= 3 else {0: "B"}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.onnx")
        torch.onnx.export(module, args, path, opset_version=opset, input_names=inames, output_names=onames,
                          dynamic_axes=dyn)
        return _fixq.Model.load_onnx(path)


def quantize_module(module: nn.Module, example_inputs, calib: Sequence, preset: str = "int16", scales: str = "pow2",
                    time_axis: int = 1, opset: int = 13) -> "FixqModel":
    """module as a fixq integer model (preset 'int8' | 'int16', scales 'pow2' | 'multiplier'),
    calibrated on calib (batches: a tensor or a tuple of tensors each), wrapped as FixqModel.
    preset=None keeps the float fixq model."""
    model = export_model(module, example_inputs, time_axis, opset)
    if preset is None:
        return FixqModel(model)
    batches = [[as_numpy(t) for t in _tuple(b)] for b in calib]
    return FixqModel(_fixq.QuantizedModel.quantize(model, batches, preset=preset, scales=scales))


class FixqModel(nn.Module):
    """A fixq.Model or fixq.QuantizedModel as an nn.Module: forward(*tensors) gives the fixq
    outputs as float32 tensors (one, or a tuple); stream(batch) gives a stream whose
    step(*frames [B, C]) gives each output's current frame. Inference only."""

    def __init__(self, model):
        super().__init__()
        self.fixq_model = model

    def forward(self, *inputs):
        outs = [torch.from_numpy(np.asarray(o)) for o in self.fixq_model.forward([as_numpy(t) for t in inputs])]
        return outs[0] if len(outs) == 1 else tuple(outs)

    def stream(self, batch: int = 1) -> "FixqModelStream":
        return FixqModelStream(self.fixq_model.stream(batch))

    def save(self, path) -> None:
        self.fixq_model.save(path)


class FixqModelStream:
    """One frame per step(*frames), each [B, C]; outputs as tensors (one, or a tuple)."""

    def __init__(self, stream):
        self._stream = stream

    def step(self, *frames):
        outs = [torch.from_numpy(np.asarray(o)) for o in self._stream.step([as_numpy(t) for t in frames])]
        return outs[0] if len(outs) == 1 else tuple(outs)
