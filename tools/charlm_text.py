#!/usr/bin/python3
"""Write the embedded char-LM's calibration and held-out text as token ids.

fixq's demo measures the quantized GRU on the task's own metric (bits per character), so
it needs the text the model was evaluated on. The corpus is Debian's license texts
(package base-files); shipping the ids makes the demo independent of that package's
version. Token ids follow data/charlm/vocab.json (unknown characters -> unk_id).

  calib_ids.npy    uint8 [4000]  the last 4000 characters of the training split
  heldout_ids.npy  uint8 [N]     the whole held-out split

Usage: /usr/bin/python3 tools/charlm_text.py --data data/charlm
"""
import argparse
import json
import os
import sys

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data/charlm", help="folder with vocab.json; outputs go there")
    ap.add_argument("--calib-chars", type=int, default=4000)
    args = ap.parse_args()
    vocab = json.load(open(os.path.join(args.data, "vocab.json"), encoding="utf-8"))
    text = ""
    for name in vocab["corpus_files"]:
        path = os.path.join(vocab["corpus_dir"], name)
        if not os.path.exists(path):
            print(f"charlm_text: corpus file {path} is missing (Debian package base-files)", file=sys.stderr)
            return 1
        text += open(path, encoding="utf-8").read()
    if len(text) != vocab["corpus_chars"]:
        print(f"charlm_text: corpus has {len(text)} characters, vocab.json expects {vocab['corpus_chars']}", file=sys.stderr)
        return 1
    index = {c: i for i, c in enumerate(vocab["chars"])}
    ids = np.array([index.get(c, vocab["unk_id"]) for c in text], dtype=np.uint8)
    train_end = vocab["split"]["train"][1]
    np.save(os.path.join(args.data, "calib_ids.npy"), ids[train_end - args.calib_chars:train_end])
    np.save(os.path.join(args.data, "heldout_ids.npy"), ids[train_end:])
    print(f"wrote {args.calib_chars} calibration and {len(ids) - train_end} held-out ids to {args.data}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
