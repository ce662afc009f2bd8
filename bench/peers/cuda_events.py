"""Timing of a GPU operation with CUDA events for the torch peers (torch_gru_cuda.py,
torch_int_mm.py), as fixq's own benches time theirs (bench/cuda/event_timer.h): three
warm-up calls, then samples of n calls, n doubled until a sample lasts 20 ms; the median
sample's microseconds per call."""
import statistics

import torch


def median_us(f, samples):
    for _ in range(3):
        f()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def timed(n):
        start.record()
        for _ in range(n):
            f()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop)  # ms

    n = 1
    while timed(n) < 20.0 and n < (1 << 20):
        n *= 2
    return statistics.median(1000.0 * timed(n) / n for _ in range(samples))
