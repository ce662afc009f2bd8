#!/usr/bin/python3
"""Quantization-aware fine-tune of the embedded char-LM's GRU with fixq.torch.FakeQuantGRU.

Starts from the integer model that `fixq gru quantize` / QuantGRU.from_float build with the
same config (calibrated on the embedded calibration text), fine-tunes the GRU's weights
and biases through the exact integer forward pass (straight-through gradients) on the
model's own training text, and scores bits per character on the held-out text with the
demo's protocol (src/cli/charlm.cpp: the whole held-out text as one sequence from h0 = 0,
decoder in float64), before and after, through the integer model that `fixq gru run`
executes (FakeQuantGRU.to_quantized()).

Training: truncated BPTT over --batch contiguous streams of the training split (the first
90% of the corpus, as tools/train_charlm.py), --seq-len steps per chunk, the state carried
between chunks; Adam on the GRU only (the embedding and the decoder stay as trained), one
thread. --control also fine-tunes the float GRU with the same data, steps and optimizer,
so that the gain of QAT can be told apart from the effect of training longer.

Prints one JSON object; --out DIR also writes the fine-tuned integer model (gru.fixq).

Usage: PYTHONPATH=build/python /usr/bin/python3 tools/qat_charlm.py --scales pow2 [--steps 300]
"""
import argparse
import json
import math
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402
import torch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
try:
    import fixq  # noqa: E402
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "build", "python"))
    import fixq  # noqa: E402,F401
from fixq.torch import FakeQuantGRU, QuantGRU  # noqa: E402


def load_charlm(data):
    emb = np.load(os.path.join(data, "embedding.npy"))
    dw = np.load(os.path.join(data, "decoder.weight.npy"))
    db = np.load(os.path.join(data, "decoder.bias.npy"))
    layers = 0
    while os.path.exists(os.path.join(data, f"gru.weight_ih_l{layers}.npy")):
        layers += 1
    gru = torch.nn.GRU(emb.shape[1], dw.shape[1], num_layers=layers)
    gru.load_state_dict({k: torch.from_numpy(np.load(os.path.join(data, f"gru.{k}.npy"))) for k in gru.state_dict()})
    return torch.from_numpy(emb), torch.from_numpy(dw), torch.from_numpy(db), gru.eval()


def train_ids(data, license_dir):
    vocab = json.load(open(os.path.join(data, "vocab.json"), encoding="utf-8"))
    text = ""
    for name in vocab["corpus_files"]:
        text += open(os.path.join(license_dir or vocab["corpus_dir"], name), encoding="utf-8").read()
    index = {c: i for i, c in enumerate(vocab["chars"])}
    ids = [index.get(c, vocab["unk_id"]) for c in text[:vocab["split"]["train"][1]]]
    return torch.tensor(ids, dtype=torch.long)


def bpc(y, ids, dw, db):
    """CharLm::bits_per_char: predict ids[t+1] from y_t [T, H], decoder in float64."""
    logits = y.double() @ dw.double().t() + db.double()
    nll = torch.nn.functional.cross_entropy(logits[:-1], ids[1:].long(), reduction="sum")
    return float(nll) / (len(ids) - 1) / math.log(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(ROOT, "data", "charlm"))
    ap.add_argument("--config", default="int8", help="int8, int16 or a JSON config file")
    ap.add_argument("--scales", default="pow2", choices=("pow2", "multiplier"))
    ap.add_argument("--method", default=None, help="calibration method (default: from_float's)")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq-len", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--control", action="store_true", help="also fine-tune the float GRU the same way")
    ap.add_argument("--license-dir", default=None, help="folder of the corpus (default: vocab.json's)")
    ap.add_argument("--out", default=None, help="folder for the fine-tuned gru.fixq")
    args = ap.parse_args()

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    emb, dw, db, gru = load_charlm(args.data)
    calib = np.load(os.path.join(args.data, "calib_ids.npy")).astype(np.int64)
    held = torch.from_numpy(np.load(os.path.join(args.data, "heldout_ids.npy")).astype(np.int64))
    ids = train_ids(args.data, args.license_dir)
    # Calibration as the demo does it: the calibration text cut into 8 parallel sequences.
    T = len(calib) // 8
    xc = emb[torch.from_numpy(calib[:8 * T]).view(8, T).t()]
    x_held = emb[held][:, None, :]
    kw = {} if args.method is None else {"method": args.method}

    def score(module):
        with torch.no_grad():
            y, _ = module(x_held)
        return bpc(y[:, 0, :], held, dw, db)

    result = {"data": args.data, "config": args.config, "scales": args.scales, "steps": args.steps, "lr": args.lr,
              "batch": args.batch, "seq_len": args.seq_len, "float_bpc": score(gru)}
    t0 = time.time()
    fq = FakeQuantGRU.from_float(gru, [xc], config=args.config, scales=args.scales, **kw)
    result["calibrate_seconds"] = round(time.time() - t0, 2)
    start = QuantGRU.from_float(gru, [xc], config=args.config, scales=args.scales, **kw)
    result["ptq_bpc"] = score(start)
    result["start_equals_from_float"] = bool(score(fq.to_quantized()) == result["ptq_bpc"])

    def fine_tune(module):
        opt = torch.optim.Adam(module.parameters(), lr=args.lr)
        B, L = args.batch, args.seq_len
        gen = torch.Generator().manual_seed(args.seed)
        off = int(torch.randint(0, L, (1,), generator=gen))
        usable = (len(ids) - 1 - off) // B
        xs = ids[off:off + usable * B].view(B, usable).t()
        ys = ids[off + 1:off + 1 + usable * B].view(B, usable).t()
        pos, h = 0, None
        module.train()
        for _ in range(args.steps):
            if pos + L > usable:
                pos, h = 0, None
            x, y = emb[xs[pos:pos + L]], ys[pos:pos + L]
            pos += L
            out, h = module(x, h)
            h = h.detach()
            loss = torch.nn.functional.cross_entropy((out @ dw.t() + db).reshape(-1, dw.shape[0]), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)
            opt.step()
        module.eval()

    t0 = time.time()
    fine_tune(fq)
    result["qat_seconds"] = round(time.time() - t0, 1)
    tuned = fq.to_quantized()
    result["qat_bpc"] = score(tuned)
    if args.control:
        control = torch.nn.GRU(gru.input_size, gru.hidden_size, num_layers=gru.num_layers)
        control.load_state_dict(gru.state_dict())
        t0 = time.time()
        fine_tune(control)
        result["control_seconds"] = round(time.time() - t0, 1)
        result["control_float_bpc"] = score(control)
    for k in ("ptq_bpc", "qat_bpc"):
        result[k.replace("bpc", "vs_float_percent")] = round(100 * (result[k] / result["float_bpc"] - 1), 3)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        tuned.save(os.path.join(args.out, "gru.fixq"))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
