#!/usr/bin/env python3
"""torch.nn.GRU on an NVIDIA GPU (cuDNN, torch.backends.cudnn.benchmark = True) in fp32,
fp16 and bf16: the peers of `fixq bench gru --device cuda`, with the same model shape (one
layer, input size = hidden size) and the same CSV columns, H,batch,impl,us_per_step.

Each forward over T steps is timed with CUDA events after warm-up (cuDNN picks its algorithm
on the first calls); a sample runs enough forwards to last 20 ms, and the median of the
samples is divided by T. Needs a CUDA build of PyTorch (the GPU machine's image has 2.11):
    python3 bench/peers/torch_gru_cuda.py > gru_torch.csv
"""
import argparse

import torch

from cuda_events import median_us  # bench/peers/, beside this script


def integers(text):
    return [int(v) for v in text.split(",")]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hidden", default="256,512,1024", help="hidden (= input) sizes")
    p.add_argument("--batch", default="1,16,64", help="batch sizes")
    p.add_argument("--steps", type=int, default=100, help="time steps T per forward")
    p.add_argument("--samples", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="H 64,128; batch 1,4; T 20 (smoke tests)")
    a = p.parse_args()
    if a.quick:
        a.hidden, a.batch, a.steps = "64,128", "1,4", 20
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda")
    torch.manual_seed(0)
    print(f"# {torch.cuda.get_device_name(0)}; torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}; "
          f"CUDA events, median of {a.samples} samples")
    print("H,batch,impl,us_per_step")
    for H in integers(a.hidden):
        for dtype, name in ((torch.float32, "torch_gru_fp32"), (torch.float16, "torch_gru_fp16"),
                            (torch.bfloat16, "torch_gru_bf16")):
            gru = torch.nn.GRU(H, H, num_layers=1).to(dev, dtype).eval()
            for B in integers(a.batch):
                x = torch.randn(a.steps, B, H, device=dev, dtype=dtype)
                with torch.inference_mode():
                    us = median_us(lambda: gru(x), a.samples)
                print(f"{H},{B},{name},{us / a.steps:.3f}", flush=True)


if __name__ == "__main__":
    main()
