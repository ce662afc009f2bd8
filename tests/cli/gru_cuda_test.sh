#!/usr/bin/env bash
# `fixq gru run --device cuda` and the GPU lines of `fixq info`, in whichever of the three
# worlds this build and machine are:
#   no CUDA part in the build  - info says "not built"; --device cuda fails in one line;
#   no usable GPU              - info says why; --device cuda fails in one line naming it;
#   a GPU                      - info names it and its kernels; the GPU's outputs equal the
#                                CPU's byte for byte (int8 and int16, two bidirectional layers,
#                                ragged lengths, batch-first).
# A failed run leaves no output file, and an older file of that name untouched.
#   usage: gru_cuda_test.sh FIXQ_BINARY REPO_ROOT
set -euo pipefail
fixq=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=${FIXQ_PYTHON:-/usr/bin/python3}  # gpu_check.sh points it at the GPU image's python3 (numpy, torch)
source "$root/tests/cli/expect_fail.sh"

"$fixq" info >"$tmp/info.txt"
grep -q '^cuda ' "$tmp/info.txt" || { echo "fixq info has no cuda line" >&2; cat "$tmp/info.txt" >&2; exit 1; }
# The line that says why no GPU runs fixq's kernels here, if one does; else the first GPU's.
cuda_line=$(grep -E '^cuda +(not built|unavailable:|unusable:)' "$tmp/info.txt" | head -1 || true)
no_gpu=$([[ -n $cuda_line ]] && echo 1 || echo 0)
[[ $no_gpu == 1 ]] || cuda_line=$(grep '^cuda ' "$tmp/info.txt" | head -1)

"$py" "$root/tools/export_gru.py" --out "$tmp/gru.safetensors" --input-size 5 --hidden-size 20 --layers 2 \
  --bidirectional --seed 3 --reference "$tmp/ref" --seq-len 16 --batch 6 >/dev/null
"$py" -c "import numpy as np; np.save('$tmp/len.npy', np.array([16, 3, 0, 9, 16, 1], dtype=np.int64))"
"$py" -c "import numpy as np; np.save('$tmp/xbf.npy', np.ascontiguousarray(np.load('$tmp/ref/x.npy').transpose(1, 0, 2)))"

# A float model is a one-line error whatever the build.
expect_fail "runs quantized models" "$fixq" gru run --model "$tmp/gru.safetensors" --input "$tmp/ref/x.npy" \
  -o "$tmp/y.npy" --device cuda
[[ ! -e $tmp/y.npy ]]

"$fixq" gru quantize --model "$tmp/gru.safetensors" --calib "$tmp/ref/x.npy" --config int8 -o "$tmp/q8.fixq" >/dev/null
"$fixq" gru quantize --model "$tmp/gru.safetensors" --calib "$tmp/ref/x.npy" --config int16 --scales multiplier \
  -o "$tmp/q16.fixq" >/dev/null

if [[ $no_gpu == 1 ]]; then
  if [[ $cuda_line == *"not built"* ]]; then
    needle="built without its CUDA part"
  else
    needle=${cuda_line#*: }  # the reason info gives, word for word
    needle=${needle:0:60}
  fi
  echo "old" >"$tmp/old.npy"
  expect_fail "$needle" "$fixq" gru run --model "$tmp/q8.fixq" --input "$tmp/ref/x.npy" -o "$tmp/y.npy" --device cuda
  [[ ! -e $tmp/y.npy ]] || { echo "a failed --device cuda run left $tmp/y.npy" >&2; exit 1; }
  expect_fail "$needle" "$fixq" gru run --model "$tmp/q8.fixq" --input "$tmp/ref/x.npy" -o "$tmp/old.npy" --device cuda
  [[ $(cat "$tmp/old.npy") == old ]] || { echo "a failed --device cuda run touched an existing output" >&2; exit 1; }
  expect_fail "$needle" "$fixq" bench gru --device cuda --quick
  expect_fail "$needle" "$fixq" bench gemm --device cuda --quick
  echo "gru_cuda: no GPU here ($cuda_line); the failures are one line and leave no output"
  exit 0
fi

grep -q "GPU kernels in use" "$tmp/info.txt"
grep -q "cuda gru recurrence" "$tmp/info.txt"
for q in q8 q16; do
  for form in plain lengths batch_first; do
    args=(--input "$tmp/ref/x.npy")
    [[ $form == lengths ]] && args+=(--lengths "$tmp/len.npy")
    [[ $form == batch_first ]] && args=(--input "$tmp/xbf.npy" --batch-first --lengths "$tmp/len.npy")
    "$fixq" gru run --model "$tmp/$q.fixq" "${args[@]}" -o "$tmp/cpu.npy" >/dev/null
    "$fixq" gru run --model "$tmp/$q.fixq" "${args[@]}" -o "$tmp/gpu.npy" --device cuda >"$tmp/run.txt"
    grep -q " on " "$tmp/run.txt" || { echo "the run does not name its GPU:" >&2; cat "$tmp/run.txt" >&2; exit 1; }
    cmp "$tmp/cpu.npy" "$tmp/gpu.npy" || { echo "$q $form: GPU output differs from the CPU's" >&2; exit 1; }
  done
done
echo "gru_cuda: GPU outputs equal the CPU's byte for byte ($cuda_line)"
