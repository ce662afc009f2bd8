#!/usr/bin/env bash
# `fixq bench` built without oneDNN, as a user who installed only fixq's runtime
# dependencies has it: it still times fixq, keeps the CSV columns (the peer ones empty), and
# says on stderr, in the CSV and in --help how to add oneDNN. The tool under test is
# FIXQ_NO_PEERS_BIN (the same sources linked without oneDNN, built where this build has it),
# or FIXQ_BINARY itself when the build has no oneDNN at all (FIXQ_PEER_ONEDNN=0).
#   usage: bench_no_peers_test.sh FIXQ_BINARY REPO_ROOT
set -euo pipefail
fixq=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3

if [[ ${FIXQ_PEER_ONEDNN:-1} == 0 ]]; then
  bin=$fixq
else
  bin=${FIXQ_NO_PEERS_BIN:?"ctest sets FIXQ_NO_PEERS_BIN where the build has oneDNN"}
fi
[[ -x $bin ]] || { echo "bench no peers: $bin is not an executable" >&2; exit 1; }

# How to add oneDNN: the Debian package and the configure option.
has_hint() { grep -q "libdnnl-dev" "$1" && grep -q -- "-DFIXQ_ONEDNN=ON" "$1"; }

"$bin" bench gemm --quick >"$tmp/gemm.csv" 2>"$tmp/gemm.err"
[[ $(wc -l <"$tmp/gemm.err") -eq 1 ]] && grep -q "^fixq: note: .*without oneDNN" "$tmp/gemm.err" && has_hint "$tmp/gemm.err" ||
  { echo "bench no peers: gemm's note on stderr:" >&2; cat "$tmp/gemm.err" >&2; exit 1; }
"$bin" bench gru --quick --hidden 64,96 --batch 1,3 --steps 8 >"$tmp/gru.csv" 2>"$tmp/gru.err"
[[ $(wc -l <"$tmp/gru.err") -eq 1 ]] && has_hint "$tmp/gru.err" ||
  { echo "bench no peers: gru's note on stderr:" >&2; cat "$tmp/gru.err" >&2; exit 1; }
for cmd in "bench" "bench gemm" "bench gru"; do
  # shellcheck disable=SC2086
  "$bin" $cmd --help >"$tmp/help.txt"
  has_hint "$tmp/help.txt" || { echo "bench no peers: '$cmd --help' does not say how to add oneDNN" >&2; exit 1; }
  # The note comes beside the worked example, not in its place (tests/cli/cli_help_test.sh).
  grep -q "^Example" "$tmp/help.txt" || { echo "bench no peers: '$cmd --help' lost its example:" >&2; cat "$tmp/help.txt" >&2; exit 1; }
done

"$py" - "$tmp/gemm.csv" "$tmp/gru.csv" <<'PY'
import sys

def rows(path, header):
    lines = open(path).read().splitlines()
    comments = [l for l in lines if l.startswith("#")]
    body = [l for l in lines if not l.startswith("#")]
    assert body and body[0] == header, f"{path}: header {body[:1]}"
    assert any("without oneDNN" in c and "libdnnl-dev" in c for c in comments), f"{path}: no note in {comments}"
    return [l.split(",") for l in body[1:]], comments

# gemm: every --quick shape (M*N*K <= 2^27) with fixq's GOPS, the oneDNN columns empty,
# then the instruction peaks (name,value).
gemm, _ = rows(sys.argv[1], "M,N,K,fixq_gops,onednn_gops,ratio,onednn_inexact_pct")
shapes = [r for r in gemm if len(r) == 7]
expected = [(1, 768, 256), (1, 3072, 1024), (1, 4096, 4096), (4, 1536, 512), (16, 3072, 1024)]
assert [tuple(int(c) for c in r[:3]) for r in shapes] == expected, shapes
for r in shapes:
    assert float(r[3]) > 0, f"gemm: non-positive fixq_gops in {r}"
    assert r[4:] == ["", "", ""], f"gemm: peer columns not empty without oneDNN: {r}"
peaks = [r for r in gemm if len(r) == 2]
assert [p[0] for p in peaks][:1] == ["vpdpbusd_peak_gops"] and len(shapes) + len(peaks) == len(gemm), gemm

# gru: fixq's three rows at every (H, batch), and at batch 1 its two rows of one frame per
# call; positive times, ratio empty; one check line per shape and per H for one frame per
# call, and the one-thread proof.
gru, comments = rows(sys.argv[2], "H,batch,impl,us_per_step,ratio_vs_onednn_int8")
impls = ["fixq_int8", "fixq_int16", "fixq_float"]
stream_impls = ["fixq_int8_stream", "fixq_int8_forward_T1", "fixq_float_stream"]
got = [(int(r[0]), int(r[1]), r[2]) for r in gru]
assert got == [(h, b, i) for h in (64, 96) for b in (1, 3) for i in impls + (stream_impls if b == 1 else [])], got
for r in gru:
    assert len(r) == 5 and float(r[3]) > 0 and r[4] == "", f"gru: bad row {r}"
assert len([c for c in comments if c.startswith("# check ")]) == 4 + 2, comments
assert any(c.startswith("# threads in this process after timing: 1;") for c in comments), comments
PY

# The torch comparison needs oneDNN's row for its ratio: a clear one-line error.
source "$(dirname "$0")/expect_fail.sh"
expect_fail "no onednn_gru_u8s8 row" "$py" "$2/tools/bench_torch_gru.py" --quick --hidden 64 --batch 1 --against "$tmp/gru.csv"
echo "bench no peers: ok"
