#!/usr/bin/env bash
# The Cortex-M4 footprint of `fixq gru export-c`'s C (README's table): the embedded char-LM
# (data/charlm, 64 -> 128) and random GRUs with a keyword spotter's 40 features and
# H = 64, 128, 256, each int8 / pow2 and int16 / multiplier, compiled with
# arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -Os -DKWS_NO_FLOAT (integer-only, as on a part
# that quantizes its features itself). Prints a Markdown table:
#   flash = text + data of kws.o (code, weights, tables, constants);
#   static RAM = data + bss (the generated code keeps no state of its own);
#   state = sizeof(kws_state), owned by the caller;
#   stack = the sum of every function's frame (-fstack-usage), an upper bound of kws_step's.
#   usage: tools/export_c_sizes.sh [FIXQ_BINARY]   (from the repository root; default build/bin/fixq)
set -euo pipefail
fixq=$(realpath "${1:-build/bin/fixq}")
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3

"$py" - "$root/data/charlm" "$tmp" <<'PY'
import sys
import numpy as np
import torch
d, out = sys.argv[1], sys.argv[2]
torch.save({k: torch.from_numpy(np.load(f"{d}/gru.{k}.npy")) for k in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")},
           f"{out}/charlm.pt")
emb, calib = np.load(f"{d}/embedding.npy"), np.load(f"{d}/calib_ids.npy")
T = len(calib) // 8
np.save(f"{out}/charlm_calib.npy", np.ascontiguousarray(emb[calib[: 8 * T]].reshape(8, T, -1).transpose(1, 0, 2)))
PY
"$py" tools/export_gru.py --state-dict "$tmp/charlm.pt" --out "$tmp/charlm.safetensors" >/dev/null
models=("charlm 64 128 $tmp/charlm.safetensors $tmp/charlm_calib.npy")
for H in 64 128 256; do
  "$py" tools/export_gru.py --out "$tmp/h$H.safetensors" --input-size 40 --hidden-size $H --seed $H \
    --reference "$tmp/h$H.ref" --seq-len 50 --batch 16 >/dev/null
  models+=("random 40 $H $tmp/h$H.safetensors $tmp/h$H.ref/x.npy")
done

echo "| model | C | H | config | flash (bytes) | static RAM | state (caller) | stack (bound) |"
echo "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |"
for m in "${models[@]}"; do
  read -r what C H model calib <<<"$m"
  for variant in "int8 pow2" "int16 multiplier"; do
    read -r config scales <<<"$variant"
    dir="$tmp/$what$H$config"
    mkdir -p "$dir"
    "$fixq" gru quantize --model "$model" --calib "$calib" --config $config --scales $scales -o "$dir/m.fixq" >/dev/null
    "$fixq" gru export-c --model "$dir/m.fixq" -o "$dir" --name kws >/dev/null
    (cd "$dir" && arm-none-eabi-gcc -std=c99 -mcpu=cortex-m4 -mthumb -Os -DKWS_NO_FLOAT -fstack-usage -c kws.c -o kws.o)
    read -r text data bss < <(arm-none-eabi-size "$dir/kws.o" | awk 'NR == 2 {print $1, $2, $3}')
    stack=$(awk '{s += $2} END {print s}' "$dir/kws.su")
    hbytes=$([[ $config == int8 ]] && echo 1 || echo 2)
    echo "| $what | $C | $H | $config / $scales | $((text + data)) | $((data + bss)) | $((H * hbytes)) | $stack |"
  done
done
echo
echo "arm-none-eabi-gcc $(arm-none-eabi-gcc -dumpversion), -mcpu=cortex-m4 -mthumb -Os -DKWS_NO_FLOAT"
