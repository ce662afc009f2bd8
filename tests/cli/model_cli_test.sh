#!/usr/bin/env bash
# Whole models end to end through the CLI, as a user would: a torch model exported as ONNX
# (tools/example_model_onnx.py), run in float against torch, quantized with each config,
# run whole and frame by frame (the same bytes), as integers, evaluated, described; bad
# input is a one-line error with exit != 0 and writes nothing.
#   usage: model_cli_test.sh FIXQ_BINARY REPO_ROOT
set -euo pipefail
fixq=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3
# shellcheck source=expect_fail.sh
source "$root/tests/cli/expect_fail.sh"

"$py" "$root/tools/example_model_onnx.py" --out "$tmp/m.onnx" --input "$tmp/x.npy" --reference "$tmp/ref" --frames 24

# The float model: torch's outputs within 1e-4, the same bytes frame by frame.
"$fixq" model run --model "$tmp/m.onnx" --input "$tmp/x.npy" -o "$tmp/f" >/dev/null
"$fixq" model run --model "$tmp/m.onnx" --input x="$tmp/x.npy" --frames -o "$tmp/f_frames" >/dev/null
for out in gain vad; do
  cmp "$tmp/f/$out.npy" "$tmp/f_frames/$out.npy"
  "$py" - "$tmp/f/$out.npy" "$tmp/ref/$out.npy" <<'PY'
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
assert a.shape == b.shape and a.dtype == np.float32, (a.shape, b.shape, a.dtype)
err = float(np.abs(a.astype(np.float64) - b).max())
assert err <= 1e-4, f"{sys.argv[1]}: float model vs torch: max error {err}"
PY
done
"$fixq" model info "$tmp/m.onnx" >"$tmp/info.txt"
grep -q "^conv1d   /conv1/Conv: x \[B, T, 8\] .* kernel 3 dilation 1 groups 1" "$tmp/info.txt"
grep -q "^input   x \[B, T, 8\], layout BTC" "$tmp/info.txt"
[[ $(grep -c "^gru " "$tmp/info.txt") -eq 3 ]]

for config in int8 int16; do
  for scales in pow2 multiplier; do
    "$fixq" model quantize --model "$tmp/m.onnx" --calib "$tmp/x.npy" --config $config --scales $scales \
      -o "$tmp/q.fixq" >/dev/null
    "$fixq" model run --model "$tmp/q.fixq" --input "$tmp/x.npy" -o "$tmp/q" >/dev/null
    "$fixq" model run --model "$tmp/q.fixq" --input "$tmp/x.npy" --frames -o "$tmp/q_frames" >/dev/null
    "$fixq" model run --model "$tmp/q.fixq" --input "$tmp/x.npy" --raw -o "$tmp/q_raw" >/dev/null
    "$fixq" model run --model "$tmp/q.fixq" --input "$tmp/x.npy" --raw --frames -o "$tmp/q_raw_frames" >/dev/null
    "$fixq" model eval --model "$tmp/q.fixq" --float "$tmp/m.onnx" --input "$tmp/x.npy" >"$tmp/eval.txt"
    "$fixq" model info "$tmp/q.fixq" >"$tmp/qinfo.txt"
    grep -q "preset $config, scales $scales" "$tmp/qinfo.txt"
    for out in gain vad; do
      cmp "$tmp/q/$out.npy" "$tmp/q_frames/$out.npy"
      cmp "$tmp/q_raw/$out.npy" "$tmp/q_raw_frames/$out.npy"
      grep -q "^$out " "$tmp/eval.txt"
    done
    "$py" - "$tmp/q" "$tmp/f" "$tmp/q_raw" "$tmp/eval.txt" $config <<'PY'
import re, sys, numpy as np
q_dir, f_dir, raw_dir, eval_txt, config = sys.argv[1:]
text = open(eval_txt).read()
for out in ("gain", "vad"):
    q, f = np.load(f"{q_dir}/{out}.npy").astype(np.float64), np.load(f"{f_dir}/{out}.npy").astype(np.float64)
    cos = float(q.ravel() @ f.ravel() / np.linalg.norm(q) / np.linalg.norm(f))
    need = 0.9999 if config == "int16" else 0.999
    assert cos >= need, f"{config} {out}: cosine {cos} < {need}"
    # eval's numbers are those of these runs.
    m = re.search(rf"^{out} +([0-9.]+) +([0-9.]+) +([0-9.]+)$", text, re.M)
    assert m and abs(float(m.group(1)) - cos) < 2e-6, (m and m.group(0), cos)
    assert abs(float(m.group(3)) - float(np.abs(q - f).max())) < 2e-6, (m.group(0), float(np.abs(q - f).max()))
    raw = np.load(f"{raw_dir}/{out}.npy")
    assert raw.dtype == (np.int16 if config == "int16" else np.int8), raw.dtype
PY
done
done

# An input already quantized (int8, with the input's scale and zero point) gives the same integers.
"$fixq" model quantize --model "$tmp/m.onnx" --calib "$tmp/x.npy" -o "$tmp/q8.fixq" >/dev/null
"$fixq" model run --model "$tmp/q8.fixq" --input "$tmp/x.npy" --raw -o "$tmp/r1" >/dev/null
read -r scale zp < <("$fixq" model info "$tmp/q8.fixq" | sed -n 's/^input x: int8 scale \([0-9.e-]*\) zp \(-*[0-9]*\)$/\1 \2/p')
"$py" -c "
import numpy as np
x = np.load('$tmp/x.npy').astype(np.float64)
np.save('$tmp/xq.npy', np.clip(np.round(x / $scale) + $zp, -128, 127).astype(np.int8))"
"$fixq" model run --model "$tmp/q8.fixq" --input "$tmp/xq.npy" --raw -o "$tmp/r2" >/dev/null
cmp "$tmp/r1/gain.npy" "$tmp/r2/gain.npy"

# A keyword spotter reading the GRU's last state (h_n[-1] -> Linear -> softmax): its output is
# [B, K] as in the ONNX file, whole and --frames (the last step's posterior), float and int16.
"$py" - "$tmp" <<'PY'
import sys, numpy as np, torch
from torch import nn
tmp = sys.argv[1]
torch.manual_seed(5)
class Kws(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.gru, self.fc = nn.Conv1d(10, 16, 3), nn.GRU(16, 24, batch_first=True), nn.Linear(24, 6)
    def forward(self, x):  # [B, C, T]
        t = torch.relu(self.conv(nn.functional.pad(x, (2, 0))))
        _, h = self.gru(t.transpose(1, 2))
        return torch.softmax(self.fc(h[-1]), -1)
m = Kws().eval()
torch.onnx.export(m, (torch.randn(2, 10, 9),), f"{tmp}/kws.onnx", opset_version=13, input_names=["mfcc"],
                  output_names=["p"], dynamic_axes={"mfcc": {0: "B", 2: "T"}, "p": {0: "B"}})
x = torch.randn(3, 10, 21)
np.save(f"{tmp}/mfcc.npy", x.numpy())
with torch.no_grad():
    np.save(f"{tmp}/kws_ref.npy", m(x).numpy())
PY
"$fixq" model run --model "$tmp/kws.onnx" --input "$tmp/mfcc.npy" -o "$tmp/k" | grep -q "p.npy \[3, 6\]"
"$fixq" model run --model "$tmp/kws.onnx" --input "$tmp/mfcc.npy" --frames -o "$tmp/k_frames" >/dev/null
cmp "$tmp/k/p.npy" "$tmp/k_frames/p.npy"
"$fixq" model info "$tmp/kws.onnx" | grep -q "^output  p .*layout BC"
"$fixq" model quantize --model "$tmp/kws.onnx" --calib "$tmp/mfcc.npy" --config int16 -o "$tmp/kws.fixq" >/dev/null
"$fixq" model run --model "$tmp/kws.fixq" --input "$tmp/mfcc.npy" -o "$tmp/kq" >/dev/null
"$fixq" model run --model "$tmp/kws.fixq" --input "$tmp/mfcc.npy" --frames -o "$tmp/kq_frames" >/dev/null
cmp "$tmp/kq/p.npy" "$tmp/kq_frames/p.npy"
"$py" - "$tmp" <<'PY'
import sys, numpy as np
tmp = sys.argv[1]
ref, f, q = (np.load(f"{tmp}/{n}.npy").astype(np.float64) for n in ("kws_ref", "k/p", "kq/p"))
assert f.shape == ref.shape == q.shape == (3, 6), (f.shape, ref.shape, q.shape)
err = float(np.abs(f - ref).max())
assert err <= 1e-4, f"kws float vs torch: max error {err}"
cos = float(q.ravel() @ f.ravel() / np.linalg.norm(q) / np.linalg.norm(f))
assert cos >= 0.9999, f"kws int16: cosine {cos}"
PY

# Bad input: one line, exit != 0, nothing written.
expect_fail "is no graph input of the model" "$fixq" model run --model "$tmp/m.onnx" --input y="$tmp/x.npy" -o "$tmp/bad1"
expect_fail "--raw writes a quantized model's integers" "$fixq" model run --model "$tmp/m.onnx" --input "$tmp/x.npy" \
  --raw -o "$tmp/bad2"
expect_fail "needs a quantized model" "$fixq" model run --model "$tmp/m.onnx" --input "$tmp/xq.npy" -o "$tmp/bad3"
"$py" -c "import numpy as np; np.save('$tmp/x5.npy', np.zeros((2, 7, 5), np.float32))"
expect_fail "x" "$fixq" model run --model "$tmp/m.onnx" --input "$tmp/x5.npy" -o "$tmp/bad4"
head -c 200 "$tmp/m.onnx" >"$tmp/cut.onnx"
expect_fail "load_model_onnx: $tmp/cut.onnx" "$fixq" model info "$tmp/cut.onnx"
expect_fail "load_model_onnx" "$fixq" model quantize --model "$tmp/cut.onnx" --calib "$tmp/x.npy" -o "$tmp/bad5.fixq"
expect_fail "--config" "$fixq" model quantize --model "$tmp/m.onnx" --calib "$tmp/x.npy" --config int4 -o "$tmp/bad6.fixq"
# A file that is neither ONNX nor a quantized model is named by its kind (fixq::file_kind).
expect_fail "is a npy file; fixq model reads an ONNX model or a quantized model (model-quantized" \
  "$fixq" model run --model "$tmp/x.npy" --input "$tmp/x.npy" -o "$tmp/bad7"
# The second output's target is a directory: the run fails, and the first output (gain) is not
# written either, nor any staging file left (every output goes to a staging file first).
mkdir -p "$tmp/bad8/vad.npy"
expect_fail "bad8/vad.npy is a directory; it would be output 'vad'" \
  "$fixq" model run --model "$tmp/m.onnx" --input "$tmp/x.npy" -o "$tmp/bad8"
[[ $(ls -A "$tmp/bad8") == vad.npy ]] || { echo "model cli: a failed run left $(ls -A "$tmp/bad8")" >&2; exit 1; }
for f in bad1 bad2 bad3 bad4 bad5.fixq bad6.fixq bad7; do
  [[ ! -e "$tmp/$f" ]] || { echo "model cli: a failed command wrote $f" >&2; exit 1; }
done
echo "model cli: ok"
