#!/usr/bin/env bash
# fixq on 64-bit ARM without ARM hardware: installs Debian 12's cross toolchain, the arm64
# multiarch packages and qemu-user, cross-builds into build-aarch64/ (Release, the C++ tests;
# no Python package, benchmarks, ONNX import, CUDA or peers) and runs the C++ test binaries
# under qemu-aarch64, on two emulated CPUs:
#   -cpu max         every aarch64 family fixq has (neon, dotprod, i8mm, armbf16)
#   -cpu cortex-a72  Armv8.0: neon only
# Each run states which families the CPU must have (FIXQ_TEST_EXPECT_ISAS, checked by
# tests/cpu/families_test.cpp), and `fixq info` is run with every family forced through
# FIXQ_ISA (those the CPU lacks, and x86's, must be refused with a clear error).
#   bash scripts/test_aarch64.sh         every test binary on both CPUs
#   bash scripts/test_aarch64.sh --ci    the kernels' suites on -cpu max (each suite runs
#                                        every family the CPU has, forced one by one, so this
#                                        proves every kernel), test_cpu on both CPUs, and the
#                                        forced-family checks: the least time that proves
#                                        every kernel
# FIXQ_JOBS (default: nproc) caps the build's and the test runs' parallelism;
# FIXQ_AARCH64_NO_INSTALL=1 skips apt-get (the packages already installed).
# Run as root on Debian 12 (apt-get), from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=full
case "${1:-}" in
  "") ;;
  --ci) mode=ci ;;
  *) echo "usage: bash scripts/test_aarch64.sh [--ci]" >&2; exit 2 ;;
esac
njobs=${FIXQ_JOBS:-$(nproc)}
build=build-aarch64
start=$(date +%s)

# --- packages (Debian's only) ---
packages=(cmake ninja-build g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user libgtest-dev:arm64
  libcli11-dev nlohmann-json3-dev libsimde-dev)
if [[ ${FIXQ_AARCH64_NO_INSTALL:-0} != 1 ]]; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
fi

# --- cross build ---
cmake -S . -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
  -DCMAKE_BUILD_TYPE=Release -DFIXQ_BUILD_TESTS=ON -DFIXQ_BUILD_BENCH=OFF -DFIXQ_ONEDNN=OFF -DFIXQ_OPENBLAS=OFF \
  -DFIXQ_CUDA=OFF -DFIXQ_PYTHON=OFF -DFIXQ_ONNX=OFF >"$build.configure.log" || {
  cat "$build.configure.log"
  exit 1
}
if [[ $mode == ci ]]; then
  targets=(fixq_cli test_cpu test_gemm test_quant test_lowp test_bf16 test_weightonly test_gguf test_gru)
else
  targets=(all)
fi
cmake --build "$build" -j "$njobs" --target "${targets[@]}"
built=$(date +%s)

failures=0
# No object holds an instruction beyond its family (the same as ctest's cpu.isa_objects).
if python3 tests/cpu/isa_objects_check_aarch64.py "$build/tests/fixq_objects.txt" aarch64-linux-gnu-objdump \
  aarch64-linux-gnu-readelf aarch64-linux-gnu-g++; then
  echo "ok    object check"
else
  echo "FAIL  object check"; failures=$((failures + 1))
fi

qemu=(qemu-aarch64 -L /usr/aarch64-linux-gnu)
logs=$build/qemu-logs
rm -rf "$logs" && mkdir -p "$logs"
# The families each emulated CPU has (qemu 7.2).
declare -A expect=([max]=neon,dotprod,i8mm,armbf16 [cortex-a72]=neon)

# Left out under emulation, with the reason: qemu-user 7.2 aborts when a forked child of a
# multithreaded process starts a thread (assertion "cpu == current_cpu" in cpu-exec.c,
# exit 127; a 10-line program with std::thread and fork does the same), which is all that
# test does. It runs in every x86-64 suite.
qemu_excluded=ThreadPool.ForkedChildGetsWorkersOfItsOwn
# --ci also leaves out test_lowp's Exhaustive.* (every float32 pattern into every type,
# 2^32 scalar encodes per type: past 15 minutes under qemu on this 2-core VM); the full run
# keeps it, and the x86-64 suite runs it natively.
[[ $mode == ci ]] && qemu_excluded+=":Exhaustive.*"

# run_suite CPU BINARY [GTEST ARGS...]: one gtest binary under qemu, its log in $logs;
# FORCE_ISA=<family> runs it with FIXQ_ISA=<family>.
run_suite() {
  local cpu=$1 bin=$2
  shift 2
  local tag=${FORCE_ISA:+ FIXQ_ISA=$FORCE_ISA}
  local log=$logs/$(basename "$bin").$cpu${FORCE_ISA:+.$FORCE_ISA}.log
  if env QEMU_CPU="$cpu" FIXQ_TEST_EXPECT_ISAS="${expect[$cpu]}" ${FORCE_ISA:+FIXQ_ISA=$FORCE_ISA} \
    "${qemu[@]}" "$bin" --gtest_brief=1 --gtest_filter="-$qemu_excluded" "$@" >"$log" 2>&1; then
    echo "ok    $cpu$tag $(basename "$bin"): $(grep -h -E '^\[  PASSED  \]' "$log" | sed 's/\[  PASSED  \] //')$(grep -h -E '^\[  SKIPPED \] [0-9]' "$log" | sed 's/\[  SKIPPED \]/, skipped/')"
  else
    echo "FAIL  $cpu$tag $(basename "$bin") (log: $log)"
    tail -30 "$log"
    return 1
  fi
}

# runs "$@" in the background, at most $njobs at once.
spawn() {
  while (($(jobs -rp | wc -l) >= njobs)); do wait -n || failures=$((failures + 1)); done
  "$@" &
}

if [[ $mode == ci ]]; then
  kernel_suites=(test_cpu test_gemm test_quant test_lowp test_bf16 test_weightonly test_gguf test_gru)
  for s in "${kernel_suites[@]}"; do spawn run_suite max "$build/bin/$s"; done
  spawn run_suite cortex-a72 "$build/bin/test_cpu"
else
  for cpu in max cortex-a72; do
    for bin in "$build"/bin/test_*; do spawn run_suite "$cpu" "$bin"; done
  done
fi
while (($(jobs -rp | wc -l) > 0)); do wait -n || failures=$((failures + 1)); done

# --- every family forced through FIXQ_ISA, on both CPUs, through the tool ---
families=$(QEMU_CPU=max "${qemu[@]}" "$build/bin/fixq" info | sed -n 's/^\([a-z0-9]*\) *\(supported\|not supported\)$/\1/p')
for cpu in max cortex-a72; do
  for f in $families avx2 avx512; do
    out=$(QEMU_CPU=$cpu FIXQ_ISA=$f "${qemu[@]}" "$build/bin/fixq" info 2>&1) && rc=0 || rc=$?
    if [[ ,scalar,${expect[$cpu]}, == *,$f,* ]]; then
      if ((rc == 0)) && grep -q "forced" <<<"$out"; then
        echo "ok    $cpu FIXQ_ISA=$f: fixq info runs with it forced"
      else
        echo "FAIL  $cpu FIXQ_ISA=$f: fixq info (exit $rc)"; echo "$out"; failures=$((failures + 1))
      fi
      FORCE_ISA=$f run_suite "$cpu" "$build/bin/test_cpu" --gtest_filter='Families.*' ||
        failures=$((failures + 1))
    elif ((rc != 0)) && grep -q "fixq: error: FIXQ_ISA asks for the $f kernels" <<<"$out"; then
      echo "ok    $cpu FIXQ_ISA=$f: refused ($(grep -o 'a family of [a-z0-9_]*\|this CPU does not support them' <<<"$out"))"
    else
      echo "FAIL  $cpu FIXQ_ISA=$f: expected a clear error (exit $rc)"; echo "$out"; failures=$((failures + 1))
    fi
  done
done

end=$(date +%s)
echo "aarch64 ($mode): build $((built - start)) s, emulated tests $((end - built)) s, total $((end - start)) s"
if ((failures)); then
  echo "aarch64: $failures failure(s); logs in $logs" >&2
  exit 1
fi
echo "aarch64: all passed"
