#!/usr/bin/env bash
# Host step time of `fixq gru export-c`'s C beside the library's fast path and reference
# loop (tools/export_c_bench.cpp), for random GRUs with 40 inputs and H = 64, 128, 256,
# int8 / pow2 and int16 / multiplier. The generated C is built with gcc -O2 (no -march:
# what a user's build of the file gets); the library is build/'s Release libfixq.a.
# Prints CSV: C,H,config,us_export_c,us_stream,us_forward_fast,us_forward_reference.
#   usage: tools/bench_export_c.sh [T] [REPEATS]   (from the repository root, after a build)
set -euo pipefail
T=${1:-2000}
repeats=${2:-7}
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), library kernels: $(build/bin/fixq info 2>/dev/null | grep -m1 "^active" | tr -s " " || true)"
echo "C,H,config,us_export_c,us_stream,us_forward_fast,us_forward_reference"
for H in 64 128 256; do
  "$py" tools/export_gru.py --out "$tmp/h$H.safetensors" --input-size 40 --hidden-size $H --seed $H \
    --reference "$tmp/h$H.ref" --seq-len 50 --batch 16 >/dev/null
  for variant in "int8 pow2" "int16 multiplier"; do
    read -r config scales <<<"$variant"
    dir="$tmp/h$H$config"
    mkdir -p "$dir"
    build/bin/fixq gru quantize --model "$tmp/h$H.safetensors" --calib "$tmp/h$H.ref/x.npy" --config $config \
      --scales $scales -o "$dir/m.fixq" >/dev/null
    build/bin/fixq gru export-c --model "$dir/m.fixq" -o "$dir" --name kws >/dev/null
    gcc -std=c99 -O2 -c "$dir/kws.c" -o "$dir/kws.o"
    g++ -std=c++20 -O2 -I "$root/include" -I "$dir" "$root/tools/export_c_bench.cpp" "$dir/kws.o" "$root/build/lib/libfixq.a" \
      -lpthread -o "$dir/bench"
    printf '%s\n' "$("$dir/bench" "$dir/m.fixq" "$T" "$repeats" | sed "s/^\([0-9]*,[0-9]*\),/\1,$config\/$scales,/")"
  done
done
