"""PyTorch's dynamic int8 GRU on the demo's char-LM, scored as `fixq demo` scores fixq.

The protocol is the demo's (src/cli/demo_cmd.cpp, src/cli/charlm.cpp), so its quality
table can hold torch's rows next to fixq's:
  - the GRU runs over the embedded held-out ids (heldout_ids.npy) as one sequence,
    batch 1, from h0 = 0, giving y [T, 1, H];
  - bpc = mean over t < T-1 of -log2 softmax(decoder(y_t))[id_{t+1}], the decoder in
    float64 on the float32 y (CharLm::bits_per_char);
  - cosine = sum(y_ref*y) / (|y_ref| |y|) in float64 over the whole y, against torch's
    float32 GRU (fixq::cosine);
  - us_per_step = median wall time of one GRU forward over the whole sequence, / T, one
    thread, over --repeats forwards (the first one's output is the one scored; over 14457
    steps its one-time setup is negligible). A row stops early, after at least one
    forward, once its forwards took ROW_BUDGET_S: onednn's batch-1 dynamic GRU takes
    ~3 s per forward on an idle core, and the whole run should stay well under 30 s.
    "forwards_timed" in each row says how many the median is over.
Rows: torch float32, then torch.ao.quantization.quantize_dynamic(model, {nn.GRU},
dtype=torch.qint8) (int8 weights, activations quantized per call, gates in float) under
the 'onednn' and 'qnnpack' quantized engines (Debian's torch has no fbgemm). An engine
that is missing or fails gives a row with "error" instead of numbers.

Prints one JSON object:
  {"torch_version": ..., "heldout_chars": T, "threads": 1, "rows": [
     {"name": "torch f32", "engine": null, "bpc": ..., "cosine": 1.0, "us_per_step": ...},
     {"name": "torch dynamic int8", "engine": "onednn", "bpc": ..., ...},
     {"name": "torch dynamic int8", "engine": "qnnpack", ...}]}

Usage: python3 -m fixq.baselines charlm --data DIR [--repeats 5]
(DIR: the model's files, data/charlm in the repository, share/fixq/charlm once installed)
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

# The qnnpack engine logs a warning per linear call (it ignores reduce_range); c10 caps
# the log level at TORCH_CPP_LOG_LEVEL, glog at GLOG_minloglevel: both must be raised
# before torch loads, or stderr drowns.
os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
os.environ.setdefault("GLOG_minloglevel", "2")
import numpy as np  # noqa: E402
import torch  # noqa: E402

from . import OneLineParser  # noqa: E402

ENGINES = ("onednn", "qnnpack")
MAX_REPEATS = 1000
ROW_BUDGET_S = 6.0


def repeats_arg(text):
    try:
        v = int(text, 10)
    except ValueError:
        v = None
    if v is None or not 1 <= v <= MAX_REPEATS or text.strip() != text:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer in [1, {MAX_REPEATS}]")
    return v


def load_npy(data, name, ndim, dtype=np.float32):
    path = os.path.join(data, name + ".npy")
    try:
        a = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise ValueError(f"cannot read {path}: {e}")
    if a.ndim != ndim or a.dtype != dtype:
        raise ValueError(f"{path}: expected {ndim}-d {np.dtype(dtype).name}, got {a.ndim}-d {a.dtype.name}")
    return a


class CharLm:
    """data/charlm as CharLm::load reads it, with the same shape checks."""

    def __init__(self, data):
        g = {n: load_npy(data, "gru." + n, 2 if n.startswith("weight") else 1)
             for n in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")}
        self.embedding = load_npy(data, "embedding", 2)
        self.decoder_w = load_npy(data, "decoder.weight", 2).astype(np.float64)
        self.decoder_b = load_npy(data, "decoder.bias", 1).astype(np.float64)
        self.ids = load_npy(data, "heldout_ids", 1, np.uint8)
        vocab, embed = self.embedding.shape
        hidden = g["weight_hh_l0"].shape[1]
        if not (g["weight_ih_l0"].shape == (3 * hidden, embed) and g["weight_hh_l0"].shape == (3 * hidden, hidden)
                and g["bias_ih_l0"].shape == (3 * hidden,) and g["bias_hh_l0"].shape == (3 * hidden,)
                and self.decoder_w.shape == (vocab, hidden) and self.decoder_b.shape == (vocab,)):
            raise ValueError(f"{data}: embedding, decoder and GRU shapes do not fit together")
        vocab_json = os.path.join(data, "vocab.json")
        try:
            with open(vocab_json, encoding="utf-8") as f:
                chars = json.load(f)["chars"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"cannot read the character list of {vocab_json}: {e}")
        if len(chars) + 1 != vocab:  # + the unknown id, as CharLm::load appends "?"
            raise ValueError(f"{vocab_json} does not match the embedding")
        if self.ids.size < 2:
            raise ValueError(f"{data}/heldout_ids.npy: need at least 2 ids to score a prediction")
        if int(self.ids.max()) >= vocab:
            raise ValueError(f"token id {int(self.ids.max())} is outside the vocabulary of {vocab}")
        self.gru = Gru(embed, hidden)
        with torch.no_grad():
            for n, a in g.items():
                getattr(self.gru.gru, n).copy_(torch.from_numpy(a))
        self.gru.eval()

    def embedded_heldout(self):
        """x [T, 1, embed] float32 for the held-out ids (CharLm::embed_ids)."""
        return torch.from_numpy(np.ascontiguousarray(self.embedding[self.ids][:, None, :]))

    def bits_per_char(self, y):
        """CharLm::bits_per_char: y [T, 1, H] float32, decoder and softmax in float64."""
        h = y.reshape(y.shape[0], -1)[:-1].astype(np.float64)
        logits = h @ self.decoder_w.T + self.decoder_b
        mx = logits.max(axis=1)
        lse = mx + np.log(np.exp(logits - mx[:, None]).sum(axis=1))
        nats = lse - logits[np.arange(h.shape[0]), self.ids[1:]]
        return float(nats.mean() / math.log(2.0))


class Gru(torch.nn.Module):
    """quantize_dynamic swaps children only, so the GRU must sit inside a module."""

    def __init__(self, embed, hidden):
        super().__init__()
        self.gru = torch.nn.GRU(embed, hidden)

    def forward(self, x):
        return self.gru(x)[0]  # h0 = 0


def cosine_f64(ref, y):
    r, q = ref.astype(np.float64).ravel(), y.astype(np.float64).ravel()
    return float(r @ q / (math.sqrt(r @ r) * math.sqrt(q @ q)))


def timed_forwards(model, x, repeats):
    """(y of the first forward, each forward's seconds): up to `repeats` forwards, fewer once
    they took ROW_BUDGET_S; every baseline times its rows so."""
    seconds, y = [], None
    with torch.inference_mode():
        while len(seconds) < repeats and sum(seconds) < ROW_BUDGET_S:
            t0 = time.perf_counter()
            out = model(x)
            seconds.append(time.perf_counter() - t0)
            if y is None:
                y = out.numpy()
    if not np.isfinite(y).all():
        raise RuntimeError("the GRU output has non-finite values")
    return y, seconds


def score(lm, model, x, y_ref, repeats):
    """(y, row numbers): the first of up to `repeats` timed forwards is scored."""
    y, seconds = timed_forwards(model, x, repeats)
    steps = x.shape[0]
    return y, {"bpc": lm.bits_per_char(y), "cosine": 1.0 if y_ref is None else cosine_f64(y_ref, y),
               "us_per_step": statistics.median(seconds) / steps * 1e6, "forwards_timed": len(seconds)}


def dynamic_int8(model, engine):
    if engine not in torch.backends.quantized.supported_engines:
        raise RuntimeError(f"this torch lacks the '{engine}' quantized engine")
    torch.backends.quantized.engine = engine
    q = torch.ao.quantization.quantize_dynamic(model, {torch.nn.GRU}, dtype=torch.qint8)
    if "quantized" not in type(q.gru).__module__:
        raise RuntimeError(f"quantize_dynamic left {type(q.gru).__name__} unquantized")
    return q


def main(argv):
    p = OneLineParser("charlm", description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, help="folder of the model's files")
    p.add_argument("--repeats", type=repeats_arg, default=5,
                   help=f"timed forwards per row, fewer once a row took {ROW_BUDGET_S:g} s; median taken [5]")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    try:
        lm = CharLm(a.data)
    except ValueError as e:
        sys.stderr.write(f"fixq.baselines charlm: {e}\n")
        return 1
    x = lm.embedded_heldout()
    y32, f32 = score(lm, lm.gru, x, None, a.repeats)
    rows = [{"name": "torch f32", "engine": None, **f32}]
    for engine in ENGINES:
        row = {"name": "torch dynamic int8", "engine": engine}
        try:
            q = dynamic_int8(lm.gru, engine)
            row.update(score(lm, q, x, y32, a.repeats)[1])
        except Exception as e:  # one engine failing must not hide the others' rows
            row["error"] = (str(e).strip().splitlines() or [type(e).__name__])[0]
        rows.append(row)
    print(json.dumps({"torch_version": torch.__version__, "heldout_chars": int(x.shape[0]),
                      "threads": torch.get_num_threads(), "rows": rows}))
    return 0
