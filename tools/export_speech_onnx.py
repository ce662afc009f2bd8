#!/usr/bin/python3
"""Writes the demo's speech-enhancement model (data/speech) as one ONNX file, from the stored
weights, with no training: features [B, T, 22] -> nn.GRU(22, 64, 2 layers) -> nn.Linear(64, 22)
-> sigmoid -> band gains [B, T, 22], exported by torch.onnx.export at opset 17 with dynamic
batch and time axes. The model is tools/train_speech.py's SpeechGru, batch first (the stored
features are [T, B, 22]; the file takes [B, T, 22], as a streaming user holds frames).

The file is reproducible byte for byte: torch.onnx.export's output depends only on the
module, the example input's shape, the opset, the names and the torch version (its
producer_version; tensor names such as onnx::GRU_184 are numbered by the tracer, the same on
every run of one version), and it writes no doc strings or timestamps. The export copies,
transposes and reorders the weights but computes nothing from them, so the CPU's float
kernels cannot reach the file. tests/python/test_speech_onnx.py remakes it and compares the
bytes (made with Debian 12's torch 1.13).

Usage (Debian's interpreter, which has python3-torch):
  /usr/bin/python3 tools/export_speech_onnx.py --data data/speech --out data/speech/model.onnx
"""
import argparse
import io
import os
import warnings

import numpy as np
import torch
from torch import nn

OPSET = 17


class SpeechModel(nn.Module):
    """tools/train_speech.py's SpeechGru, batch first: x [B, T, bands] -> gains [B, T, bands]."""

    def __init__(self, bands, hidden, layers):
        super().__init__()
        self.gru = nn.GRU(bands, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, bands)

    def forward(self, x):
        y, _ = self.gru(x)
        return torch.sigmoid(self.head(y))


def load(data):
    """The module with data/speech's stored weights, every one checked to be used."""
    names = sorted(f[:-4] for f in os.listdir(data) if f.startswith(("gru.", "head.")) and f.endswith(".npy"))
    state = {n: torch.from_numpy(np.load(os.path.join(data, n + ".npy"))) for n in names}
    bands, hidden = state["gru.weight_ih_l0"].shape[1], state["gru.weight_hh_l0"].shape[1]
    layers = sum(1 for n in names if n.startswith("gru.weight_ih_l"))
    model = SpeechModel(bands, hidden, layers)
    model.load_state_dict(state, strict=True)
    return model.eval()


def export(model):
    """The ONNX file's bytes."""
    bands = model.gru.input_size
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's notes on batch_first GRUs and shape inference
        torch.onnx.export(model, torch.zeros(1, 4, bands), buf, opset_version=OPSET, input_names=["features"],
                          output_names=["gains"], dynamic_axes={"features": {0: "batch", 1: "time"},
                                                                "gains": {0: "batch", 1: "time"}},
                          do_constant_folding=True)
    return buf.getvalue()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="data/speech", help="the model folder (gru.*.npy, head.*.npy)")
    p.add_argument("--out", required=True, help="the ONNX file to write")
    a = p.parse_args()
    torch.set_num_threads(1)
    data = export(load(a.data))
    with open(a.out, "wb") as f:
        f.write(data)
    print(f"{a.out}: {len(data)} bytes, opset {OPSET}")


if __name__ == "__main__":
    main()
