#!/usr/bin/python3
"""Export a PyTorch nn.GRU to fixq's float GRU model file, and optionally torch's own
outputs on a random input, which fixq's tests compare gru_forward with.

The model file (see include/fixq/gru.h) is a safetensors file holding the nn.GRU
state_dict as F32 under torch's names and gate order (r, z, n), with the metadata
"fixq.format": "gru-float", "input_size", "hidden_size", "num_layers" (decimal strings) and
"bidirectional" ("true" / "false"). Debian's torch 1.13 has no safetensors package, so the
format is written here from its definition with struct and json: an 8-byte little-endian
header length, compact JSON with sorted keys padded with spaces to a multiple of 8, then
the tensors' bytes in name order (all F32, so every tensor stays 4-byte aligned).

The model is either loaded (--state-dict: a torch.save of an nn.GRU or of its state_dict)
or made from a seed (--input-size, --hidden-size, --layers, --bidirectional, --no-bias,
--seed; torch's default initialisation).

With --reference DIR, a random input is drawn from the same seed and torch's results are
written there as little-endian float32 .npy files:
  x.npy    [T, B, C], or [B, T, C] with --batch-first
  h0.npy   [L*D, B, H], only with --h0 (otherwise the initial state is zero)
  y.npy    [T, B, D*H] (or [B, T, D*H]); with --lengths, the output of
           pack_padded_sequence -> GRU -> pad_packed_sequence, zero at padded steps
  h_n.npy  [L*D, B, H]

Usage (Debian's interpreter, which has python3-torch and python3-numpy):
  /usr/bin/python3 tools/export_gru.py --out gru.safetensors --input-size 8 --hidden-size 16
  /usr/bin/python3 tools/export_gru.py --state-dict gru.pt --out gru.safetensors
  /usr/bin/python3 tools/export_gru.py --out m.safetensors --input-size 3 --hidden-size 4 \\
      --layers 2 --bidirectional --reference ref/ --seq-len 6 --batch 3 --lengths 6,2,4 --h0
"""

import argparse
import json
import os
import re
import struct
import sys
import tempfile

import numpy as np
import torch
from torch import nn


def fail(message):
    sys.exit("export_gru.py: " + message)


def write_safetensors(path, tensors, metadata):
    """tensors: {name: float32 numpy array}. Written through a temporary file and a rename,
    so that an interrupted run never leaves a half-written model behind."""
    header, data, offset = {"__metadata__": metadata}, [], 0
    for name in sorted(tensors):
        raw = np.ascontiguousarray(tensors[name], dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(raw)]}
        data.append(raw)
        offset += len(raw)
    text = json.dumps(header, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".tmp.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text + b"".join(data))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def gru_from_state_dict(state_dict):
    """An nn.GRU whose sizes are read off the state_dict's shapes."""
    names = set(state_dict)
    for name in names:
        if not re.fullmatch(r"(weight|bias)_(ih|hh)_l\d+(_reverse)?", name):
            fail("unexpected tensor '%s' in an nn.GRU state_dict (strip a module prefix first)" % name)
    if "weight_ih_l0" not in names or "weight_hh_l0" not in names:
        fail("the state_dict has no weight_ih_l0 / weight_hh_l0")
    hidden = state_dict["weight_hh_l0"].shape[1]
    layers = 1 + max(int(re.search(r"_l(\d+)", n).group(1)) for n in names)
    gru = nn.GRU(state_dict["weight_ih_l0"].shape[1], hidden, num_layers=layers,
                 bias="bias_ih_l0" in names, bidirectional="weight_ih_l0_reverse" in names)
    gru.load_state_dict(state_dict)
    return gru


def load_or_make(args):
    if args.state_dict:
        loaded = torch.load(args.state_dict, map_location="cpu")
        if isinstance(loaded, nn.GRU):
            return loaded
        if isinstance(loaded, dict):
            return gru_from_state_dict(loaded)
        fail("%s holds a %s, not an nn.GRU or its state_dict" % (args.state_dict, type(loaded).__name__))
    if args.input_size is None or args.hidden_size is None:
        fail("give --state-dict, or --input-size and --hidden-size for a random model")
    return nn.GRU(args.input_size, args.hidden_size, num_layers=args.layers, bias=not args.no_bias,
                  bidirectional=args.bidirectional)


def save_npy(directory, name, tensor):
    np.save(os.path.join(directory, name), tensor.detach().numpy().astype("<f4"))


def write_reference(gru, args):
    """Runs torch on a random input and saves input, h0 and the outputs."""
    T, B = args.seq_len, args.batch
    D = 2 if gru.bidirectional else 1
    # numpy's generator, not torch.randn: torch draws 16 or more normals with a vectorised
    # Box-Muller whose bits depend on ATen's ISA, so the same seed gave another input on a
    # CPU without AVX2; numpy's PCG64 + ziggurat is the same on every CPU.
    rng = np.random.default_rng(args.seed)
    x = torch.from_numpy(rng.standard_normal((T, B, gru.input_size), dtype=np.float32))
    h0 = torch.from_numpy(rng.standard_normal((gru.num_layers * D, B, gru.hidden_size), dtype=np.float32)) if args.h0 else None
    with torch.no_grad():
        if args.lengths:
            packed = nn.utils.rnn.pack_padded_sequence(x, torch.tensor(args.lengths), enforce_sorted=False)
            y_packed, h_n = gru(packed, h0)
            y, _ = nn.utils.rnn.pad_packed_sequence(y_packed, total_length=T)
        else:
            y, h_n = gru(x, h0)
    if args.batch_first:  # the same numbers, stored [B, T, ...]
        x, y = x.transpose(0, 1).contiguous(), y.transpose(0, 1).contiguous()
    os.makedirs(args.reference, exist_ok=True)
    save_npy(args.reference, "x.npy", x)
    save_npy(args.reference, "y.npy", y)
    save_npy(args.reference, "h_n.npy", h_n)
    if h0 is not None:
        save_npy(args.reference, "h0.npy", h0)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="the model file to write (.safetensors)")
    p.add_argument("--state-dict", help="a torch.save of an nn.GRU or of its state_dict")
    p.add_argument("--input-size", type=int)
    p.add_argument("--hidden-size", type=int)
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--bidirectional", action="store_true")
    p.add_argument("--no-bias", action="store_true")
    p.add_argument("--seed", type=int, default=0, help="for the random model and input")
    p.add_argument("--reference", metavar="DIR", help="also write x, torch's y and h_n (.npy) here")
    p.add_argument("--seq-len", type=int, default=5)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--batch-first", action="store_true", help="x and y of the reference as [B, T, ...]")
    p.add_argument("--lengths", help="comma-separated per-sequence lengths of the reference input")
    p.add_argument("--h0", action="store_true", help="a random initial state for the reference")
    args = p.parse_args()
    if args.lengths:  # checked before anything is written
        try:
            args.lengths = [int(v) for v in args.lengths.split(",")]
        except ValueError:
            fail("--lengths must be comma-separated integers, not '%s'" % args.lengths)
        if len(args.lengths) != args.batch or not all(1 <= n <= args.seq_len for n in args.lengths):
            fail("--lengths needs %d values in [1, %d] (torch packs no empty sequence)"
                 % (args.batch, args.seq_len))

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # results independent of the machine's core count
    gru = load_or_make(args)
    if getattr(gru, "proj_size", 0):
        fail("a GRU has no projection; proj_size must be 0")
    tensors = {name: t.detach().cpu().float().numpy() for name, t in gru.state_dict().items()}
    write_safetensors(args.out, tensors, {
        "fixq.format": "gru-float",
        "input_size": str(gru.input_size),
        "hidden_size": str(gru.hidden_size),
        "num_layers": str(gru.num_layers),
        "bidirectional": "true" if gru.bidirectional else "false",
    })
    if args.reference:
        write_reference(gru, args)


if __name__ == "__main__":
    main()
