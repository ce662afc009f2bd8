#!/usr/bin/python3
"""Ablation of fixq's post-training steps: each step alone, then all together.

Steps (fixq/gru_ptq.h): GPTQ weight rounding ("gptq"), bias correction ("bias"), every
operator's range chosen by the output error ("search"). The baseline is round-to-nearest
with the mse method for every operator (the best single method of `fixq demo`'s table);
"minmax" is the plain calibration for reference. Every row is int8, pow2 and multiplier.

Models:
  * the embedded speech-enhancement model (--speech DIR, e.g. data/speech): calibrated on its
    calib.features, scored on its held-out mixtures by the segmental SNR improvement in dB
    (tools/speech_task.py, as `fixq demo`);
  * your own GRU (--model FILE --calib X.npy --heldout X.npy): a file GruModel.load reads
    (fixq's model file, a safetensors state_dict, ONNX), calibration and held-out sequences
    [T, B, C]; scored by the output's cosine and SQNR only, since the tool cannot know your
    task: run your own metric on the outputs of the rows that matter (--save-outputs DIR);
  * char-LMs (--data DIR, repeatable; default the embedded data/charlm): calibrated on the
    folder's calib_ids.npy cut into 8 sequences, as `fixq demo`; scored on its held-out text
    (heldout_ids.npy, at most --max-heldout characters) in bits per character, with the
    demo's protocol, and by the cosine of the GRU output against float;
  * random-weight GRUs (--random C,H,L, repeatable): torch's initialisation times 3 (so that
    gates saturate as in trained models), random input sequences with a mean; calibrated on
    8 sequences of 100 steps, scored on 8 others by the output's cosine and SQNR.

Prints one markdown table per model.
Rows: each step alone, then all together ("all (PTQ+)", the defaults), pow2 and multiplier.
With --ladder the rows are precisions instead, every one with the defaults: int8, then groups
of operators at 16 bits (the state path; the gates; the GEMM outputs; all of these), int16,
and what `--auto-bits` chooses for two target cosines. It says which operators a model needs
wider than 8 bits to reach a given score (docs/speech_model.md reads it for the speech model).
Usage: PYTHONPATH=build/python /usr/bin/python3 tools/ptq_ablation.py [--data DIR] [--speech DIR]
           [--random 32,64,1 ...] [--model gru.safetensors --calib c.npy --heldout h.npy] [--ladder]
"""
import argparse
import math
import os
import re
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402
import torch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
try:
    import fixq  # noqa: E402
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "build", "python"))
    import fixq  # noqa: E402

ROWS = [  # name, method, rounding, bias correction
    ("minmax", "minmax", "nearest", False),
    ("mse (baseline)", "mse", "nearest", False),
    ("+ gptq", "mse", "gptq", False),
    ("+ bias", "mse", "nearest", True),
    ("+ search", "auto", "nearest", False),
    ("all (PTQ+)", "auto", "gptq", True),
]

# --ladder: operators at 16 bits on top of int8 (docs/spec.md 3.2 names them); every row
# quantized with the defaults.
STATE = ("h", "old_contrib", "new_contrib")
GATES = ("z_pre", "r_pre", "g_pre", "z_out", "r_out", "g_out", "Rh_add_br", "rRh")
GEMM_OUT = ("Wx", "Rh")
LADDER = [  # name, operators at 16 bits (None: the int16 preset)
    ("int8", ()),
    ("+ state 16", STATE),
    ("+ gates 16", GATES),
    ("+ GEMM out 16", GEMM_OUT),
    ("+ state, gates 16", STATE + GATES),
    ("+ state, gates, GEMM out 16", STATE + GATES + GEMM_OUT),
    ("int16", None),
]
AUTO_BITS_TARGETS = (0.9995, 0.9999)


def charlm(data, max_heldout):
    emb = np.load(os.path.join(data, "embedding.npy"))
    dw = np.load(os.path.join(data, "decoder.weight.npy")).astype(np.float64)
    db = np.load(os.path.join(data, "decoder.bias.npy")).astype(np.float64)
    layers = 0
    while os.path.exists(os.path.join(data, f"gru.weight_ih_l{layers}.npy")):
        layers += 1
    gru = torch.nn.GRU(emb.shape[1], dw.shape[1], num_layers=layers)
    gru.load_state_dict({k: torch.from_numpy(np.load(os.path.join(data, f"gru.{k}.npy"))) for k in gru.state_dict()})
    model = fixq.GruModel.from_torch(gru)
    calib = np.load(os.path.join(data, "calib_ids.npy"))
    held = np.load(os.path.join(data, "heldout_ids.npy"))[:max_heldout]
    T = len(calib) // 8
    xc = np.ascontiguousarray(emb[calib[:8 * T]].reshape(8, T, -1).transpose(1, 0, 2)).astype(np.float32)
    xh = emb[held][:, None, :].astype(np.float32)

    def bpc(y):
        logits = y[:-1, 0, :].astype(np.float64) @ dw.T + db
        m = logits.max(1, keepdims=True)
        lse = m[:, 0] + np.log(np.exp(logits - m).sum(1))
        return float((lse - logits[np.arange(len(logits)), held[1:]]).mean() / math.log(2))

    title = f"char-LM {os.path.basename(os.path.normpath(data))}: {layers} layer(s), H = {model.hidden_size}, " \
            f"{len(held)} held-out characters"
    return title, model, xc, xh, Metric("bpc", bpc, "%")


def random_gru(spec):
    C, H, L = (int(v) for v in spec.split(","))
    torch.manual_seed(C * 1000 + H * 10 + L)
    gru = torch.nn.GRU(C, H, num_layers=L)
    with torch.no_grad():
        for p in gru.parameters():
            p.mul_(3.0)
    g = torch.Generator().manual_seed(7)
    mean = torch.randn(C, generator=g) * 0.3
    xc = (torch.randn(100, 8, C, generator=g) + mean).numpy()
    xh = (torch.randn(100, 8, C, generator=g) + mean).numpy()
    return f"random GRU C = {C}, H = {H}, {L} layer(s) (torch init x 3)", fixq.GruModel.from_torch(gru), xc, xh, None


def speech(data):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import speech_task
    m = speech_task.SpeechModel(data)
    gru = torch.nn.GRU(m.bands, m.hidden, num_layers=m.layers)
    gru.load_state_dict({k: torch.from_numpy(v) for k, v in m.gru_tensors.items()})
    title = f"speech enhancement {os.path.basename(os.path.normpath(data))}: {m.layers} layer(s), H = {m.hidden}, " \
            f"{m.features.shape[1]} held-out mixtures"
    return title, fixq.GruModel.from_torch(gru), m.calib, m.features, Metric("SNR+ dB", lambda y: m.scores(y)[0], "dB")


def own_model(path, calib, heldout):
    model = fixq.GruModel.load(path)
    xc, xh = (np.ascontiguousarray(np.load(p), dtype=np.float32) for p in (calib, heldout))
    return f"{path}: {model.num_layers} layer(s), H = {model.hidden_size}", model, xc, xh, None


class Metric:
    """A task metric of the GRU output: its name, function, and how to show a difference."""

    def __init__(self, name, fn, unit):
        self.name, self.fn, self.unit = name, fn, unit

    def __call__(self, y):
        return self.fn(y)

    def diff(self, v, f):
        return f"{100 * (v / f - 1):+.2f}%" if self.unit == "%" else f"{v - f:+.4f}"


def table(title, model, xc, xh, metric, save=None, ladder=False):
    yf, _ = model.forward(xh)
    print(f"\n{title}\n")
    first = "precision" if ladder else "steps"
    head = f"| {first} | scales | " + (f"{metric.name} | vs float | " if metric else "") + \
        "cosine | SQNR dB | calib cosine | seconds |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    if metric:
        print(f"| float | - | {metric(yf):.4f} | {metric.diff(metric(yf), metric(yf))} | 1.000000 | - | - | - |")

    def row(name, scales, result, seconds):
        y, _ = result.quantized().forward(xh)
        a, b = yf.astype(np.float64).ravel(), y.astype(np.float64).ravel()
        cos = float(a @ b / math.sqrt((a @ a) * (b @ b)))
        sqnr = 10 * math.log10((a @ a) / max(((a - b) ** 2).sum(), 1e-300))
        cells = f"| {name} | {scales} | "
        if metric:
            v = metric(y)
            cells += f"{v:.4f} | {metric.diff(v, metric(yf))} | "
        if save:
            os.makedirs(save, exist_ok=True)
            # "+ state, gates 16" -> state_gates_16; auto-bits rows without their operator list
            stem = re.sub(r"[^A-Za-z0-9.]+", "_", name.split(" (")[0]).strip("_") if ladder else \
                name.split()[0].strip("+")
            np.save(os.path.join(save, f"{stem}-{scales}.npy"), y)
        print(cells + f"{cos:.6f} | {sqnr:.1f} | {result.calib_cosine:.6f} | {seconds:.1f} |", flush=True)

    for scales in ("pow2", "multiplier"):
        if ladder:
            ptq = fixq.GruPtq(model)
            ptq.observe(xc)
            for name, wide in LADDER:
                config = fixq.GruQuantConfig("int16", scales) if wide is None else \
                    fixq.GruQuantConfig("int8", scales, {op: 16 for op in wide})
                t = time.time()
                r = ptq.quantize(config)
                row(name, scales, r, time.time() - t)
            for target in AUTO_BITS_TARGETS:
                t = time.time()
                a = ptq.auto_bits("int8", scales, target_cosine=target)
                wide = ", ".join(a.promoted) or "none"
                row(f"auto-bits {target} ({wide})", scales, a.result, time.time() - t)
            continue
        for name, method, rounding, bias in ROWS:
            t = time.time()
            ptq = fixq.GruPtq(model, method=method, rounding=rounding, bias_correction=bias)
            ptq.observe(xc)
            r = ptq.quantize("int8", scales)
            row(name, scales, r, time.time() - t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", action="append", default=None, help="char-LM folder (default data/charlm)")
    ap.add_argument("--random", action="append", default=None, metavar="C,H,L", help="a random-weight GRU")
    ap.add_argument("--speech", action="append", default=None, metavar="DIR", help="speech model folder (data/speech)")
    ap.add_argument("--model", help="your own GRU: a model file GruModel.load reads (safetensors, fixq, ONNX)")
    ap.add_argument("--calib", help="with --model: calibration sequences .npy [T, B, C]")
    ap.add_argument("--heldout", help="with --model: held-out sequences .npy [T, B, C]")
    ap.add_argument("--save-outputs", metavar="DIR", help="with --model: each row's held-out output as DIR/<row>-<scales>.npy")
    ap.add_argument("--max-heldout", type=int, default=30000)
    ap.add_argument("--ladder", action="store_true", help="rows of precisions (operators at 16 bits), not of steps")
    args = ap.parse_args()
    if args.model and not (args.calib and args.heldout):
        ap.error("--model needs --calib and --heldout")
    torch.set_num_threads(1)
    others = args.random or args.speech or args.model
    datas = args.data if args.data is not None else ([] if others else [os.path.join(ROOT, "data", "charlm")])
    for d in datas:
        table(*charlm(d, args.max_heldout), ladder=args.ladder)
    for d in args.speech or []:
        table(*speech(d), ladder=args.ladder)
    if args.model:
        table(*own_model(args.model, args.calib, args.heldout), save=args.save_outputs, ladder=args.ladder)
    for spec in args.random or []:
        table(*random_gru(spec), ladder=args.ladder)


if __name__ == "__main__":
    main()
