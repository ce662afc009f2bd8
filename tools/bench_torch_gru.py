#!/usr/bin/python3
"""PyTorch's GRU on the shapes of `fixq bench gru`, one thread, same CSV columns.

Times torch.nn.GRU in float32 and its dynamic int8 quantization (quantize_dynamic: int8
weights, activations quantized per call, gates in float) under the 'onednn' and 'qnnpack'
quantized engines (Debian's torch has no fbgemm). Prints
    H,batch,impl,us_per_step,ratio_vs_onednn_int8
with impl in torch_f32, torch_dynamic_int8_onednn, torch_dynamic_int8_qnnpack. The ratio
is us_per_step(onednn_gru_u8s8) / us_per_step(impl) at the same H and batch, taken from
`--against`, the CSV that `fixq bench gru` printed; without it the column is empty.

Usage: /usr/bin/python3 tools/bench_torch_gru.py [--quick] [--hidden 256,512]
           [--batch 1,16,64] [--steps 100] [--against fixq_gru.csv]
"""
import argparse
import os
import platform
import statistics
import sys
import time


MAX_HIDDEN, MAX_BATCH, MAX_STEPS = 4096, 1024, 10000
ENGINES = ("onednn", "qnnpack")


class OneLineParser(argparse.ArgumentParser):
    """Bad options are one line on stderr and exit status 2, as the fixq CLI's."""

    def error(self, message):
        sys.stderr.write(f"bench_torch_gru.py: error: {message}\n")
        sys.exit(2)


def count(option, text, maximum):
    try:
        v = int(text, 10)
    except ValueError:
        v = None
    if v is None or not 1 <= v <= maximum or text.strip() != text:
        raise ValueError(f"{option}: '{text}' is not an integer in [1, {maximum}]")
    return v


def count_list(option, text, maximum):
    return [count(option, item, maximum) for item in text.split(",")]


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def read_against(path):
    """{(H, batch): us_per_step of onednn_gru_u8s8} from `fixq bench gru`'s CSV."""
    try:
        with open(path) as f:
            lines = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    except OSError as e:
        raise ValueError(f"--against: cannot read {path}: {e.strerror}")
    header = "H,batch,impl,us_per_step,ratio_vs_onednn_int8"
    if not lines or lines[0] != header:
        raise ValueError(f"--against: {path} is not the CSV of `fixq bench gru` (first row must be {header})")
    out = {}
    for n, line in enumerate(lines[1:], start=2):
        cells = line.split(",")
        if len(cells) != 5:
            raise ValueError(f"--against: {path}: row {n} has {len(cells)} columns, expected 5")
        if cells[2] == "onednn_gru_u8s8":
            try:
                out[(int(cells[0]), int(cells[1]))] = float(cells[3])
            except ValueError:
                raise ValueError(f"--against: {path}: row {n} has a non-numeric H, batch or us_per_step")
    if not out:
        raise ValueError(f"--against: {path} has no onednn_gru_u8s8 row")
    return out


def import_torch():
    """torch, loaded after the options are checked (it takes seconds), quietly: the
    qnnpack engine logs a warning per linear call (it ignores reduce_range), and c10 caps
    the log level at TORCH_CPP_LOG_LEVEL, glog at GLOG_minloglevel, both read at load."""
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
    os.environ.setdefault("GLOG_minloglevel", "2")
    import torch

    return torch


def time_calls(f, min_sample_s, slow_call_s):
    """Median seconds per call: one warm-up call sizes the samples (5, or 3 when a call is slow)."""
    t0 = time.perf_counter()
    f()
    once = max(time.perf_counter() - t0, 1e-9)
    reps = max(1, int(-(-min_sample_s // once)))
    samples = 3 if once > slow_call_s else 5
    per_call = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(reps):
            f()
        per_call.append((time.perf_counter() - t0) / reps)
    return statistics.median(per_call)


def float_gru(torch, hidden):
    """nn.GRU with torch's init, U(-1/sqrt(H), 1/sqrt(H)), as fixq bench gru; inside a
    Sequential because quantize_dynamic swaps children only. Returns (y, h_n)."""
    return torch.nn.Sequential(torch.nn.GRU(hidden, hidden)).eval()


def dynamic_int8(torch, model, engine):
    torch.backends.quantized.engine = engine
    q = torch.ao.quantization.quantize_dynamic(model, {torch.nn.GRU}, dtype=torch.qint8)
    if "quantized" not in type(q[0]).__module__:
        raise RuntimeError(f"quantize_dynamic left {type(q[0]).__name__} unquantized")
    return q


def main(argv):
    p = OneLineParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="H 64,128; batch 1,4; T 20; short samples")
    p.add_argument("--hidden", help="hidden (= input) sizes, comma-separated [256,512,1024]")
    p.add_argument("--batch", help="batch sizes, comma-separated [1,16,64]")
    p.add_argument("--steps", help="time steps per forward [100]")
    p.add_argument("--against", help="CSV of `fixq bench gru`, for ratio_vs_onednn_int8")
    a = p.parse_args(argv)
    try:
        hiddens = count_list("--hidden", a.hidden or ("64,128" if a.quick else "256,512,1024"), MAX_HIDDEN)
        batches = count_list("--batch", a.batch or ("1,4" if a.quick else "1,16,64"), MAX_BATCH)
        steps = count("--steps", a.steps or ("20" if a.quick else "100"), MAX_STEPS)
        against = read_against(a.against) if a.against else {}
    except ValueError as e:
        p.error(str(e))
    min_sample_s, slow_call_s = (0.005, 0.2) if a.quick else (0.05, 1.0)

    torch = import_torch()
    torch.set_num_threads(1)
    torch.manual_seed(5)
    print(f"# tools/bench_torch_gru.py: {cpu_model()}; torch {torch.__version__}, "
          f"{torch.get_num_threads()} thread, engines {torch.backends.quantized.supported_engines}; "
          f"T={steps}, 1 layer, H = C; median of 5 samples (3 when one call exceeds {slow_call_s} s)")
    usable = []
    for engine in ENGINES:
        if engine in torch.backends.quantized.supported_engines:
            usable.append(engine)
        else:
            print(f"# torch_dynamic_int8_{engine}: not run, this torch lacks the '{engine}' quantized engine")
    print("H,batch,impl,us_per_step,ratio_vs_onednn_int8", flush=True)

    for hidden in hiddens:
        model = float_gru(torch, hidden)
        quantized = {}
        for engine in list(usable):
            try:
                quantized[engine] = dynamic_int8(torch, model, engine)
            except Exception as e:  # one engine failing must not stop the others
                print(f"# torch_dynamic_int8_{engine}: cannot quantize at H={hidden}: {str(e).splitlines()[0]}")
        for batch in batches:
            if against and (hidden, batch) not in against:
                print(f"# --against has no onednn_gru_u8s8 row for H={hidden} batch={batch}: ratio left empty")
            x = torch.rand(steps, batch, hidden) * 2 - 1  # U(-1, 1), as fixq bench gru
            rows = []
            with torch.inference_mode():
                y32 = model(x)[0]
                rows.append(("torch_f32", time_calls(lambda: model(x), min_sample_s, slow_call_s)))
                checks = []
                for engine, q in quantized.items():
                    try:
                        torch.backends.quantized.engine = engine
                        yq = q(x)[0]
                        cos = torch.nn.functional.cosine_similarity(yq.flatten(), y32.flatten(), dim=0).item()
                        checks.append(f"{engine} {cos:.5f}")
                        rows.append((f"torch_dynamic_int8_{engine}",
                                     time_calls(lambda: q(x), min_sample_s, slow_call_s)))
                    except Exception as e:
                        print(f"# torch_dynamic_int8_{engine}: cannot run at H={hidden} batch={batch}: "
                              f"{str(e).splitlines()[0]}")
            if checks:
                print(f"# check H={hidden} batch={batch}: dynamic int8 vs torch_f32 cosine: {', '.join(checks)}")
            ref = against.get((hidden, batch))
            for impl, seconds in rows:
                us = seconds / steps * 1e6
                ratio = f"{ref / us:.3f}" if ref is not None else ""
                print(f"{hidden},{batch},{impl},{us:.2f},{ratio}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
