#!/usr/bin/env bash
# `fixq bench model` on a small model from tools/example_model_onnx.py, quick form (batch 1,
# 1 and 100 frames per call, 3 samples of short length): the header and the CSV's shape,
# every fixq implementation at every (batch, frames_per_call), positive times, and every
# peer either rows at every shape or a '#' line naming it (absent, or failed). Bad options
# are a one-line error with exit != 0. Then a second graph, written here with onnx.helper:
# ONNX's reset-before GRU with an initial-state input and a final-state output, which the
# peers that run must carry from one frame per call to the next, and say so. Under a minute
# on a loaded 2-core machine.
#   usage: bench_model_test.sh FIXQ_BINARY REPO_ROOT
set -euo pipefail
fixq=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3

"$py" -c "import torch, onnx" 2>/dev/null || { echo "skipped: $py lacks torch or onnx (tools/example_model_onnx.py)"; exit 77; }
"$py" "$root/tools/example_model_onnx.py" --out "$tmp/m.onnx"
"$fixq" bench model --model "$tmp/m.onnx" --batch 1 --frames 1,100 --samples 3 --quick >"$tmp/m.csv"

"$py" - "$tmp/m.csv" <<'PY'
import sys

lines = open(sys.argv[1]).read().splitlines()
comments = [l for l in lines if l.startswith("#")]
rows = [l for l in lines if not l.startswith("#")]
assert comments and comments[0].startswith("# fixq bench model: ") and "1 thread" in comments[0], comments[:1]
assert rows and rows[0] == "batch,frames_per_call,impl,us_per_frame", rows[:1]
table = {}
for line in rows[1:]:
    cells = line.split(",")
    assert len(cells) == 4, f"bad row {line!r}"
    key = (int(cells[0]), int(cells[1]), cells[2])
    assert key not in table, f"duplicate row {line!r}"
    us = float(cells[3])
    assert us > 0, f"non-positive time in {line!r}"
    table[key] = us
shapes = {(1, 1), (1, 100)}
fixq = {"fixq_float", "fixq_int16", "fixq_int8"}
for s in shapes:
    for impl in fixq:
        assert s + (impl,) in table, (s, impl, sorted(table))
assert {k[:2] for k in table} <= shapes, sorted(table)
# Each peer: rows at every shape, or a comment line that names it.
peers = {"torch": ["torch_float", "torch_dynamic_int8"], "onnxruntime": ["onnxruntime_float"]}
for peer, impls in peers.items():
    have = [k for k in table if k[2] in impls]
    said = [c for c in comments if any(c.startswith(f"# {x}") for x in [peer] + impls)]
    if have:
        for s in shapes:
            for impl in impls:
                assert s + (impl,) in table, (peer, s, impl, sorted(table))
    else:
        assert said, f"{peer}: neither rows nor a comment line: {comments}"
unknown = {k[2] for k in table} - fixq - {i for v in peers.values() for i in v}
assert not unknown, unknown
PY

"$py" - "$tmp/rb.onnx" <<'PY'
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

rng = np.random.default_rng(0)
C, H = 10, 16
init = [nh.from_array((rng.standard_normal((1, 3 * H, C)) * 0.3).astype(np.float32), "W"),
        nh.from_array((rng.standard_normal((1, 3 * H, H)) * 0.3).astype(np.float32), "R"),
        nh.from_array((rng.standard_normal((1, 6 * H)) * 0.1).astype(np.float32), "B"),
        nh.from_array(np.array([1], dtype=np.int64), "ax")]
nodes = [h.make_node("GRU", ["x", "W", "R", "B", "", "h0"], ["Y", "hn"], hidden_size=H, linear_before_reset=0),
         h.make_node("Squeeze", ["Y", "ax"], ["y"])]
g = h.make_graph(nodes, "reset_before", [h.make_tensor_value_info("x", T.FLOAT, ["t", "b", C]),
                                         h.make_tensor_value_info("h0", T.FLOAT, [1, "b", H])],
                 [h.make_tensor_value_info("y", T.FLOAT, ["t", "b", H]),
                  h.make_tensor_value_info("hn", T.FLOAT, [1, "b", H])], init)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 14)])
m.ir_version = 8
onnx.save(m, sys.argv[1])
PY
"$fixq" bench model --model "$tmp/rb.onnx" --batch 1 --frames 1,100 --samples 3 --quick >"$tmp/rb.csv"
"$py" - "$tmp/rb.csv" <<'PY'
import sys

lines = open(sys.argv[1]).read().splitlines()
rows = [l.split(",") for l in lines if not l.startswith("#")][1:]
impls = {r[2] for r in rows}
assert {"fixq_float", "fixq_int16", "fixq_int8"} <= impls, impls
for peer in ("torch_float", "onnxruntime_float"):
    said = [l for l in lines if l.startswith("# " + peer.split("_")[0])]  # its line, or the bench's about it
    assert said, f"{peer}: no comment line"
    if peer in impls:
        own = [l for l in said if l.startswith(f"# {peer}: ")]
        assert own and "carries the graph's state" in own[0], said
PY

source "$(dirname "$0")/expect_fail.sh"
expect_fail "--batch: '0'" "$fixq" bench model --model "$tmp/m.onnx" --batch 0
expect_fail "--frames: 'x'" "$fixq" bench model --model "$tmp/m.onnx" --frames x
expect_fail "--samples: '0'" "$fixq" bench model --model "$tmp/m.onnx" --samples 0
expect_fail "missing.onnx" "$fixq" bench model --model "$tmp/missing.onnx"
expect_fail "--model" "$fixq" bench model
echo "bench model: ok"
