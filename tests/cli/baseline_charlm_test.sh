#!/usr/bin/env bash
# fixq.baselines charlm (python/fixq/baselines/charlm.py, the demo's PyTorch rows) scores
# torch's GRU on the embedded char-LM with the demo's protocol. Its float32 bpc must reproduce the training script's held-out figure
# (data/charlm/metrics.json, computed by tools/train_charlm.py's own evaluation, which the
# demo's float row also reproduces), which proves the protocol; torch's dynamic int8 GRU
# must stay close to it; bad options are one-line errors.
# The package is the build's (<build>/python, next to FIXQ_BINARY's bin/); `fixq demo`
# has no option to print only its float bpc, so FIXQ_BIN itself is not run here.
#   usage: baseline_charlm_test.sh FIXQ_BINARY REPO_ROOT
set -euo pipefail
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3
export PYTHONPATH
PYTHONPATH=$(realpath -m "$(dirname "$1")/../python")
if ! compgen -G "$PYTHONPATH/fixq/_fixq*.so" >/dev/null; then
  echo "baseline charlm: this build has no Python package (a sanitizer build); skipped"
  exit 77
fi
tool=(-m fixq.baselines charlm)

"$py" "${tool[@]}" --data "$root/data/charlm" --repeats 1 >"$tmp/out.json"
"$py" - "$tmp/out.json" "$root/data/charlm/metrics.json" <<'PY'
import json, math, sys
import torch
out = json.load(open(sys.argv[1]))  # fails on anything but one JSON document
want_bpc = json.load(open(sys.argv[2]))["heldout_bpc"]
assert out["torch_version"] == torch.__version__, out["torch_version"]
rows = out["rows"]
assert [(r["name"], r["engine"]) for r in rows] == [
    ("torch f32", None), ("torch dynamic int8", "onednn"), ("torch dynamic int8", "qnnpack")], rows
f32 = rows[0]
assert abs(f32["bpc"] - want_bpc) <= 1e-3, f"torch f32 bpc {f32['bpc']} vs training's held-out bpc {want_bpc}"
assert f32["cosine"] == 1.0 and f32["us_per_step"] > 0 and f32["forwards_timed"] == 1, f32
for r in rows[1:]:
    if "error" in r:
        # Only an engine this torch lacks may fail.
        assert r["engine"] not in torch.backends.quantized.supported_engines, r
        assert "bpc" not in r, r
        continue
    assert math.isfinite(r["bpc"]) and abs(r["bpc"] - f32["bpc"]) <= 0.1 * f32["bpc"], r
    # The int8 GRU is not the float one, and still close to it.
    assert 0.9 < r["cosine"] <= 1.0 and r["bpc"] != f32["bpc"], r
    assert r["us_per_step"] > 0 and r["forwards_timed"] == 1, r
assert any("error" not in r for r in rows[1:]), "no dynamic int8 row has numbers"
PY

# Bad input: one line on stderr naming what is wrong, nonzero exit.
expect_error() {  # expect_error STATUS PATTERN ARGS...
  local want=$1 pattern=$2 status=0
  shift 2
  "$py" "${tool[@]}" "$@" >"$tmp/stdout" 2>"$tmp/stderr" || status=$?
  [[ $status == "$want" ]] || { echo "args $*: exit $status, expected $want" >&2; exit 1; }
  [[ ! -s $tmp/stdout ]] || { echo "args $*: wrote to stdout on error" >&2; exit 1; }
  [[ $(wc -l <"$tmp/stderr") == 1 ]] || { echo "args $*: stderr is not one line:" >&2; cat "$tmp/stderr" >&2; exit 1; }
  grep -q -- "$pattern" "$tmp/stderr" || { echo "args $*: stderr lacks '$pattern':" >&2; cat "$tmp/stderr" >&2; exit 1; }
}
expect_error 2 "--repeats" --data "$root/data/charlm" --repeats 0
expect_error 2 "--repeats" --data "$root/data/charlm" --repeats five
expect_error 2 "the following arguments are required: --data" --repeats 1
expect_error 1 "$tmp/none/gru.weight_ih_l0.npy" --data "$tmp/none"
mkdir "$tmp/bad"
cp "$root"/data/charlm/*.npy "$root/data/charlm/vocab.json" "$tmp/bad/"
"$py" -c "import numpy as np, sys; np.save(sys.argv[1], np.zeros((85, 99), np.float32))" "$tmp/bad/decoder.weight.npy"
expect_error 1 "shapes do not fit" --data "$tmp/bad" --repeats 1
# The model is the first argument; a missing torch is exit status 3 and one line.
status=0
"$py" -m fixq.baselines nosuchmodel >"$tmp/stdout" 2>"$tmp/stderr" || status=$?
[[ $status == 2 ]] && grep -q "names a model (charlm" "$tmp/stderr" || { echo "unknown model: exit $status" >&2; cat "$tmp/stderr" >&2; exit 1; }
mkdir "$tmp/no_torch"
printf 'raise ModuleNotFoundError("No module named %s", name="torch")\n' "'torch'" >"$tmp/no_torch/torch.py"
status=0
PYTHONPATH=$tmp/no_torch:$PYTHONPATH "$py" "${tool[@]}" --data "$root/data/charlm" >"$tmp/stdout" 2>"$tmp/stderr" || status=$?
[[ $status == 3 && $(wc -l <"$tmp/stderr") == 1 ]] && grep -q "^torch is not importable by $py" "$tmp/stderr" ||
  { echo "no torch: exit $status:" >&2; cat "$tmp/stderr" >&2; exit 1; }
echo "baseline charlm: ok"
