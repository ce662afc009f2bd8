#!/usr/bin/python3
"""Writes a small whole model as ONNX, the shape of RNNoise 2024 (two causal Conv1d + tanh,
three GRUs, the concatenation of the conv output and every GRU output, two Linear +
sigmoid heads), with torch's default initialisation from a seed, exported by
torch.onnx.export with dynamic batch and time axes: the model `fixq model` examples and
tests run on. Optionally a random input and torch's outputs on it.

  --out m.onnx       the model: input "x" [B, T, C], outputs "gain" [B, T, 6] and "vad" [B, T, 1]
  --input x.npy      a float32 input [batch, frames, features] drawn from the seed
  --reference DIR    torch's outputs on that input: DIR/gain.npy, DIR/vad.npy

Usage (Debian's interpreter, which has python3-torch and python3-numpy):
  /usr/bin/python3 tools/example_model_onnx.py --out m.onnx --input x.npy --reference ref
"""
import argparse
import os
import warnings

import numpy as np
import torch
from torch import nn


class Denoiser(nn.Module):
    def __init__(self, features, conv, hidden):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv1d(features, conv, 3), nn.Conv1d(conv, conv, 3)
        self.gru1, self.gru2, self.gru3 = (nn.GRU(conv, hidden, batch_first=True), nn.GRU(hidden, hidden, batch_first=True),
                                           nn.GRU(hidden, hidden, batch_first=True))
        self.gain, self.vad = nn.Linear(conv + 3 * hidden, 6), nn.Linear(conv + 3 * hidden, 1)

    def forward(self, x):  # [B, T, C]
        t = x.permute(0, 2, 1)
        t = torch.tanh(self.conv1(nn.functional.pad(t, (2, 0))))  # causal: (k - 1) frames on the left
        t = torch.tanh(self.conv2(nn.functional.pad(t, (2, 0))))
        t = t.permute(0, 2, 1)
        a, _ = self.gru1(t)
        b, _ = self.gru2(a)
        c, _ = self.gru3(b)
        cat = torch.cat([t, a, b, c], -1)
        return torch.sigmoid(self.gain(cat)), torch.sigmoid(self.vad(cat))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="the ONNX model to write")
    p.add_argument("--features", type=int, default=8)
    p.add_argument("--conv", type=int, default=16)
    p.add_argument("--hidden", type=int, default=12)
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--input", help="also write a random input .npy [batch, frames, features]")
    p.add_argument("--batch", type=int, default=3)
    p.add_argument("--frames", type=int, default=20)
    p.add_argument("--reference", help="directory for torch's outputs on --input")
    a = p.parse_args()
    torch.manual_seed(a.seed)
    model = Denoiser(a.features, a.conv, a.hidden).eval()
    dyn = {n: {0: "batch", 1: "time"} for n in ("x", "gain", "vad")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.zeros(1, 4, a.features),), a.out, opset_version=a.opset, input_names=["x"],
                          output_names=["gain", "vad"], dynamic_axes=dyn)
    if a.input:
        x = np.random.default_rng(a.seed).standard_normal((a.batch, a.frames, a.features)).astype(np.float32)
        np.save(a.input, x)
        if a.reference:
            os.makedirs(a.reference, exist_ok=True)
            with torch.no_grad():
                gain, vad = model(torch.from_numpy(x))
            np.save(os.path.join(a.reference, "gain.npy"), gain.numpy())
            np.save(os.path.join(a.reference, "vad.npy"), vad.numpy())


if __name__ == "__main__":
    main()
