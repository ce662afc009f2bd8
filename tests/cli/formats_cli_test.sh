#!/usr/bin/env bash
# End to end through the CLI: pack a real tensor into every GGUF type and back, read the
# quantize-stats report, and check that damaged or unsuitable input is a one-line error.
#   usage: formats_cli_test.sh FIXQ_BINARY REPO_ROOT
set -euo pipefail
fixq=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3
# A [64, 256] slice of the embedded model's recurrent weights: real values, whole K-blocks.
"$py" -c "import numpy as np; w=np.load('$root/data/charlm/gru.weight_hh_l0.npy'); np.save('$tmp/w.npy', w[:128].reshape(64, 256))"

for type in q4_0 q4_1 q5_0 q5_1 q8_0 q2_K q3_K q4_K q5_K q6_K q8_K iq4_nl iq4_xs tq1_0 tq2_0 mxfp4 nvfp4; do
  "$fixq" formats quantize --type $type "$tmp/w.npy" -o "$tmp/w.bin" >/dev/null
  "$fixq" formats dequantize "$tmp/w.bin" -o "$tmp/back_$type.npy" >/dev/null
  "$py" - "$tmp/w.npy" "$tmp/back_$type.npy" $type <<'PY'
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
assert a.shape == b.shape, (a.shape, b.shape)
rel = float(np.linalg.norm(a - b) / np.linalg.norm(a))
# Ternary keeps only values beyond half the block's |max| (0.84 on this tensor; 1 is all zeros).
limit = {"q2_K": 0.6, "q3_K": 0.3, "mxfp4": 0.3, "tq1_0": 0.9, "tq2_0": 0.9}.get(sys.argv[3], 0.2)
assert rel < limit, f"{sys.argv[3]}: relative error {rel}"
PY
done
# tq1_0 and tq2_0 hold the same ternary values, packed differently.
cmp -s "$tmp/back_tq1_0.npy" "$tmp/back_tq2_0.npy" || { echo "tq1_0 and tq2_0 round trips differ" >&2; exit 1; }

"$fixq" quantize-stats --types q4_0,q8_0,q4_K "$tmp/w.npy" >"$tmp/stats.txt"
grep -Eq '^q4_0 +: rmse [0-9.]+, maxerr [0-9.]+, 95pct<[0-9.]+, median<[0-9.]+$' "$tmp/stats.txt"
grep -q "sqnr" "$tmp/stats.txt"

source "$(dirname "$0")/expect_fail.sh"
"$fixq" formats quantize --type q4_0 "$tmp/w.npy" -o "$tmp/w.bin" >/dev/null
head -c 200 "$tmp/w.bin" >"$tmp/trunc.bin"
expect_fail "truncated" "$fixq" formats dequantize "$tmp/trunc.bin" -o "$tmp/x.npy"
cp "$tmp/w.bin" "$tmp/big.bin" && printf 'xx' >>"$tmp/big.bin"
expect_fail "unexpected bytes" "$fixq" formats dequantize "$tmp/big.bin" -o "$tmp/x.npy"
expect_fail "unknown format 'q9_9'" "$fixq" formats quantize --type q9_9 "$tmp/w.npy" -o "$tmp/x.bin"
"$py" -c "import numpy as np; np.save('$tmp/odd.npy', np.ones((2, 100), np.float32))"
expect_fail "blocks of 256 values" "$fixq" formats quantize --type q4_K "$tmp/odd.npy" -o "$tmp/x.bin"
"$py" -c "import numpy as np; a=np.ones((2, 32), np.float32); a[1, 7]=np.nan; np.save('$tmp/nan.npy', a)"
expect_fail "NaN\|nan" "$fixq" formats quantize --type q8_0 "$tmp/nan.npy" -o "$tmp/x.bin"

# quantize-stats on a large file: a progress bar on a terminal (script(1) gives one),
# nothing but the report when piped. 2^22 values x 4 types reach the bar's threshold.
"$py" -c "import numpy as np; np.save('$tmp/big.npy', np.random.default_rng(1).standard_normal((2048, 2048), np.float32))"
stats=("$fixq" quantize-stats --types q8_0,q4_0,q5_0,iq4_nl "$tmp/big.npy")
"${stats[@]}" >"$tmp/out.txt" 2>"$tmp/err.txt"
[[ ! -s "$tmp/err.txt" ]] && ! grep -q $'\r' "$tmp/out.txt" || { echo "quantize-stats: progress on a pipe" >&2; exit 1; }
printf -v cmd '%q ' "${stats[@]}"
script -qec "$cmd >/dev/null" /dev/null </dev/null >"$tmp/tty.txt"
grep -q $'\rquantize-stats .* 100% 16777216/16777216' "$tmp/tty.txt" ||
  { echo "quantize-stats: no progress bar on a terminal:" >&2; head -c 300 "$tmp/tty.txt" | cat -A >&2; exit 1; }
echo "formats cli: ok"
