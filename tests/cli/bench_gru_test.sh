#!/usr/bin/env bash
# `fixq bench gru --quick` and tools/bench_torch_gru.py --quick print the promised CSV: every
# implementation at every shape, positive times, ratios that agree with the times, one
# thread; bad options are a one-line error with exit != 0. FIXQ_PEER_ONEDNN=0 (set by ctest)
# says the tool was built without oneDNN: then fixq's rows alone, with the ratio empty
# (bench_no_peers_test.sh checks that build's notes).
#   usage: bench_gru_test.sh FIXQ_BINARY REPO_ROOT
set -euo pipefail
fixq=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3

onednn=${FIXQ_PEER_ONEDNN:-1}
"$fixq" bench gru --quick >"$tmp/fixq.csv"
against=()
[[ $onednn == 1 ]] && against=(--against "$tmp/fixq.csv")
"$py" "$root/tools/bench_torch_gru.py" --quick "${against[@]}" >"$tmp/torch.csv"

"$py" - "$tmp/fixq.csv" "$tmp/torch.csv" "$onednn" <<'PY'
import sys

HEADER = "H,batch,impl,us_per_step,ratio_vs_onednn_int8"
SHAPES = {(h, b) for h in (64, 128) for b in (1, 4)}  # --quick


def read(path):
    lines = open(path).read().splitlines()
    comments = [l for l in lines if l.startswith("#")]
    rows = [l for l in lines if not l.startswith("#")]
    assert rows and rows[0] == HEADER, f"{path}: header {rows[:1]}"
    table = {}
    for line in rows[1:]:
        cells = line.split(",")
        assert len(cells) == 5, f"{path}: bad row {line!r}"
        key = (int(cells[0]), int(cells[1]), cells[2])
        assert key not in table, f"{path}: duplicate row {line!r}"
        us = float(cells[3])
        assert us > 0, f"{path}: non-positive time in {line!r}"
        table[key] = (us, float(cells[4]) if cells[4] else None)
    return table, comments


def check_ratio(path, key, us, ratio, onednn_us):
    # ratio = us(onednn_gru_u8s8) / us(impl), both printed with 2 decimals, ratio with 3.
    expect = onednn_us / us
    slack = 0.0005 + expect * (0.005 / us + 0.005 / onednn_us)
    assert abs(ratio - expect) <= slack, f"{path}: {key} ratio {ratio} but times give {expect:.4f}"


onednn = sys.argv[3] == "1"
fixq, comments = read(sys.argv[1])
impls = ["fixq_int8", "fixq_int16", "fixq_float"] + (["onednn_lbr_gru_f32", "onednn_gru_u8s8"] if onednn else [])
assert set(fixq) == {(h, b, i) for h, b in SHAPES for i in impls}, sorted(fixq)
for (h, b, impl), (us, ratio) in fixq.items():
    if onednn:
        check_ratio(sys.argv[1], (h, b, impl), us, ratio, fixq[(h, b, "onednn_gru_u8s8")][0])
    else:
        assert ratio is None, f"ratio {ratio} for {(h, b, impl)} without oneDNN"
assert any(c.startswith("# threads in this process after timing: 1;") for c in comments), comments
checks = [c for c in comments if c.startswith("# check ")]
assert len(checks) == len(SHAPES), checks

torch, comments = read(sys.argv[2])
expected = {(h, b, "torch_f32") for h, b in SHAPES}
for engine in ("onednn", "qnnpack"):
    impl = f"torch_dynamic_int8_{engine}"
    if any(c.startswith(f"# {impl}") for c in comments):
        continue  # this torch cannot run it and said so
    expected |= {(h, b, impl) for h, b in SHAPES}
assert set(torch) == expected, (sorted(torch), sorted(expected))
for (h, b, impl), (us, ratio) in torch.items():
    if not onednn:
        assert ratio is None, f"ratio {ratio} for {(h, b, impl)} without --against"
        continue
    assert ratio is not None, f"ratio missing for {(h, b, impl)} despite --against"
    check_ratio(sys.argv[2], (h, b, impl), us, ratio, fixq[(h, b, "onednn_gru_u8s8")][0])
PY

source "$(dirname "$0")/expect_fail.sh"
expect_fail "--hidden: '0'" "$fixq" bench gru --hidden 0
expect_fail "--batch: '-1'" "$fixq" bench gru --batch -1
expect_fail "--hidden: 'abc'" "$fixq" bench gru --hidden abc
expect_fail "--hidden: ''" "$fixq" bench gru --hidden 64,,128
expect_fail "--steps: '1,2'" "$fixq" bench gru --steps 1,2
expect_fail "--batch: '99999'" "$fixq" bench gru --batch 99999
expect_fail "MiB" "$fixq" bench gru --hidden 4096 --batch 1024 --steps 10000
expect_fail "--bogus" "$fixq" bench gru --bogus
expect_fail "--hidden: '0'" "$py" "$root/tools/bench_torch_gru.py" --hidden 0
expect_fail "--batch: 'x'" "$py" "$root/tools/bench_torch_gru.py" --batch x
expect_fail "--steps: '0'" "$py" "$root/tools/bench_torch_gru.py" --steps 0
expect_fail "cannot read" "$py" "$root/tools/bench_torch_gru.py" --against "$tmp/missing.csv"
echo "not a csv" >"$tmp/bad.csv"
expect_fail "not the CSV" "$py" "$root/tools/bench_torch_gru.py" --against "$tmp/bad.csv"
expect_fail "--bogus" "$py" "$root/tools/bench_torch_gru.py" --bogus
echo "bench gru: ok"
