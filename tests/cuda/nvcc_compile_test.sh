#!/usr/bin/env bash
# Compiles tests/cuda/formulas_probe.cu with nvcc for sm_90, sm_80 and PTX: the formula
# headers (fixq/host_device.h) must compile as CUDA device code. Skipped (exit 77, which
# CTest reports as skipped) where no CUDA toolkit is installed, as on a fresh Debian 12.
#   nvcc_compile_test.sh REPO_ROOT [NVCC]
set -euo pipefail
root=$1
nvcc=${2:-}
if [[ -z $nvcc || ! -x $nvcc ]]; then
  nvcc=$(command -v nvcc || true)
  [[ -z $nvcc && -x /usr/local/cuda/bin/nvcc ]] && nvcc=/usr/local/cuda/bin/nvcc
fi
if [[ -z $nvcc ]]; then
  echo "SKIP: no CUDA toolkit (nvcc) found; the formula headers' device build is not checked here"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$nvcc" --version | tail -1
"$nvcc" -std=c++20 -Werror all-warnings -I"$root/include" -I"$root/src" -I"$root/tests" \
  -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_80,code=compute_80 \
  -c "$root/tests/cuda/formulas_probe.cu" -o "$out/probe.o"
# The fat binary holds the kernel (its mangled name) for the device targets.
grep -aq fixq_formulas_probe "$out/probe.o"
grep -aq sm_90 "$out/probe.o"
echo "nvcc compiled the formula headers for sm_90, sm_80 and PTX"
