#!/usr/bin/env bash
# The GPU part's checks, in one call on a machine with an NVIDIA GPU (the `device` tool's
# 16-core H100 machine: under 8 minutes), ending in one summary table:
#   1. the binaries: the carried bundle .gpu-bundle/ (scripts/gpu_bundle.sh makes it where
#      fixq is built; the machine then needs nothing of Debian's), else a build here with
#      all cores (needs CMake, nvcc and fixq's build dependencies);
#   2. the GPU tests (test_cuda: GPU against CPU bit for bit), none of them skipped;
#   3. `fixq gru run --device cuda` against the CPU through the CLI (tests/cli/gru_cuda_test.sh);
#   4. compute-sanitizer memcheck, racecheck and synccheck on EveryKernelOnce.*;
#   5. `fixq bench gru|gemm --device cuda` and their peers (bench/peers/, PyTorch) in the
#      same run on the same GPU.
# Exit status 1 on any mismatch, failed or skipped test, or sanitizer report; the speed
# targets are reported, not enforced. Outputs (logs, CSVs, the summary) go to $OUT if set,
# else to a temporary folder.
#   scripts/gpu_check.sh [--quick]     --quick: the benches' small shapes
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
quick=()
[[ ${1:-} == --quick ]] && quick=(--quick)
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
start=$(date +%s)
log() { echo "[gpu_check $(( $(date +%s) - start ))s] $*"; }
declare -A status

if [[ -x .gpu-bundle/bin/fixq && -x .gpu-bundle/bin/test_cuda ]]; then
  bin=$root/.gpu-bundle/bin
  export LD_LIBRARY_PATH=$root/.gpu-bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  log "using the carried bundle ($(cat .gpu-bundle/BUILT 2>/dev/null || echo 'no BUILT note'))"
else
  log "no bundle: building fixq_cli and test_cuda in build-gpu/ with $(nproc) cores"
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  if ! { cmake -S . -B build-gpu "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DFIXQ_CUDA=ON -DFIXQ_BUILD_TESTS=ON \
           -DFIXQ_BUILD_BENCH=OFF -DFIXQ_ONEDNN=OFF -DFIXQ_OPENBLAS=OFF -DFIXQ_PYTHON=OFF -DFIXQ_ONNX=OFF \
           >"$out/configure.log" 2>&1 &&
         cmake --build build-gpu --parallel "$(nproc)" --target fixq_cli test_cuda >"$out/build.log" 2>&1; }; then
    log "the build failed: $out/configure.log, $out/build.log"; tail -30 "$out/build.log" "$out/configure.log" 2>/dev/null
    exit 1
  fi
  bin=$root/build-gpu/bin
fi
# compute-sanitizer and nvidia-smi where CUDA images keep them, if the PATH lacks them.
export PATH=$PATH:/usr/local/cuda/bin:/usr/local/cuda/compute-sanitizer
nvidia-smi -L >"$out/gpu.txt" 2>&1 || true
log "$(head -1 "$out/gpu.txt")"

log "GPU tests"
FIXQ_SOURCE_DIR=$root "$bin/test_cuda" --gtest_brief=1 --gtest_output="xml:$out/tests.xml" >"$out/tests.log" 2>&1
status[tests]=$?
log "CLI --device cuda"
FIXQ_PYTHON=$(command -v python3) bash tests/cli/gru_cuda_test.sh "$bin/fixq" "$root" >"$out/cli.log" 2>&1
status[cli]=$?
grep -q "byte for byte" "$out/cli.log" || status[cli]=1  # the GPU branch, not the no-GPU one

for tool in memcheck racecheck synccheck; do
  log "compute-sanitizer $tool"
  extra=()
  [[ $tool == memcheck ]] && extra=(--leak-check full)
  [[ $tool == racecheck ]] && extra=(--racecheck-report all)
  compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 99 --print-limit 20 \
    "$bin/test_cuda" --gtest_filter='EveryKernelOnce.*' >"$out/sanitizer_$tool.log" 2>&1
  status[$tool]=$?
done

log "benches: fixq and its peers"
"$bin/fixq" bench gru --device cuda "${quick[@]}" >"$out/gru_fixq.csv" 2>"$out/gru_fixq.err"
status[bench_gru]=$?
python3 bench/peers/torch_gru_cuda.py "${quick[@]}" >"$out/gru_torch.csv" 2>"$out/gru_torch.err"
status[peer_gru]=$?
"$bin/fixq" bench gemm --device cuda "${quick[@]}" >"$out/gemm_fixq.csv" 2>"$out/gemm_fixq.err"
status[bench_gemm]=$?
python3 bench/peers/torch_int_mm.py "${quick[@]}" >"$out/gemm_torch.csv" 2>"$out/gemm_torch.err"
status[peer_gemm]=$?

log "done"
args=()
for k in "${!status[@]}"; do args+=("$k=${status[$k]}"); done
python3 scripts/gpu_summary.py "$out" "${args[@]}" | tee "$out/summary.txt"
exit "${PIPESTATUS[0]}"
