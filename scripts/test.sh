#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the whole test suite.
#   scripts/test.sh             Release build in build/
#   scripts/test.sh --sanitize  ASan + UBSan build in build-sanitize/ (benchmarks not built)
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ ${1:-} == --sanitize ]]; then
  export FIXQ_BUILD_DIR=build-sanitize
  # No CUDA part: the sanitizers see only host code, nvcc's device code is compute-sanitizer's
  # (scripts/gpu_check.sh), and the Release build already compiles and tests the part.
  export FIXQ_CMAKE_ARGS="-DFIXQ_SANITIZE=ON -DFIXQ_BUILD_BENCH=OFF -DFIXQ_CUDA=OFF"
  # Any report is a failure; leaks too.
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
bash scripts/setup.sh
build_dir=${FIXQ_BUILD_DIR:-build}
ctest --test-dir "$build_dir" --output-on-failure --parallel "$(nproc)"
