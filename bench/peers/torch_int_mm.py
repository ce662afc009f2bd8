#!/usr/bin/env python3
"""torch._int_mm (cuBLASLt int8 x int8 -> int32) followed by the epilogue written as torch
element-wise operations, which is what a user without vLLM writes: the peer of
`fixq bench gemm --device cuda`, same shapes (N = K = 4096; M = 1, 16, 64, 1024, 4096) and
epilogues, CSV M,N,K,impl,epilogue,us,tops (2 M N K per call).

  s32                 C = _int_mm(A, B^T)
  scaled_bias         C.float() * s_b * s_a[:, None] + bias
  azp_per_token_bias  (C - azp[:, None] * colsum[None, :]).float() * s_b * s_a[:, None] + bias
  requant_s8          clamp(round(C.float() * s), -128, 127).to(int8)   (a float requantization)

_int_mm needs M > 16 on CUDA: smaller M is padded to 32 rows, as a user would, and the row
says so. The last line is cuBLASLt's int8 rate at 8192^3, a measured peak to read the others
against. CUDA events after warm-up, medians. Needs a CUDA build of PyTorch:
    python3 bench/peers/torch_int_mm.py > gemm_torch.csv
"""
import argparse

import torch

from cuda_events import median_us  # bench/peers/, beside this script


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samples", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="M 1 and 64 only")
    a = p.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    N = K = 4096
    print(f"# {torch.cuda.get_device_name(0)}; torch {torch.__version__}; CUDA events, median of {a.samples} samples")
    print("M,N,K,impl,epilogue,us,tops")
    b = torch.randint(-128, 128, (N, K), dtype=torch.int8, device=dev)
    bt = b.t()  # [K, N], column-major: cuBLASLt's TN layout
    colsum = b.sum(dim=1, dtype=torch.int32)
    s_b = torch.full((N,), 2.0 ** -10, device=dev)
    bias = torch.full((N,), 0.25, device=dev)
    for M in ([1, 64] if a.quick else [1, 16, 64, 1024, 4096]):
        rows = max(M, 32) if M <= 16 else M
        x = torch.randint(-128, 128, (rows, K), dtype=torch.int8, device=dev)
        s_a = torch.full((rows, 1), 2.0 ** -7, device=dev)
        azp = torch.full((rows, 1), 3, dtype=torch.int32, device=dev)
        epilogues = {
            "s32": lambda: torch._int_mm(x, bt),
            "scaled_bias": lambda: torch._int_mm(x, bt).float() * s_b * s_a + bias,
            "azp_per_token_bias": lambda: (torch._int_mm(x, bt) - azp * colsum).float() * s_b * s_a + bias,
            "requant_s8": lambda: torch.clamp(torch.round(torch._int_mm(x, bt).float() * 2.0 ** -14), -128, 127).to(torch.int8),
        }
        impl = "torch_int_mm" if rows == M else f"torch_int_mm_padded_to_{rows}_rows"
        for name, f in epilogues.items():
            us = median_us(f, a.samples)
            print(f"{M},{N},{K},{impl},{name},{us:.2f},{2.0 * M * N * K / (us * 1e-6) / 1e12:.2f}", flush=True)
    big = torch.randint(-128, 128, (8192, 8192), dtype=torch.int8, device=dev)
    us = median_us(lambda: torch._int_mm(big, big.t()), a.samples)
    print(f"# cuBLASLt int8 at 8192^3: {2.0 * 8192 ** 3 / (us * 1e-6) / 1e12:.1f} TOPS")


if __name__ == "__main__":
    main()
