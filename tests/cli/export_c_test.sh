#!/usr/bin/env bash
# `fixq gru export-c` and `fixq gru tables`, proven as issue 14 asks:
#  * the generated C compiles with gcc -std=c99 -Wall -Wextra -Werror -pedantic, and its
#    integer part (NAME_NO_FLOAT) with -mgeneral-regs-only, so it cannot hold a float
#    instruction; it includes only <stdint.h>, <stddef.h>, <string.h> and calls no function
#    but memcpy;
#  * for random models of every configuration (int8, int16, a JSON mix with a 16-bit W,
#    pow2 and multiplier scales, 1 to 3 layers, bidirectional) and for the embedded char-LM
#    (data/charlm), its outputs equal `fixq gru run`'s bit for bit, on inputs that saturate
#    too: on this machine, and cross-compiled for 32-bit ARM (armhf glibc) under qemu-arm;
#  * it also compiles for a Cortex-M4 (arm-none-eabi, newlib);
#  * the same model gives the same bytes; bad names and missing directories are one-line
#    errors; `tables` writes .npy files equal to the tables fixq uses, and C arrays.
#   usage: export_c_test.sh FIXQ_BINARY REPO_ROOT
set -euo pipefail
fixq=$(realpath "$1")
root=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3
source "$root/tests/cli/expect_fail.sh"

for tool in gcc arm-linux-gnueabihf-gcc qemu-arm arm-none-eabi-gcc; do
  command -v $tool >/dev/null || { echo "export_c_test: $tool is missing; run scripts/setup.sh (it installs it)" >&2; exit 1; }
done
strict=(-std=c99 -Wall -Wextra -Werror -pedantic)

# check_model NAME MODEL X.npy: export, compile three ways, compare with `fixq gru run`.
check_model() {
  local name=$1 model=$2 x=$3 dir="$tmp/$1"
  mkdir -p "$dir/c"
  "$fixq" gru run --model "$model" --input "$x" -o "$dir/y_fixq.npy" >/dev/null
  "$fixq" gru export-c --model "$model" -o "$dir/c" --name kws >/dev/null
  [[ $(ls "$dir/c") == $'kws.c\nkws.h' ]] || { echo "$name: export-c wrote $(ls "$dir/c")" >&2; exit 1; }
  # Only the three standard headers (and its own).
  local inc
  inc=$(grep -h '^#include' "$dir/c/kws.c" "$dir/c/kws.h" | sort -u | tr '\n' ' ')
  [[ $inc == '#include "kws.h" #include <stddef.h> #include <stdint.h> #include <string.h> ' ]] ||
    { echo "$name: unexpected includes: $inc" >&2; exit 1; }
  # Deterministic: a second export is byte-identical.
  mkdir -p "$dir/again"
  "$fixq" gru export-c --model "$model" -o "$dir/again" --name kws >/dev/null
  cmp -s "$dir/c/kws.c" "$dir/again/kws.c" && cmp -s "$dir/c/kws.h" "$dir/again/kws.h" ||
    { echo "$name: two exports of one model differ" >&2; exit 1; }
  # The integer part cannot contain a float instruction, and calls nothing but memcpy.
  gcc "${strict[@]}" -O2 -mgeneral-regs-only -DKWS_NO_FLOAT -c "$dir/c/kws.c" -o "$dir/int.o"
  local undefined
  undefined=$(nm -u "$dir/int.o" | awk '{print $2}' | sort -u | tr '\n' ' ')
  [[ -z $undefined || $undefined == 'memcpy ' ]] || { echo "$name: integer part calls $undefined" >&2; exit 1; }
  arm-none-eabi-gcc "${strict[@]}" -mcpu=cortex-m4 -mthumb -Os -c "$dir/c/kws.c" -o "$dir/m4.o"
  arm-none-eabi-gcc "${strict[@]}" -mcpu=cortex-m4 -mthumb -Os -DKWS_NO_FLOAT -c "$dir/c/kws.c" -o "$dir/m4_int.o"
  # Host and armhf builds of the driver; no -lm anywhere.
  gcc "${strict[@]}" -O2 -I "$dir/c" "$root/tests/cli/export_c_driver.c" "$dir/c/kws.c" -o "$dir/host"
  arm-linux-gnueabihf-gcc "${strict[@]}" -O2 -I "$dir/c" "$root/tests/cli/export_c_driver.c" "$dir/c/kws.c" -o "$dir/arm"
  local T B
  read -r T B < <("$py" -c "
import numpy as np, sys
x = np.load('$x'); x.astype('<f4').tofile('$dir/x.bin'); print(x.shape[0], x.shape[1])")
  "$dir/host" "$dir/x.bin" "$T" "$B" "$dir/y_host.bin"
  qemu-arm -L /usr/arm-linux-gnueabihf "$dir/arm" "$dir/x.bin" "$T" "$B" "$dir/y_arm.bin"
  "$py" - "$dir" "$name" <<'PY'
import sys
import numpy as np
d, name = sys.argv[1], sys.argv[2]
want = np.load(f"{d}/y_fixq.npy")
for target in ("host", "arm"):
    got = np.fromfile(f"{d}/y_{target}.bin", dtype="<f4")
    assert got.size == want.size, f"{name} {target}: {got.size} outputs, fixq has {want.size}"
    diff = np.flatnonzero(got.view("<u4") != want.ravel().view("<u4"))
    assert diff.size == 0, (f"{name} {target}: {diff.size} of {got.size} outputs differ from fixq gru run, "
                            f"first at {diff[0]}: {got[diff[0]]} vs {want.ravel()[diff[0]]}")
PY
  echo "$name: bit-exact on the host and on armhf (qemu), $T steps x $B sequences"
}

# Random models: export_gru.py's torch GRUs, calibrated on their own reference input;
# the test input has every fifth feature scaled by 40 and a few +-1e6, so x and the
# operators after it saturate.
make_input() {  # make_input REF_DIR OUT.npy
  "$py" - "$1/x.npy" "$2" <<'PY'
import sys
import numpy as np
x = np.load(sys.argv[1]).astype(np.float32)
x[..., ::5] *= 40
x[3, 0, 0], x[5, -1, -1], x[7, 0, -1] = 1e6, -1e6, 3e38
np.save(sys.argv[2], x)
PY
}
cat >"$tmp/mixed.json" <<'EOF'
{"version": 1, "base": "int8", "scales": "multiplier", "bits": {"W": 16, "g_pre": 16, "h": 16, "z_out": 16}}
EOF
cat >"$tmp/mixed_pow2.json" <<'EOF'
{"version": 1, "base": "int16", "scales": "pow2", "bits": {"x": 8, "R": 8, "r_pre": 8, "new_contrib": 8}}
EOF
# name  layers  bidirectional  config  scales  input  hidden  seed
cases="int8_pow2 1 0 int8 pow2 7 9 1
int16_multiplier 2 0 int16 multiplier 5 8 2
mixed_multiplier 2 0 $tmp/mixed.json multiplier 6 7 3
mixed_pow2_3layers 3 0 $tmp/mixed_pow2.json pow2 4 6 4
int8_multiplier_bidi 2 1 int8 multiplier 5 6 5
int16_pow2_bidi 1 1 int16 pow2 3 5 6"
while read -r name layers bidi config scales C H seed; do
  flags=(--input-size "$C" --hidden-size "$H" --layers "$layers" --seed "$seed")
  [[ $bidi == 1 ]] && flags+=(--bidirectional)
  "$py" "$root/tools/export_gru.py" --out "$tmp/$name.safetensors" "${flags[@]}" --reference "$tmp/$name.ref" \
    --seq-len 24 --batch 3 >/dev/null
  "$fixq" gru quantize --model "$tmp/$name.safetensors" --calib "$tmp/$name.ref/x.npy" --config "$config" \
    --scales "$scales" -o "$tmp/$name.fixq" >/dev/null
  make_input "$tmp/$name.ref" "$tmp/$name.x.npy"
  check_model "$name" "$tmp/$name.fixq" "$tmp/$name.x.npy"
done <<<"$cases"

# The primitives (RSHR, A with its 128-bit path, quantize with exact ties) against the
# spec's worked examples and exact Python arithmetic, on the host and on armhf.
"$py" "$root/tests/cli/export_c_primitives.py" "$root/docs/spec.md" "$tmp/int16_multiplier/c/kws.c" >"$tmp/prim.c"
gcc "${strict[@]}" -O2 "$tmp/prim.c" -o "$tmp/prim"
arm-linux-gnueabihf-gcc "${strict[@]}" -O2 "$tmp/prim.c" -o "$tmp/prim_arm"
"$tmp/prim" >"$tmp/prim.txt" || { echo "primitives on the host:" >&2; cat "$tmp/prim.txt" >&2; exit 1; }
echo "primitives, host: $(tail -1 "$tmp/prim.txt")"
qemu-arm -L /usr/arm-linux-gnueabihf "$tmp/prim_arm" >"$tmp/prim.txt" ||
  { echo "primitives on armhf:" >&2; cat "$tmp/prim.txt" >&2; exit 1; }
echo "primitives, armhf: $(tail -1 "$tmp/prim.txt")"

# The embedded char-LM (data/charlm): its GRU through tools/export_gru.py, calibrated on
# its calibration text as `fixq demo` does, run on 400 held-out characters.
"$py" - "$root/data/charlm" "$tmp" <<'PY'
import sys
import numpy as np
import torch
d, out = sys.argv[1], sys.argv[2]
w = {k: torch.from_numpy(np.load(f"{d}/gru.{k}.npy")) for k in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")}
torch.save(w, f"{out}/charlm_gru.pt")
emb = np.load(f"{d}/embedding.npy")
calib = np.load(f"{d}/calib_ids.npy")
T = len(calib) // 8
np.save(f"{out}/charlm_calib.npy", np.ascontiguousarray(emb[calib[: 8 * T]].reshape(8, T, -1).transpose(1, 0, 2)))
np.save(f"{out}/charlm_x.npy", emb[np.load(f"{d}/heldout_ids.npy")[:400]][:, None, :].astype(np.float32))
PY
"$py" "$root/tools/export_gru.py" --state-dict "$tmp/charlm_gru.pt" --out "$tmp/charlm.safetensors" >/dev/null
for variant in "int8 pow2 mse" "int16 multiplier minmax"; do
  read -r config scales method <<<"$variant"
  "$fixq" gru quantize --model "$tmp/charlm.safetensors" --calib "$tmp/charlm_calib.npy" --config $config --scales $scales \
    --method $method -o "$tmp/charlm_$config.fixq" >/dev/null
  check_model "charlm_${config}_$scales" "$tmp/charlm_$config.fixq" "$tmp/charlm_x.npy"
done

# Another name gives other symbols and files; the names of the issue's API are there.
mkdir -p "$tmp/named"
"$fixq" gru export-c --model "$tmp/int8_pow2.fixq" -o "$tmp/named" --name vad2 >/dev/null
[[ $(ls "$tmp/named") == $'vad2.c\nvad2.h' ]]
for sym in VAD2_INPUT_SIZE VAD2_HIDDEN_SIZE vad2_x_t vad2_h_t 'struct vad2_state' 'void vad2_reset(vad2_state\* s)' \
  'void vad2_step(vad2_state\* s, const vad2_x_t\* x_q, vad2_h_t\* h_q)' 'void vad2_quantize_x(const float\* x, vad2_x_t\* x_q)' \
  'void vad2_dequantize_h(const vad2_h_t\* h_q, float\* h)'; do
  grep -q "$sym" "$tmp/named/vad2.h" || { echo "vad2.h lacks '$sym'" >&2; exit 1; }
done
gcc "${strict[@]}" -c "$tmp/named/vad2.c" -o "$tmp/named/vad2.o"

# Bad input: one line on stderr, nothing written.
mkdir -p "$tmp/bad"
expect_fail "is not a C identifier" "$fixq" gru export-c --model "$tmp/int8_pow2.fixq" -o "$tmp/bad" --name 2fast
expect_fail "is not a C identifier" "$fixq" gru export-c --model "$tmp/int8_pow2.fixq" -o "$tmp/bad" --name kws-v2
expect_fail "is a C (or C++) keyword" "$fixq" gru export-c --model "$tmp/int8_pow2.fixq" -o "$tmp/bad" --name static
expect_fail "reserved" "$fixq" gru export-c --model "$tmp/int8_pow2.fixq" -o "$tmp/bad" --name _kws
touch "$tmp/bad/a_file"
expect_fail "a_file exists and is not a directory" "$fixq" gru export-c --model "$tmp/int8_pow2.fixq" -o "$tmp/bad/a_file" --name kws
expect_fail "not a fixq quantized GRU" "$fixq" gru export-c --model "$tmp/int8_pow2.safetensors" -o "$tmp/bad"
expect_fail "a_file exists and is not a directory" "$fixq" gru tables --model "$tmp/int8_pow2.fixq" -o "$tmp/bad/a_file"
[[ $(ls "$tmp/bad") == a_file ]] || { echo "a failed export left files: $(ls "$tmp/bad")" >&2; exit 1; }

# -o names a directory that is not there yet: it is made, parents included.
"$fixq" gru export-c --model "$tmp/int8_pow2.fixq" -o "$tmp/new/mcu" --name kws >/dev/null
[[ $(ls "$tmp/new/mcu") == $'kws.c\nkws.h' ]] || { echo "export-c into a new directory wrote: $(ls "$tmp/new/mcu")" >&2; exit 1; }
"$fixq" gru tables --model "$tmp/int8_pow2.fixq" -o "$tmp/new/tables" >/dev/null
[[ -f $tmp/new/tables/tables.h ]] || { echo "tables into a new directory wrote: $(ls "$tmp/new/tables")" >&2; exit 1; }

# tables: one .npy per table, equal to the tables stored in the .fixq file (read here
# with an independent safetensors reader), and the same numbers in tables.h.
for model in int16_multiplier int8_multiplier_bidi; do
  mkdir -p "$tmp/tables_$model"
  "$fixq" gru tables --model "$tmp/$model.fixq" -o "$tmp/tables_$model" >/dev/null
  gcc "${strict[@]}" -x c -fsyntax-only - <<<"#include \"$tmp/tables_$model/tables.h\"
int main(void) { return (int)cell0_sig_z[0] + CELL0_SIG_Z_ENTRIES - CELL0_SIG_Z_ENTRIES; }"
  "$py" - "$tmp/$model.fixq" "$tmp/tables_$model" <<'PY'
import json, re, struct, sys
import numpy as np
path, d = sys.argv[1], sys.argv[2]
raw = open(path, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
assert header["__metadata__"]["fixq.version"] == "2"
names = sorted(k for k in header if re.match(r"cell\d+\.(sig_z|sig_r|tanh_g)$", k))
assert len(names) % 3 == 0 and names, names
text = open(f"{d}/tables.h").read()
for k in names:
    info = header[k]
    assert info["dtype"] == "I32", info
    a, b = info["data_offsets"]
    stored = np.frombuffer(raw[8 + n + a:8 + n + b], dtype="<i4")
    dumped = np.load(f"{d}/{k}.npy")
    assert dumped.dtype == np.int32 and np.array_equal(stored, dumped), k
    cname = k.replace(".", "_")
    body = re.search(r"static const int32_t " + cname + r"\[(\d+)\] = \{([^}]*)\}", text)
    assert body and int(body.group(1)) == stored.size, cname
    values = [int(v) if v.strip().lstrip("-").isdigit() else eval(v.replace("(", "").replace(")", ""))
              for v in body.group(2).split(",")]
    assert np.array_equal(np.array(values, dtype=np.int64), stored.astype(np.int64)), cname
print(f"tables: {len(names)} tables match the file")
PY
done
echo "export-c: every configuration bit-exact with fixq gru run on the host and armhf"
