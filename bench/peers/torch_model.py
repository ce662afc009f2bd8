#!/usr/bin/env python3
"""The torch peer of `fixq bench model`: the ONNX file's graph as a torch module, built from
its weights (Gemm / MatMul(+Add) with a constant weight as nn.Linear, GRU as nn.GRU, or for
ONNX's reset-before cell (linear_before_reset=0) a loop over nn.Linear gates, Conv as
F.conv1d, and the element-wise, Concat, Split, Slice, Softmax and layout operators fixq
imports as torch functions), run eager under torch.no_grad on one thread: torch_float, and
torch_dynamic_int8 = torch.quantization.quantize_dynamic of its nn.Linear and nn.GRU.
Values that depend only on the inputs' shapes (Shape/Gather/ConstantOfShape chains) are
computed once per input shape, as the torch module that was exported computes none.
Before timing, torch_float's outputs on fixq's check input (--check DIR: in.K.npy,
out.K.npy from fixq float) must agree within --tolerance, else no rows.
Rows: batch,frames_per_call,impl,us_per_frame. frames_per_call 1 is a T = 1 call: the GRU
state is carried only when the graph has state inputs and outputs, otherwise each call
starts from zero state (a '#' line says which).
Run by fixq bench model:
  /usr/bin/python3 bench/peers/torch_model.py --model M.onnx --inputs x=BTC:8 --check DIR --batch 1 --frames 1,100
"""
import argparse
import os
import sys
import time

import numpy as np


def parse_inputs(text):
    out = []
    for item in text.split(","):
        name, spec = item.rsplit("=", 1)
        parts = spec.split(":")
        out.append((name, parts[0], int(parts[1]), int(parts[2]) if len(parts) > 2 else 0))
    return out


def shape_of(axes, features, rows, b, t):
    if axes == "SBH":
        return (rows, b, features)
    return tuple(b if a == "B" else t if a == "T" else features for a in axes)


def median_us(f, samples, min_seconds):
    f()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        if time.perf_counter() - t0 >= min_seconds or n >= 1 << 20:
            break
        n *= 2
    per = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        per.append((time.perf_counter() - t0) / n)
    return 1e6 * sorted(per)[len(per) // 2]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True)
    p.add_argument("--inputs", required=True, help="name=AXES:features[:rows],... as fixq bench model gives")
    p.add_argument("--check", required=True)
    p.add_argument("--tolerance", type=float, default=1e-4)
    p.add_argument("--batch", default="1")
    p.add_argument("--frames", default="1,100")
    p.add_argument("--samples", type=int, default=5)
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    try:
        import onnx
        import torch
        from onnx import numpy_helper
    except ImportError as e:
        print(f"# torch_float, torch_dynamic_int8: absent ({e})")
        return 0
    torch.set_num_threads(1)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from onnx_torch import OnnxModule

    proto = onnx.load(a.model)
    module = OnnxModule(proto).eval()
    inputs = parse_inputs(a.inputs)
    # The check: fixq float's outputs on its input.
    feeds = []
    for k, (name, axes, c, rows) in enumerate(inputs):
        path = os.path.join(a.check, f"in.{k}.npy")
        feeds.append(torch.from_numpy(np.load(path)) if os.path.exists(path) else torch.zeros(rows, 1, c))
    with torch.no_grad():
        outs = module(*feeds)
    worst = 0.0
    for k, o in enumerate(outs):
        ref = np.load(os.path.join(a.check, f"out.{k}.npy"))
        got = o.numpy()
        if got.shape != ref.shape:
            print(f"# torch_float: output {k} has shape {got.shape}, fixq float {ref.shape}; not timed")
            return 1
        worst = max(worst, float(np.max(np.abs(got - ref))))
    if not worst <= a.tolerance:
        print(f"# torch_float: differs from fixq float by {worst:.3g} > {a.tolerance:g}; not timed")
        return 1
    qmodule = torch.quantization.quantize_dynamic(module, {torch.nn.Linear, torch.nn.GRU}, dtype=torch.qint8)
    with torch.no_grad():
        qouts = qmodule(*feeds)
    qworst = max(float(np.max(np.abs(q.numpy() - o.numpy()))) for q, o in zip(qouts, outs))
    carry = module.state_pairs()
    print(f"# torch_float: torch {torch.__version__}, eager, torch.no_grad, 1 thread; equals fixq float within "
          f"{worst:.2g} (<= {a.tolerance:g}) on batch 1 x {feeds[0].shape} ; torch_dynamic_int8: quantize_dynamic "
          f"(nn.Linear, nn.GRU; engine {torch.backends.quantized.engine}), max |int8 - float| {qworst:.3g}; "
          + ("one frame per call carries the graph's state inputs/outputs" if carry else
             "one frame per call: a T = 1 call from zero state (the graph has no state inputs/outputs to carry)"),
          flush=True)
    rng = np.random.default_rng(7)
    min_s = 0.01 if a.quick else 0.1
    for b in [int(x) for x in a.batch.split(",")]:
        for t in [int(x) for x in a.frames.split(",")]:
            xs = [torch.zeros(rows, b, c) if axes == "SBH" else torch.from_numpy(
                rng.standard_normal(shape_of(axes, c, rows, b, t)).astype(np.float32)) for (_, axes, c, rows) in inputs]
            for impl, m in (("torch_float", module), ("torch_dynamic_int8", qmodule)):
                state = [None]

                def call(m=m, state=state):
                    feeds = list(xs)
                    if carry and state[0] is not None:
                        for i, o in carry:
                            feeds[i] = state[0][o]
                    y = m(*feeds)
                    if carry:
                        state[0] = y

                with torch.no_grad():
                    us = median_us(call, a.samples, min_s)
                print(f"{b},{t},{impl},{us / t:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
