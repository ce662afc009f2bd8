#!/usr/bin/env bash
# `fixq bench gru --quick` and tools/bench_torch_gru.py --quick print the promised CSV: every
# implementation at every shape, the rows of one frame per call at batch 1 with the step's
# bound, positive times, ratios that agree with the times, one thread; `--threads 2` says
# so and adds the speed-up over one thread at batch 16, H 512; bad options are a one-line
# error with exit != 0. FIXQ_PEER_ONEDNN=0 (set by ctest)
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
"$fixq" bench gru --quick --threads 2 --hidden 512 --batch 16 --steps 4 >"$tmp/threads.csv"

"$py" - "$tmp/fixq.csv" "$tmp/torch.csv" "$onednn" "$tmp/threads.csv" <<'PY'
import re
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
# One frame per call, at batch 1 only; their ratio is against oneDNN one frame per call.
stream_impls = ["fixq_int8_stream", "fixq_int8_forward_T1", "fixq_float_stream"] + (["onednn_gru_u8s8_stream", "onednn_lbr_gru_f32_stream"] if onednn else [])
expected = {(h, b, i) for h, b in SHAPES for i in impls} | {(h, 1, i) for h, b in SHAPES if b == 1 for i in stream_impls}
assert set(fixq) == expected, sorted(set(fixq) ^ expected)
for (h, b, impl), (us, ratio) in fixq.items():
    if onednn:
        peer = "onednn_gru_u8s8_stream" if impl in stream_impls else "onednn_gru_u8s8"
        check_ratio(sys.argv[1], (h, b, impl), us, ratio, fixq[(h, b, peer)][0])
    else:
        assert ratio is None, f"ratio {ratio} for {(h, b, impl)} without oneDNN"
assert any(c.startswith("# threads in this process after timing: 1;") for c in comments), comments
assert "; 1 thread (" in comments[0], comments[0]
checks = [c for c in comments if c.startswith("# check ")]
assert len([c for c in checks if " batch=" in c]) == len(SHAPES), checks
# oneDNN checks its gru u8s8 and its lbr_gru f32 one frame per call, each on its own line.
assert len([c for c in checks if "one frame per call" in c]) == len({h for h, _ in SHAPES}) * (2 if onednn else 1), checks
assert not any(c.startswith("# ratio_vs_1_thread") for c in comments), "a speed-up line on one thread"
# The bound of the step, from the measured L2 bandwidth and vpdpbusd peak (AVX-512 VNNI CPUs).
machine = [c for c in comments if c.startswith("# machine: ")]
assert len(machine) == 1, comments
bounds = [c for c in comments if c.startswith("# bound H=")]
if "no bound" in machine[0]:
    assert not bounds, bounds
else:
    gbs = float(re.search(r"L2 read ([0-9.]+) GB/s", machine[0]).group(1))
    gops = float(re.search(r"vpdpbusd peak ([0-9.]+) GOPS", machine[0]).group(1))
    assert gbs > 1 and gops > 1, machine
    assert sorted(int(re.match(r"# bound H=(\d+):", c).group(1)) for c in bounds) == sorted({h for h, _ in SHAPES}), bounds
    for c in bounds:
        h = int(re.match(r"# bound H=(\d+):", c).group(1))
        step = float(re.search(r"batch-1 step ([0-9.]+) us", c).group(1))
        # 3H x H bytes at the L2 rate plus 3H x H multiply-adds (C = H) at the peak, as printed.
        want = 3 * h * h / (gbs * 1e3) + 2 * 3 * h * h / (gops * 1e3)
        assert abs(step - want) <= 0.01 + 0.02 * want, (c, want)
        # One frame per call: W and R, 3H x (C + H) bytes, at the L2 rate.
        frame = float(re.search(r"one frame per call ([0-9.]+) us", c).group(1))
        assert abs(frame - 6 * h * h / (gbs * 1e3)) <= 0.01 + 0.02 * frame, c
        # Each fixq row as a multiple of its bound, as its time says.
        for impl, key, bound in (("fixq_int8", "fixq_int8 batch 1 at", step),
                                 ("fixq_int8_stream", "fixq_int8_stream at", frame),
                                 ("fixq_int8_forward_T1", "fixq_int8_forward_T1 at", frame)):
            x = float(re.search(re.escape(key) + r" ([0-9.]+)x", c).group(1))
            expect = fixq[(h, 1, impl)][0] / bound
            assert abs(x - expect) <= 0.01 + 0.1 * expect, (c, impl, expect)  # times printed to 0.01 us

# --threads 2: the header says so, the rows are there, and the speed-up over one thread
# is given for every implementation, each ratio positive.
threaded, comments = read(sys.argv[4])
assert set(threaded) == {(512, 16, i) for i in impls}, sorted(threaded)
assert "; 2 threads (" in comments[0], comments[0]
ratio_lines = [c for c in comments if c.startswith("# ratio_vs_1_thread H=512 batch=16 (2 threads against 1):")]
assert len(ratio_lines) == 1, comments
for impl in impls:
    m = re.search(re.escape(impl) + r" ([0-9.]+) \(1 thread ([0-9.]+) us/step\)", ratio_lines[0])
    assert m and float(m.group(1)) > 0 and float(m.group(2)) > 0, (impl, ratio_lines[0])

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
expect_fail "--threads: '0'" "$fixq" bench gru --threads 0
expect_fail "--threads: '-2'" "$fixq" bench gru --threads -2
expect_fail "--threads: 'two'" "$fixq" bench gru --threads two
expect_fail "--threads: '1000'" "$fixq" bench gru --threads 1000
expect_fail "--hidden: '0'" "$py" "$root/tools/bench_torch_gru.py" --hidden 0
expect_fail "--batch: 'x'" "$py" "$root/tools/bench_torch_gru.py" --batch x
expect_fail "--steps: '0'" "$py" "$root/tools/bench_torch_gru.py" --steps 0
expect_fail "cannot read" "$py" "$root/tools/bench_torch_gru.py" --against "$tmp/missing.csv"
echo "not a csv" >"$tmp/bad.csv"
expect_fail "not the CSV" "$py" "$root/tools/bench_torch_gru.py" --against "$tmp/bad.csv"
expect_fail "--bogus" "$py" "$root/tools/bench_torch_gru.py" --bogus
echo "bench gru: ok"
