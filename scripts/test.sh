#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the whole test suite.
#   scripts/test.sh             Release build in build/
#   scripts/test.sh --aarch64   the aarch64 cross build and its suite under qemu
#                               (scripts/test_aarch64.sh, which takes its own options after it)
#   scripts/test.sh --sanitize  ASan + UBSan build in build-sanitize/ with clang (benchmarks not
#                               built), which also builds the libFuzzer targets that
#                               `scripts/fuzz.sh --ci` then runs from the same objects
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == --aarch64 ]]; then exec bash scripts/test_aarch64.sh "${@:2}"; fi

if [[ ${1:-} == --sanitize ]]; then
  export FIXQ_BUILD_DIR=build-sanitize
  # clang, so that one build serves both the sanitized suite and the fuzz targets (libFuzzer
  # is clang's): CI compiled the library a third time for fuzzing before, 10 of its minutes.
  #   clang libclang-rt-dev llvm   the compiler, the sanitizer and libFuzzer runtimes, and
  #                                llvm-symbolizer for readable stacks
  source scripts/install_missing.sh
  install_missing test.sh clang libclang-rt-dev llvm
  export CC=clang CXX=clang++
  # No CUDA part: the sanitizers see only host code, nvcc's device code is compute-sanitizer's
  # (scripts/gpu_check.sh), and the Release build already compiles and tests the part.
  export FIXQ_CMAKE_ARGS="-DFIXQ_SANITIZE=ON -DFIXQ_FUZZ=ON -DFIXQ_BUILD_BENCH=OFF -DFIXQ_CUDA=OFF"
  # Any report is a failure; leaks too.
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
bash scripts/setup.sh
build_dir=${FIXQ_BUILD_DIR:-build}
ctest --test-dir "$build_dir" --output-on-failure --parallel "$(nproc)"
