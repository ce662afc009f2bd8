#!/usr/bin/env bash
# docs/guide.md's commands work as written: every ```sh block (and every ```python block,
# with the build's Python package on PYTHONPATH) is run, in order, as a user would run it
# from the repository root, in a scratch directory where build/bin/fixq is the binary under
# test and tools/ is the repository's tools/. A failing command fails the test (shell
# blocks run under bash -euo pipefail). Then the guide's claims about the results are
# checked: the files it promises exist and the accuracy it quotes holds.
#   usage: guide_test.sh FIXQ_BINARY REPO_ROOT
set -euo pipefail
fixq=$(realpath "$1")
root=$(realpath "$2")
guide="$root/docs/guide.md"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/run/build/bin" "$tmp/blocks"
ln -s "$fixq" "$tmp/run/build/bin/fixq"
ln -s "$root/tools" "$tmp/run/tools"

# One file per ```sh or ```python block, numbered in order of appearance.
source "$root/tests/cli/doc_blocks.sh"
doc_blocks "$guide" "$tmp/blocks" sh python
blocks=("$tmp"/blocks/*)
[[ -e ${blocks[0]} ]] || { echo "guide_test: no \`\`\`sh blocks in $guide" >&2; exit 1; }
all=$(cat "$tmp"/blocks/*.sh)
# The Python package of this build (build/python, as the guide says), if it has one: the
# sanitizer builds have none, and there the Python blocks are skipped.
pydir=$(realpath -m "$(dirname "$fixq")/../python")
have_python=0
compgen -G "$pydir/fixq/_fixq*.so" >/dev/null && have_python=1
for needle in "torch.onnx.export" "build/bin/fixq gru quantize" "build/bin/fixq gru eval" "build/bin/fixq gru run" \
  "build/bin/fixq gru export-c" "build/bin/fixq model quantize" "build/bin/fixq model run" "--frames" "--raw" \
  "build/bin/fixq model info" "build/bin/fixq model eval"; do
  grep -qF -- "$needle" <<<"$all" || { echo "guide_test: the guide never runs '$needle'" >&2; exit 1; }
done

ran=0
for block in "${blocks[@]}"; do
  name=$(basename "$block")
  if [[ $block == *.python ]]; then
    if [[ $have_python == 0 ]]; then
      echo "guide_test: no Python package in $pydir, skipping block $name"
      continue
    fi
    run=(env PYTHONPATH="$pydir" /usr/bin/python3 "$block")
  else
    run=(bash -euo pipefail "$block")
  fi
  ran=$((ran + 1))
  run_block "guide_test: block $name of docs/guide.md" "$block" "$tmp/$name.log" "$tmp/run" "${run[@]}"
done

# The files the guide says it makes.
files=(gru.onnx ref/x.npy ref/y.npy calib.npy params.json gru.fixq gru16.fixq gru_mixed.fixq eval.html
  y_int.npy y_int_padded.npy mcu/kws.h mcu/kws.c mcu/y0.bin mcu/kws_m4.o mcu/tables.h mcu/cell1.tanh_g.npy)
files+=(widths.json gru_auto.fixq)
[[ $have_python == 0 ]] || files+=(gru_py.fixq gru_qat.fixq)
for f in "${files[@]}"; do
  [[ -s "$tmp/run/gru-work/$f" ]] || { echo "guide_test: gru-work/$f was not written" >&2; exit 1; }
done
# "Your whole model": the files, and what it says of them (eight operators; the integer
# runs frame by frame the same bytes, which its own cmp checks; raw outputs int8; int8 /
# pow2 at a cosine of about 0.99998 and SQNR about 45 dB, int16 / multiplier 1.000000 and
# above 60 dB).
for f in denoiser.onnx calib.npy x.npy denoiser8.fixq denoiser16.fixq float/gain.npy float/vad.npy int8/gain.npy \
  int8/vad.npy int8_frames/gain.npy int8_raw/gain.npy int8_raw/vad.npy; do
  [[ -s "$tmp/run/model-work/$f" ]] || { echo "guide_test: model-work/$f was not written" >&2; exit 1; }
done
/usr/bin/python3 - "$tmp" <<'PY'
import glob, re, sys
import numpy as np

tmp = sys.argv[1]
logs = "".join(open(f).read() for f in sorted(glob.glob(f"{tmp}/*.sh.log")))
assert "float model model-work/denoiser.onnx: 8 operators" in logs, "model info does not list 8 operators"
evals = re.findall(r"^(gain|vad)\s+(\d\.\d+)\s+(\d+\.\d+)\s+\d+\.\d+$", logs, re.M)
assert len(evals) == 4, evals
for name, cos, sqnr in evals[:2]:
    assert float(cos) >= 0.99995 and 40 <= float(sqnr) <= 50, ("int8", name, cos, sqnr)
for name, cos, sqnr in evals[2:]:
    assert float(cos) >= 0.9999995 and float(sqnr) > 60, ("int16", name, cos, sqnr)
raw = np.load(f"{tmp}/run/model-work/int8_raw/gain.npy")
assert raw.dtype == np.int8, raw.dtype
PY

# The accuracy the guide quotes (about 30 dB for int8 / pow2, 50 dB for int16 /
# multiplier), with a margin, and padded outputs exactly 0 as it says.
sqnr=($(cat "$tmp"/*.sh.log | sed -n 's/^output vs float: .*SQNR \([0-9.]*\) dB.*/\1/p'))
[[ ${#sqnr[@]} -eq 2 ]] || { echo "guide_test: expected two eval results, got '${sqnr[*]}'" >&2; exit 1; }
/usr/bin/python3 - "${sqnr[0]}" "${sqnr[1]}" "$tmp/run/gru-work" <<'PY'
import sys
import numpy as np

int8, int16, work = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
assert 26 <= int8 <= 35, f"int8 / pow2 SQNR {int8} dB is not 'about 30 dB' as the guide says"
assert 44 <= int16 <= 56, f"int16 / multiplier SQNR {int16} dB is not 'about 50 dB' as the guide says"
full, padded = np.load(f"{work}/y_int.npy"), np.load(f"{work}/y_int_padded.npy")
lengths = np.load(f"{work}/lengths.npy")
for b, n in enumerate(lengths):
    assert np.all(padded[n:, b] == 0), f"item {b}: padded steps are not 0"
    assert np.array_equal(padded[:n, b], full[:n, b]), f"item {b}: real steps differ from the unpadded run"
PY
echo "guide: $ran of ${#blocks[@]} blocks ok (SQNR int8 ${sqnr[0]} dB, int16 ${sqnr[1]} dB)"
