#!/usr/bin/env bash
# End to end through the CLI, as a user would: export a torch GRU, quantize it with each
# config, run it, evaluate it, and check that bad input is a one-line error with exit != 0.
#   usage: gru_cli_test.sh FIXQ_BINARY REPO_ROOT
set -euo pipefail
fixq=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3

"$py" "$root/tools/export_gru.py" --out "$tmp/gru.safetensors" --input-size 6 --hidden-size 12 --layers 2 \
  --bidirectional --seed 5 --reference "$tmp/ref" --seq-len 20 --batch 4 >/dev/null

# The float model through the CLI equals torch's output within 1e-5.
"$fixq" gru run --model "$tmp/gru.safetensors" --input "$tmp/ref/x.npy" -o "$tmp/y_float.npy" >/dev/null
"$py" - "$tmp/y_float.npy" "$tmp/ref/y.npy" <<'PY'
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
assert a.shape == b.shape, (a.shape, b.shape)
err = float(np.abs(a - b).max())
assert err <= 1e-5, f"float GRU vs torch: max error {err}"
PY

for config in int8 int16; do
  # EMA lags on 20 calibration steps and clips a little: fine for int8's bound, not int16's.
  method=$([[ $config == int8 ]] && echo ema || echo minmax)
  for scales in pow2 multiplier; do
    "$fixq" gru quantize --model "$tmp/gru.safetensors" --calib "$tmp/ref/x.npy" --config $config --scales $scales \
      --method $method --params-out "$tmp/p.json" -o "$tmp/q.fixq" >/dev/null
    "$fixq" gru run --model "$tmp/q.fixq" --input "$tmp/ref/x.npy" -o "$tmp/y_q.npy" >/dev/null
    "$fixq" gru eval --model "$tmp/q.fixq" --float "$tmp/gru.safetensors" --input "$tmp/ref/x.npy" >"$tmp/eval.txt"
    grep -q "per operator" "$tmp/eval.txt"
    grep -q "^z_pre" "$tmp/eval.txt"
    "$py" - "$tmp/y_q.npy" "$tmp/y_float.npy" "$config" <<'PY'
import sys, numpy as np
q, f = np.load(sys.argv[1]).ravel(), np.load(sys.argv[2]).ravel()
cos = float(q @ f / np.linalg.norm(q) / np.linalg.norm(f))
need = 0.9999 if sys.argv[3] == "int16" else 0.99
assert cos >= need, f"{sys.argv[3]}: cosine {cos} < {need}"
PY
    "$py" -c "import json,sys; p=json.load(open('$tmp/p.json')); assert p['version']==1 and len(p['cells'])==4"
  done
done

# eval runs in chunks of sequences; its numbers are those of whole-batch runs (`gru run`).
"$py" -c "import numpy as np; np.save('$tmp/x40.npy', np.random.default_rng(3).standard_normal((20, 40, 6)).astype(np.float32))"
"$fixq" gru run --model "$tmp/gru.safetensors" --input "$tmp/x40.npy" -o "$tmp/f40.npy" >/dev/null
"$fixq" gru run --model "$tmp/q.fixq" --input "$tmp/x40.npy" -o "$tmp/q40.npy" >/dev/null
"$fixq" gru eval --model "$tmp/q.fixq" --float "$tmp/gru.safetensors" --input "$tmp/x40.npy" >"$tmp/eval40.txt"
# --threads splits the batch of 40: the same bytes as one thread, float and integer.
"$fixq" gru run --model "$tmp/gru.safetensors" --input "$tmp/x40.npy" --threads 3 -o "$tmp/f40_t3.npy" >/dev/null
"$fixq" gru run --model "$tmp/q.fixq" --input "$tmp/x40.npy" --threads 2 -o "$tmp/q40_t2.npy" >/dev/null
cmp "$tmp/f40.npy" "$tmp/f40_t3.npy"
cmp "$tmp/q40.npy" "$tmp/q40_t2.npy"
"$py" - "$tmp/f40.npy" "$tmp/q40.npy" "$tmp/eval40.txt" <<'PY'
import re, sys, numpy as np
f, q = np.load(sys.argv[1]).astype(np.float64), np.load(sys.argv[2]).astype(np.float64)
text = open(sys.argv[3]).read()
m = re.search(r"cosine ([0-9.]+), SQNR ([0-9.]+) dB, max error ([0-9.]+)", text)
cos = float((f * q).sum() / np.sqrt((f * f).sum() * (q * q).sum()))
assert abs(float(m.group(1)) - cos) <= 1.5e-6 and f"{np.abs(f - q).max():.6f}" == m.group(3), (m.groups(), cos)
for t in (0, 7, 19):  # per-step lines: "t cosine SQNR maxerr"
    row = re.search(rf"^ +{t} +[0-9.]+ +[0-9.inf]+ +([0-9.]+)$", text, re.M)
    assert row and row.group(1) == f"{np.abs(f[t] - q[t]).max():.6f}", (t, row and row.group(0))
PY

# --auto-bits reaches its target with some operators at 16 bits, prints them, and writes a
# config that --config takes back to the same model, byte for byte.
"$fixq" gru quantize --model "$tmp/gru.safetensors" --calib "$tmp/ref/x.npy" --auto-bits --target-cosine 0.9999 \
  --config-out "$tmp/widths.json" -o "$tmp/auto.fixq" >"$tmp/auto.txt"
grep -q "target 0.999900, met" "$tmp/auto.txt"
grep -q "16-bit operators: " "$tmp/auto.txt"
grep -q "weight bytes" "$tmp/auto.txt"
"$fixq" gru quantize --model "$tmp/gru.safetensors" --calib "$tmp/ref/x.npy" --config "$tmp/widths.json" -o "$tmp/again.fixq" >/dev/null
cmp "$tmp/auto.fixq" "$tmp/again.fixq"
"$py" -c "import json; c=json.load(open('$tmp/widths.json')); assert any(b == 16 for b in c['bits'].values()), c"

# A JSON config that overrides operators works; one naming an unknown operator does not.
echo '{"version": 1, "base": "int8", "scales": "pow2", "bits": {"g_pre": 16, "h": 16}}' >"$tmp/mixed.json"
"$fixq" gru quantize --model "$tmp/gru.safetensors" --calib "$tmp/ref/x.npy" --config "$tmp/mixed.json" -o "$tmp/m.fixq" >/dev/null
echo '{"version": 1, "bits": {"gate": 8}}' >"$tmp/bad.json"
source "$(dirname "$0")/expect_fail.sh"
expect_fail "gate" "$fixq" gru quantize --model "$tmp/gru.safetensors" --calib "$tmp/ref/x.npy" --config "$tmp/bad.json" -o "$tmp/x.fixq"
head -c 100 "$tmp/q.fixq" >"$tmp/trunc.fixq"
expect_fail "safetensors" "$fixq" gru run --model "$tmp/trunc.fixq" --input "$tmp/ref/x.npy" -o "$tmp/y.npy"
"$py" -c "import numpy as np; np.save('$tmp/bad_x.npy', np.zeros((3, 2, 5), np.float32))"
expect_fail "expects 6" "$fixq" gru run --model "$tmp/q.fixq" --input "$tmp/bad_x.npy" -o "$tmp/y.npy"
"$py" -c "import numpy as np; a=np.zeros((3, 2, 6), np.float32); a[1,1,2]=np.nan; np.save('$tmp/nan_x.npy', a)"
expect_fail "not finite\|must be finite" "$fixq" gru run --model "$tmp/q.fixq" --input "$tmp/nan_x.npy" -o "$tmp/y.npy"
expect_fail "--threads" "$fixq" gru run --model "$tmp/q.fixq" --input "$tmp/ref/x.npy" --threads -1 -o "$tmp/y.npy"
expect_fail "--threads" "$fixq" gru run --model "$tmp/q.fixq" --input "$tmp/ref/x.npy" --threads 5000 -o "$tmp/y.npy"
expect_fail "--scales must be pow2 or multiplier" "$fixq" gru quantize --model "$tmp/gru.safetensors" --calib "$tmp/ref/x.npy" \
  --scales pow3 -o "$tmp/x.fixq"
expect_fail "weight rounding 'adaround'" "$fixq" gru quantize --model "$tmp/gru.safetensors" --calib "$tmp/ref/x.npy" \
  --rounding adaround -o "$tmp/x.fixq"
expect_fail "--max-bits-cost needs --auto-bits" "$fixq" gru quantize --model "$tmp/gru.safetensors" --calib "$tmp/ref/x.npy" \
  --max-bits-cost 1.5 -o "$tmp/x.fixq"
expect_fail "target cosine must be in" "$fixq" gru quantize --model "$tmp/gru.safetensors" --calib "$tmp/ref/x.npy" \
  --auto-bits --target-cosine 2 -o "$tmp/x.fixq"
expect_fail "--method must be one of auto, minmax" "$fixq" gru quantize --model "$tmp/gru.safetensors" --calib "$tmp/ref/x.npy" \
  --method best -o "$tmp/x.fixq"
expect_fail "--calib: File does not exist" "$fixq" gru quantize --model "$tmp/gru.safetensors" --calib "$tmp/none.npy" -o "$tmp/x.fixq"
"$py" "$root/tools/export_gru.py" --out "$tmp/other.safetensors" --input-size 6 --hidden-size 8 --seed 6 >/dev/null
expect_fail "not a quantization of" "$fixq" gru eval --model "$tmp/q.fixq" --float "$tmp/other.safetensors" --input "$tmp/ref/x.npy"

# Progress: nothing on a pipe or in a log; a bar on a terminal (script(1) runs the command
# on a pseudo-terminal).
quantize=("$fixq" gru quantize --model "$tmp/gru.safetensors" --calib "$tmp/ref/x.npy" --calib-batch 1 -o "$tmp/p.fixq")
evaluate=("$fixq" gru eval --model "$tmp/p.fixq" --float "$tmp/gru.safetensors" --input "$tmp/ref/x.npy")
"${quantize[@]}" >"$tmp/out.txt" 2>"$tmp/err.txt"
"${evaluate[@]}" >>"$tmp/out.txt" 2>>"$tmp/err.txt"
[[ ! -s "$tmp/err.txt" ]] || { echo "progress written to a pipe:" >&2; cat -A "$tmp/err.txt" >&2; exit 1; }
! grep -q $'\r' "$tmp/out.txt" || { echo "carriage returns in piped output" >&2; exit 1; }
printf -v cmd '%q ' "${quantize[@]}"
script -qec "$cmd >/dev/null" /dev/null </dev/null >"$tmp/tty.txt"
printf -v cmd '%q ' "${evaluate[@]}"
script -qec "$cmd >/dev/null" /dev/null </dev/null >>"$tmp/tty.txt"
grep -q $'\rcalibrating .*\\[#*\\.*\\] *[0-9]*% 1/4' "$tmp/tty.txt" || { echo "no calibration bar on a terminal:" >&2; cat -A "$tmp/tty.txt" >&2; exit 1; }
grep -q $'\rcalibrating .* 100% 4/4' "$tmp/tty.txt" || { echo "calibration bar does not finish" >&2; cat -A "$tmp/tty.txt" >&2; exit 1; }
grep -q $'\revaluating .* 100% 4/4' "$tmp/tty.txt" || { echo "no evaluation bar on a terminal:" >&2; cat -A "$tmp/tty.txt" >&2; exit 1; }
echo "gru cli: ok"
