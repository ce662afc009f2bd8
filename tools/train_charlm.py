#!/usr/bin/python3
"""Train a tiny character-level GRU language model and export its weights.

Why this exists
---------------
fixq's demo quantizes *real* trained tensors rather than random ones, because
random Gaussian weights have none of the structure (outliers, per-row scale
spread, correlated activations) that makes quantization interesting.  This
script produces such a tensor set reproducibly, on any Debian machine, with no
downloads: the training corpus is the license texts shipped by Debian's
``base-files`` package in /usr/share/common-licenses/, and the only
dependencies are Debian's python3-numpy and python3-torch.

Model:   nn.Embedding(V, 64) -> nn.GRU(64, 128, 1 layer) -> nn.Linear(128, V)
         (--hidden / --layers train a larger proxy of the same family)
Data:    fixed, sorted list of license files, concatenated, decoded as UTF-8;
         first 90% of characters (by position) = train, last 10% = held out.
         The vocabulary is built from the train split only (sorted by code
         point); any other character maps to one unknown id (= last id).
Train:   truncated BPTT over 16 contiguous streams, seq len 100, Adam
         (lr 3e-3, cosine decay to 3e-4), grad-norm clipping 1.0, fixed seeds,
         deterministic algorithms, one CPU thread, fixed step budget (default
         750 steps, ~3 min) so the result is reproducible.  Batch is 16, not
         32: Debian's torch uses the netlib reference BLAS, so throughput is
         ~7k chars/s whatever the batch, and within a ~3 minute budget more,
         smaller updates train better than fewer, larger ones.
Outputs (little-endian float32 .npy, plus JSON) go to --out; see
data/README.md.

Usage:   /usr/bin/python3 tools/train_charlm.py --out data/charlm
"""

import argparse
import json
import math
import os
import sys
import time

# One BLAS thread, set before numpy / torch load OpenBLAS: torch.set_num_threads(1) does not
# reach OpenBLAS's own pool, and on a shared 2-core machine its threads make every step
# several times slower.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import torch
import torch.nn as nn

LICENSE_DIR = "/usr/share/common-licenses"
# Explicit, sorted list -> deterministic corpus. All are in Debian base-files.
CORPUS_FILES = sorted([
    "Apache-2.0",
    "Artistic",
    "GFDL-1.3",
    "GPL-2",
    "GPL-3",
    "LGPL-2.1",
    "LGPL-3",
    "MPL-2.0",
])
HELDOUT_FRACTION = 0.10
EMB_DIM = 64
HIDDEN = 128
N_ACT_SAMPLES = 2000


class CharGRU(nn.Module):
    def __init__(self, vocab, hidden=HIDDEN, layers=1):
        super().__init__()
        self.embedding = nn.Embedding(vocab, EMB_DIM)
        self.gru = nn.GRU(input_size=EMB_DIM, hidden_size=hidden,
                          num_layers=layers, batch_first=False)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, ids, h=None):
        # ids: [T, B] int64 -> logits [T, B, V], h [1, B, H]
        x = self.embedding(ids)
        out, h = self.gru(x, h)
        return self.decoder(out), h


def load_corpus(license_dir, files=CORPUS_FILES):
    missing = [f for f in files
               if not os.path.isfile(os.path.join(license_dir, f))]
    if missing and files is not CORPUS_FILES:
        sys.exit("error: --text files missing: %s" % ", ".join(missing))
    if missing:
        sys.exit(
            "error: corpus files missing from %s: %s\n"
            "These come from Debian's base-files package "
            "(try: apt-get install --reinstall base-files), or pass "
            "--license-dir pointing at a copy of them."
            % (license_dir, ", ".join(missing)))
    parts = []
    for f in files:
        with open(os.path.join(license_dir, f), "rb") as fh:
            try:
                parts.append(fh.read().decode("utf-8"))
            except UnicodeDecodeError as e:
                sys.exit("error: %s is not valid UTF-8: %s" % (f, e))
    return "".join(parts)


def encode(text, stoi, unk):
    return torch.tensor([stoi.get(c, unk) for c in text], dtype=torch.long)


@torch.no_grad()
def evaluate_bpc(model, ids, unk=None, chunk=1000):
    """Mean cross-entropy (bits/char) over all of `ids`, predicting ids[1:]
    from ids[:-1], hidden state carried across chunks, starting from zeros.
    Returns (bpc over all targets, bpc over targets that are not `unk`)."""
    model.eval()
    h = None
    total_nats = 0.0
    n = 0
    known_nats = 0.0
    n_known = 0
    for s in range(0, len(ids) - 1, chunk):
        inp = ids[s:s + chunk]
        tgt = ids[s + 1:s + 1 + chunk]
        inp = inp[:len(tgt)]
        logits, h = model(inp.unsqueeze(1), h)
        nll = nn.functional.cross_entropy(
            logits.squeeze(1), tgt, reduction="none")
        total_nats += nll.sum().item()
        n += len(tgt)
        if unk is not None:
            known = tgt != unk
            known_nats += nll[known].sum().item()
            n_known += int(known.sum())
    model.train()
    bpc = total_nats / n / math.log(2)
    bpc_known = known_nats / max(n_known, 1) / math.log(2) if unk is not None else bpc
    return bpc, bpc_known


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="data/charlm", help="output directory")
    ap.add_argument("--steps", type=int, default=750,
                    help="number of optimizer steps (default 750, "
                         "~3 min on one core)")
    ap.add_argument("--seconds", type=float, default=None,
                    help="optional wall-clock cap on training; stops early "
                         "if reached (makes the result timing-dependent)")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--seq-len", type=int, default=100)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--log-every", type=int, default=100)
    ap.add_argument("--license-dir", default=LICENSE_DIR)
    ap.add_argument("--text", nargs="+", default=None, metavar="FILE",
                    help="train on these UTF-8 files instead (concatenated in the "
                         "order given, the last 10%% held out), e.g. a larger proxy "
                         "on /usr/share/doc/git/RelNotes/*.txt")
    ap.add_argument("--hidden", type=int, default=HIDDEN,
                    help="GRU hidden size (default %d, the embedded model)" % HIDDEN)
    ap.add_argument("--layers", type=int, default=1,
                    help="GRU layers (default 1, the embedded model)")
    args = ap.parse_args()

    t_start = time.time()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.use_deterministic_algorithms(True)

    if args.text:
        corpus_dir, corpus_files = "/", [os.path.abspath(f) for f in args.text]
    else:
        corpus_dir, corpus_files = args.license_dir, CORPUS_FILES
    text = load_corpus(corpus_dir, corpus_files)
    n_train = len(text) - int(round(len(text) * HELDOUT_FRACTION))
    train_text, held_text = text[:n_train], text[n_train:]
    chars = sorted(set(train_text))
    stoi = {c: i for i, c in enumerate(chars)}
    unk = len(chars)
    vocab = len(chars) + 1
    train_ids = encode(train_text, stoi, unk)
    held_ids = encode(held_text, stoi, unk)
    n_unk_held = int((held_ids == unk).sum())
    print("corpus: %d chars (%d train, %d held out), vocab %d incl. unk, "
          "%d held-out chars map to unk"
          % (len(text), len(train_ids), len(held_ids), vocab, n_unk_held),
          flush=True)

    if args.hidden < 1 or args.layers < 1:
        sys.exit("error: --hidden and --layers must be >= 1")
    model = CharGRU(vocab, args.hidden, args.layers)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    # Cosine decay to 10% of lr over the step budget.
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(s, args.steps) / args.steps)))

    # Truncated BPTT: B contiguous streams over the train text; hidden state
    # carried (detached) between consecutive chunks. At each pass over the
    # data the streams restart at a new random offset for variety.
    B, T = args.batch, args.seq_len
    gen = torch.Generator().manual_seed(args.seed)

    def new_pass():
        off = int(torch.randint(0, T, (1,), generator=gen))
        usable = (len(train_ids) - 1 - off) // B
        x = train_ids[off:off + usable * B].view(B, usable).t().contiguous()
        y = train_ids[off + 1:off + 1 + usable * B].view(B, usable).t().contiguous()
        return x, y, usable

    x_all, y_all, L = new_pass()
    pos, h = 0, None
    t0 = time.time()
    step, run_loss, run_n = 0, 0.0, 0
    while step < args.steps:
        if args.seconds is not None and time.time() - t0 >= args.seconds:
            print("time cap of %.0f s reached at step %d" % (args.seconds, step))
            break
        if pos + T > L:
            x_all, y_all, L = new_pass()
            pos, h = 0, None
        x, y = x_all[pos:pos + T], y_all[pos:pos + T]
        pos += T
        if h is not None:
            h = h.detach()
        logits, h = model(x, h)
        loss = nn.functional.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        opt.step()
        sched.step()
        step += 1
        run_loss += loss.item()
        run_n += 1
        if step % args.log_every == 0 or step == args.steps:
            print("step %5d  train loss %.3f nats (%.3f bpc)  lr %.2e  %.0f s"
                  % (step, run_loss / run_n, run_loss / run_n / math.log(2),
                     sched.get_last_lr()[0], time.time() - t0), flush=True)
            run_loss, run_n = 0.0, 0
    train_seconds = time.time() - t0

    held_bpc, held_bpc_known = evaluate_bpc(model, held_ids, unk)
    train_bpc, _ = evaluate_bpc(model, train_ids)
    print("held-out bpc %.4f  (%.4f excluding the %d unk targets; "
          "train bpc %.4f)  %d steps in %.1f s"
          % (held_bpc, held_bpc_known, n_unk_held, train_bpc, step,
             train_seconds), flush=True)

    # Activation sample: GRU inputs and hidden states over the first
    # N held-out chars, zero initial hidden state (as in evaluate_bpc).
    model.eval()
    with torch.no_grad():
        sample = held_ids[:N_ACT_SAMPLES].unsqueeze(1)
        emb = model.embedding(sample)              # [N,1,64]
        hs, _ = model.gru(emb)                     # [N,1,128]
    inputs = emb.squeeze(1).numpy()
    hidden = hs.squeeze(1).numpy()

    os.makedirs(args.out, exist_ok=True)
    sd = model.state_dict()
    tensors = {"embedding": sd["embedding.weight"]}
    for k in range(args.layers):
        for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            tensors["gru.%s_l%d" % (w, k)] = sd["gru.%s_l%d" % (w, k)]
    tensors["decoder.weight"] = sd["decoder.weight"]
    tensors["decoder.bias"] = sd["decoder.bias"]
    arrays = {k: v.detach().numpy() for k, v in tensors.items()}
    arrays["gru.inputs"] = inputs
    arrays["gru.hidden_states"] = hidden
    for name, a in arrays.items():
        a = np.ascontiguousarray(a, dtype="<f4")
        if not np.all(np.isfinite(a)):
            sys.exit("error: non-finite values in %s" % name)
        np.save(os.path.join(args.out, name + ".npy"), a)

    with open(os.path.join(args.out, "vocab.json"), "w") as fh:
        json.dump({
            "chars": chars,
            "unk_id": unk,
            "vocab_size": vocab,
            "corpus_dir": corpus_dir,
            "corpus_files": corpus_files,
            "corpus_chars": len(text),
            "split": {
                "heldout_fraction": HELDOUT_FRACTION,
                "train": [0, n_train],
                "heldout": [n_train, len(text)],
                "note": "character offsets into the concatenated corpus; "
                        "held-out = last 10% by position",
            },
        }, fh, indent=1, ensure_ascii=True)
        fh.write("\n")
    with open(os.path.join(args.out, "metrics.json"), "w") as fh:
        json.dump({
            "heldout_bpc": round(held_bpc, 4),
            "heldout_bpc_excluding_unk_targets": round(held_bpc_known, 4),
            "train_bpc": round(train_bpc, 4),
            "heldout_chars": len(held_ids),
            "heldout_unk_chars": n_unk_held,
            "train_steps": step,
            "train_seconds": round(train_seconds, 1),
            "total_seconds": round(time.time() - t_start, 1),
            "seed": args.seed,
            "batch": B,
            "seq_len": T,
            "lr": args.lr,
            "clip": args.clip,
            "hidden": args.hidden,
            "layers": args.layers,
            "torch_version": torch.__version__,
            "numpy_version": np.__version__,
        }, fh, indent=1)
        fh.write("\n")
    print("wrote %s" % args.out)


if __name__ == "__main__":
    main()
