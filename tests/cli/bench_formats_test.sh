#!/usr/bin/env bash
# `fixq bench gguf --quick` and `fixq bench bf16 --quick` print the promised CSV (every GGUF
# type's dot and dequant rows with the kernel that ran, and the write ceiling; the bf16
# shapes and the peak line, also where oneDNN cannot run bf16), and quantize-stats has the
# bf16 row.
#   usage: bench_formats_test.sh FIXQ_BINARY REPO_ROOT
set -euo pipefail
fixq=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$fixq" bench gguf --quick >"$tmp/gguf.csv"
grep -qx 'op,type,kernel,gb_per_s' "$tmp/gguf.csv"
for type in q4_0 q4_1 q5_0 q5_1 q8_0 q2_K q3_K q4_K q5_K q6_K iq4_nl iq4_xs tq1_0 tq2_0 mxfp4 nvfp4; do
  grep -Eq "^dot,$type,(scalar|avx2|avx512|avx512vbmi|avx512bf16),[0-9.]+$" "$tmp/gguf.csv" ||
    { echo "bench gguf: no dot row for $type" >&2; cat "$tmp/gguf.csv" >&2; exit 1; }
done
for type in q4_0 q4_1 q5_0 q5_1 q8_0 q8_1 q2_K q3_K q4_K q5_K q6_K q8_K iq4_nl iq4_xs tq1_0 tq2_0 mxfp4 nvfp4; do
  grep -Eq "^dequant,$type,[a-z0-9]+,[0-9.]+$" "$tmp/gguf.csv" ||
    { echo "bench gguf: no dequant row for $type" >&2; exit 1; }
done
grep -Eq '^f32_write_peak_gb_per_s,[0-9.]+$' "$tmp/gguf.csv" ||
  { echo "bench gguf: no f32_write_peak_gb_per_s line" >&2; exit 1; }
FIXQ_ISA=scalar "$fixq" bench gguf --quick >"$tmp/scalar.csv"
grep -q '^dot,q4_0,scalar,' "$tmp/scalar.csv"

"$fixq" bench bf16 --quick >"$tmp/bf16.csv"
grep -qx 'M,N,K,fixq_gflops,onednn_gflops,ratio' "$tmp/bf16.csv"
grep -Eq '^16,3072,1024,[0-9.]+,[0-9.]*,[0-9.]*$' "$tmp/bf16.csv"
grep -Eq '^vdpbf16ps_peak_gflops,' "$tmp/bf16.csv"
# Where oneDNN has no bf16 matmul for the CPU (oneDNN 2.x: AVX-512 only; ONEDNN_MAX_CPU_ISA
# makes this one look like an AVX2 machine to it), fixq is timed alone and the bench says why.
if [[ ${FIXQ_PEER_ONEDNN:-0} == 1 ]]; then
  ONEDNN_MAX_CPU_ISA=AVX2 "$fixq" bench bf16 --quick >"$tmp/bf16_avx2.csv" ||
    { echo "bench bf16: failed where oneDNN has no bf16 matmul" >&2; cat "$tmp/bf16_avx2.csv" >&2; exit 1; }
  grep -q '^# oneDNN has no bf16 matmul on this CPU' "$tmp/bf16_avx2.csv"
  grep -Eq '^16,3072,1024,[0-9.]+,,$' "$tmp/bf16_avx2.csv"
fi

/usr/bin/python3 -c "import numpy as np; np.save('$tmp/w.npy', np.random.default_rng(1).standard_normal((64, 256), np.float32))"
"$fixq" quantize-stats --types q8_0,bf16 "$tmp/w.npy" >"$tmp/stats.txt"
# bf16 keeps 8 significant bits: |error| <= 2^-9 |x|, so rmse < 0.004 on unit normals.
grep -Eq '^bf16 +: rmse 0\.00[0-3][0-9]+, maxerr [0-9.]+, 95pct<[0-9.]+, median<[0-9.]+$' "$tmp/stats.txt" ||
  { echo "quantize-stats: no bf16 row" >&2; cat "$tmp/stats.txt" >&2; exit 1; }
echo "bench formats cli: ok"
