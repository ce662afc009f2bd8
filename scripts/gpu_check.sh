#!/usr/bin/env bash
# The GPU part's checks in one call on a machine with an NVIDIA GPU (the device tool's H200:
# about 8 minutes of device time in all), ending in one summary table. Steps, in order, each
# under its own time limit (the caps below, which add up to the budget):
#   bundle     the carried binaries (.gpu-bundle/, made by scripts/gpu_bundle.sh where fixq
#              builds): complete, runnable, small enough to carry, built from the sources
#              here (a loud warning where not);
#   gpu        the GPU (nvidia-smi, fixq info);
#   tests      test_cuda: every GPU output against the CPU's, bit for bit, none skipped;
#   bench_*    `fixq bench gru|gemm --device cuda` and their PyTorch peers (bench/peers/);
#   cli        `fixq gru run --device cuda` against the CPU (tests/cli/gru_cuda_test.sh);
#   memcheck, racecheck, synccheck: compute-sanitizer on EveryKernelOnce.*.
# The benches come before the CLI and the sanitizers, so that a run cut short still has
# its numbers. After every step the summary ($OUT/summary.txt) and the logs ($OUT/logs.tgz)
# are rewritten: a run killed at any point reports what it did. $OUT gets at most 8 files
# (the device machine returns no more): summary.txt, the four bench CSVs and logs.tgz.
# The environment the bundle's binaries need (LD_LIBRARY_PATH) is given to each of their
# commands alone, never to the Python peers.
#
#   scripts/gpu_check.sh [--quick] [--bundle DIR] [--build] [--budget S]
#   scripts/gpu_check.sh --dry-run [--bundle DIR] [--stale-ok]
#   scripts/gpu_check.sh --sources-digest
# --quick: the benches' small shapes. --bundle: the binaries (default .gpu-bundle). --build:
# without a bundle, build fixq and test_cuda here first (needs CMake, nvcc, CLI11 and
# nlohmann-json; test_cuda only where GoogleTest and SIMDe are installed), outside the budget.
# --dry-run: every step's logic on a machine without a GPU (no GPU is used even where one
# is: the GPU steps report "skipped: no GPU"), and the checks of the bundle, of $OUT's file
# count and of the time budget; CI runs it (tests/cuda/gpu_check_dry_run_test.sh). A bundle
# built from other sources fails the dry run unless --stale-ok. --sources-digest: print the
# digest of the binaries' sources that gpu_bundle.sh records in BUILT.
# Outputs go to $OUT if set, else to a new temporary folder. Exit status: 0 every check
# passed; 1 a check failed (a GPU output differs from the CPU's, a test failed or was
# skipped on the GPU, a sanitizer report, a broken bundle, a test, CLI or sanitizer step over
# its time); 2 nothing failed but not everything ran (no GPU, no sanitizer support, a bench
# or peer cut off or a peer unable to run, out of time). The speed targets are reported, not
# enforced. Each step gets 5 s past its cap to die; give the device call timeout_s 570.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD

# The sources the bundle's binaries are compiled from, as one digest of every file's path
# and content. Computed from the files themselves, so that the device's copy of the tree,
# which has no .git, can compare it with the bundle's BUILT note.
sources_digest() {
  {
    find CMakeLists.txt cmake include src bench/CMakeLists.txt bench/cuda bench/compare tests/CMakeLists.txt \
      tests/cuda tests/support -type f ! -name '*.pyc' ! -path '*/__pycache__/*' -print0
    find tests -name '*.h' -type f -print0
  } 2>/dev/null | LC_ALL=C sort -zu | xargs -0 sha256sum | sha256sum | cut -c1-16
}

# The bundle step: complete, runnable, the sanitizers' filter selects tests, small enough to
# carry with the working tree (64 MiB travel in all). Run as its own process (--step
# bundle), so that it too is under a time limit.
check_bundle() {
  local bundle=$1 bin=$1/bin lib=$1/lib ok=1
  local run=(env "LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  [[ -x $bin/fixq ]] || { echo "missing: $bin/fixq"; ok=0; }
  # A build made here with --build lacks test_cuda where GoogleTest or SIMDe is missing:
  # then the benches and the CLI still run. A carried bundle always has it.
  [[ -x $bin/test_cuda || ${2:-} == built-here ]] || { echo "missing: $bin/test_cuda"; ok=0; }
  if ((!ok)); then
    echo "no complete bundle at $bundle: run scripts/gpu_bundle.sh where fixq builds (Debian 12 with its build"
    echo "dependencies and nvcc), then name .gpu-bundle in the device tool's carry; or pass --build"
    return 1
  fi
  "${run[@]}" "$bin/fixq" --version || { echo "the bundle's fixq does not run here"; ok=0; }
  if [[ -x $bin/test_cuda ]]; then
    local n
    n=$("${run[@]}" "$bin/test_cuda" --gtest_list_tests --gtest_filter='EveryKernelOnce.*' | grep -c '^  ')
    echo "test_cuda runs; the sanitizers' filter EveryKernelOnce.* selects $n tests"
    ((n >= 2)) || { echo "the sanitizers' filter selects too few tests"; ok=0; }
  else
    echo "no test_cuda in this build (no GoogleTest or SIMDe here): the tests and the sanitizers cannot run"
  fi
  echo "BUILT: $(head -1 "$bundle/BUILT" 2>/dev/null || echo 'no BUILT note')"
  if [[ ${2:-} == built-here ]]; then
    echo "built here with --build: nothing to carry"
    return $((!ok))
  fi
  local tree_kib bundle_kib
  bundle_kib=$(($(du -sb "$bundle" | cut -f1) / 1024))
  if git rev-parse --git-dir >/dev/null 2>&1; then
    # What git would send: tracked files and untracked ones it does not ignore.
    tree_kib=$(($(git ls-files -z --cached --others --exclude-standard | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1) / 1024))
  else
    tree_kib=0  # the device's copy of the tree, without .git: it has travelled already
  fi
  echo "the bundle is $((bundle_kib / 1024)) MiB and the working tree $((tree_kib / 1024)) MiB:" \
    "$(((bundle_kib + tree_kib) / 1024)) of the 64 MiB that travel"
  if ((bundle_kib + tree_kib > 64 * 1024)); then
    echo "too large to carry: the bundle and the working tree exceed 64 MiB"
    ok=0
  fi
  ((ok))
}

# The gpu step: what nvidia-smi and the bundle's fixq say of the GPU (--step gpu).
query_gpu() {
  local bundle=$1 smi
  smi=$(command -v nvidia-smi || echo /usr/local/nvidia/bin/nvidia-smi)
  "$smi" -L || echo "nvidia-smi: not found, or it failed"
  env "LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$bundle/bin/fixq" info | grep '^cuda'
}

if [[ ${1:-} == --step ]]; then
  case ${2:-} in
    bundle) check_bundle "$3" "${4:-}"; exit ;;
    gpu) query_gpu "$3"; exit ;;
  esac
  exit 1
fi

dry_run=0 quick=() bundle=$root/.gpu-bundle build=0 stale_ok=0 budget=465
while (($#)); do
  case $1 in
    --dry-run) dry_run=1 ;;
    --quick) quick=(--quick) ;;
    --bundle) bundle=$(cd "${2:?--bundle needs a folder}" 2>/dev/null && pwd || echo "$2"); shift ;;
    --build) build=1 ;;
    --stale-ok) stale_ok=1 ;;
    --budget) budget=${2:?--budget needs seconds}; shift ;;
    --sources-digest) sources_digest; exit 0 ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "gpu_check: unknown argument '$1' (see --help)" >&2; exit 1 ;;
  esac
  shift
done

out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
work=$(mktemp -d)  # logs and scratch: packed into $out/logs.tgz, never loose in $out
start=$(date +%s)
deadline=$((start + budget))
log() { echo "[gpu_check $(($(date +%s) - start))s] $*"; }

# The steps and their caps in seconds. The caps add up to the budget (checked below), so no
# step is cut short by the ones before it; the benches, the peers and the sanitizers need a
# GPU (gpu_step), the others run in either world.
steps=(bundle gpu tests bench_gru peer_gru bench_gemm peer_gemm cli memcheck racecheck synccheck)
declare -A cap=([bundle]=10 [gpu]=10 [tests]=130 [bench_gru]=40 [peer_gru]=45 [bench_gemm]=30 [peer_gemm]=30
  [cli]=45 [memcheck]=45 [racecheck]=45 [synccheck]=35)
# What a run leaves in $OUT, every file of it: the summary, the logs and each bench's CSV.
declare -A csv=([bench_gru]=gru_fixq.csv [peer_gru]=gru_torch.csv [bench_gemm]=gemm_fixq.csv [peer_gemm]=gemm_torch.csv)
outputs=(summary.txt logs.tgz "${csv[@]}")

# steps.tsv: one line per step, rewritten as it goes (name, cap, state, exit code, seconds,
# note); info.tsv: facts for the summary's head. gpu_summary.py reads both.
status=$work/steps.tsv
info=$work/info.tsv
: >"$info"
for s in "${steps[@]}"; do printf '%s\t%s\tpending\t\t\t\n' "$s" "${cap[$s]}"; done >"$status"
note() { printf '%s\t%s\n' "$1" "$2" >>"$info"; }
set_status() {  # name state rc seconds note
  awk -F'\t' -v OFS='\t' -v n="$1" -v st="$2" -v rc="$3" -v sec="$4" -v msg="$5" \
    '$1 == n {$3 = st; $4 = rc; $5 = sec; $6 = msg} {print}' "$status" >"$status.new" && mv "$status.new" "$status"
}

py=$(command -v python3 || true)
# The interpreter of the Python peers and of the CLI test's helpers (numpy, torch): the
# GPU image's python3 (first on its PATH); in a dry run Debian's, as every test here uses.
if ((dry_run)) && [[ -x /usr/bin/python3 ]]; then peer_py=/usr/bin/python3; else peer_py=${py:-python3}; fi
peer_py=${FIXQ_PYTHON:-$peer_py}

summarize() {
  if [[ -n $py ]]; then
    "$py" "$root/scripts/gpu_summary.py" "$work" "$out" >"$work/summary.txt" 2>"$work/summary.err" ||
      { echo "(gpu_summary.py failed: $(tail -1 "$work/summary.err"))"; cat "$status"; } >>"$work/summary.txt"
  else
    { echo "== fixq GPU check (no python3 for the table: the raw step states) =="; cat "$info" "$status"; } >"$work/summary.txt"
  fi
  cp "$work/summary.txt" "$out/summary.txt"
  # The logs, each cut to its last MiB: logs.tgz stays far under the 16 MiB a file may have.
  rm -rf "$work/logs" && mkdir -p "$work/logs"
  for f in "$work"/*.log "$work"/*.xml "$work"/*.tsv "$work"/*.txt; do
    [[ -f $f ]] && tail -c 1048576 "$f" >"$work/logs/$(basename "$f")"
  done
  tar -czf "$out/logs.tgz" -C "$work" logs 2>/dev/null
}

# run_step NAME STDOUT -- COMMAND...: COMMAND under the step's time limit (its cap, or what
# is left of the budget), stdout into STDOUT ('-': the step's log), stderr into the log.
run_step() {
  local name=$1 stdout=$2
  shift 3
  local left=$((deadline - $(date +%s)))
  if ((left < 5)); then
    set_status "$name" skipped "" "" "out of time: the budget of ${budget} s is spent"
    summarize
    return
  fi
  local limit=$((cap[$name] < left ? cap[$name] : left))
  [[ $stdout == - ]] && stdout=$work/$name.log
  set_status "$name" running "" "" "started at $(($(date +%s) - start)) s, limit $limit s"
  summarize
  log "$name (limit ${limit} s)"
  local t0 rc
  t0=$(date +%s)
  timeout --kill-after=5 "$limit" "$@" >"$stdout" 2>>"$work/$name.log"
  rc=$?
  local took=$(($(date +%s) - t0))
  if ((rc == 124 || rc == 137)); then
    set_status "$name" timeout "$rc" "$took" "stopped at its limit of $limit s"
  else
    set_status "$name" "done" "$rc" "$took" ""
  fi
  log "$name: exit $rc after ${took} s"
  summarize
}

skip_step() {  # name reason
  set_status "$1" skipped "" "" "$2"
  log "$1: skipped: $2"
}

# --- the plan's own checks: every step has a limit, and they fit the budget ---
total=0
for s in "${steps[@]}"; do total=$((total + cap[$s])); done
note budget "$budget"
note caps "$total"
note mode "$( ((dry_run)) && echo dry-run || echo gpu)"
note started "$(date -u +%Y-%m-%dT%H:%MZ)"
if ((total > budget)); then
  # A plan that cannot fit is this script's fault: reported, and nothing run.
  log "the steps' limits add up to ${total} s, over the budget of ${budget} s"
  note plan_error "the steps' limits add up to ${total} s, over the budget of ${budget} s"
  summarize
  cat "$out/summary.txt"
  exit 1
fi

# --- the binaries ---
bin=$bundle/bin
lib=$bundle/lib
stale=""
if [[ ! -x $bin/fixq && $build == 1 ]]; then
  log "no bundle at $bundle: building fixq and test_cuda in build-gpu/ with $(nproc) cores (outside the budget)"
  gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  timeout 900 cmake -S . -B build-gpu "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DFIXQ_CUDA=ON -DFIXQ_BUILD_TESTS=AUTO \
    -DFIXQ_BUILD_BENCH=OFF -DFIXQ_ONEDNN=OFF -DFIXQ_OPENBLAS=OFF -DFIXQ_PYTHON=OFF -DFIXQ_ONNX=OFF \
    >"$work/build.log" 2>&1 &&
    { targets=(fixq_cli) && grep -q 'test_cuda:' build-gpu/build.ninja && targets+=(test_cuda); true; } &&
    timeout 900 cmake --build build-gpu --parallel "$(nproc)" --target "${targets[@]}" >>"$work/build.log" 2>&1
  bundle=$root/build-gpu bin=$root/build-gpu/bin lib=$root/build-gpu/lib
  deadline=$(($(date +%s) + budget))  # the build is outside the budget
fi
note bundle "$bundle"
# The bundle's binaries with their libraries: an environment for their commands alone.
bundle_env=(env "LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")

if [[ -x $bin/fixq && $bundle != "$root/build-gpu" ]]; then
  built=$(head -1 "$bundle/BUILT" 2>/dev/null || echo "no BUILT note")
  note built "$built"
  want=$(awk '$1 == "sources" {print $2}' "$bundle/BUILT" 2>/dev/null)
  have=$(sources_digest)
  note sources "$have"
  if [[ -z $want ]]; then
    stale="the bundle's BUILT note records no sources digest: it may be older than these sources"
  elif [[ $want != "$have" ]]; then
    head_commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo "not known here")
    stale="the bundle was built from other sources than these (digest $want, here $have; HEAD $head_commit): its results are not this tree's"
  fi
  [[ -n $stale ]] && note stale "$stale"
fi
banner() {
  [[ -z $stale ]] && return
  echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
  echo "!!! WARNING: THE BUNDLE IS NOT HEAD: $stale"
  echo "!!! rebuild it (scripts/gpu_bundle.sh) and carry it again"
  echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
}
banner

run_step bundle - -- bash "$root/scripts/gpu_check.sh" --step bundle "$bundle" "$( [[ $bundle == "$root/build-gpu" ]] && echo built-here)"
bundle_ok=0
[[ $(awk -F'\t' '$1 == "bundle" {print $3 "/" $4}' "$status") == done/0 ]] && bundle_ok=1

# --- the GPU ---
no_gpu=""
if ((dry_run)); then
  no_gpu="dry run"
  skip_step gpu "no GPU: dry run"
elif ((!bundle_ok)); then
  no_gpu="no usable bundle"
  skip_step gpu "no usable bundle"
else
  run_step gpu - -- bash "$root/scripts/gpu_check.sh" --step gpu "$bundle"
  # fixq's own word: the first cuda line of `fixq info` says why where no GPU can run its kernels.
  why=$(grep -E '^cuda +(not built|unavailable:|unusable:)' "$work/gpu.log" | head -1 | sed -E 's/^cuda +//')
  [[ -n $why ]] && no_gpu=$why
  grep -q '^cuda ' "$work/gpu.log" || no_gpu=${no_gpu:-"fixq info names no GPU"}
  note gpu "$(grep -m1 '^GPU ' "$work/gpu.log" || grep -m1 '^cuda ' "$work/gpu.log" | sed -E 's/^cuda +//' || echo '?')"
fi
[[ -n $no_gpu ]] && note no_gpu "$no_gpu"

gpu_step() {  # name stdout -- command: a step that needs the GPU and the bundle
  local name=$1
  if ((!bundle_ok)); then skip_step "$name" "no usable bundle"; return; fi
  # The reason is in the gpu step's row and the summary's head; a dry run says it is one.
  if [[ -n $no_gpu ]]; then skip_step "$name" "no GPU$( ((dry_run)) && echo ': dry run' || echo ' (the gpu step says why)')"; return; fi
  run_step "$@"
}

have_tests=0
[[ -x $bin/test_cuda ]] && have_tests=1
# --- the GPU tests: run in either world (without a GPU the GPU tests report themselves
# skipped, and the host-side ones run); CUDA_VISIBLE_DEVICES empty keeps a dry run off a GPU ---
if ((bundle_ok && !have_tests)); then
  skip_step tests "no test_cuda in this build"
elif ((bundle_ok)); then
  tests_env=("${bundle_env[@]}" "FIXQ_SOURCE_DIR=$root")
  [[ -n $no_gpu ]] && tests_env+=("CUDA_VISIBLE_DEVICES=")
  run_step tests - -- "${tests_env[@]}" "$bin/test_cuda" --gtest_output="xml:$work/tests.xml"
else
  skip_step tests "no usable bundle"
fi

# --- the benches and their peers, same GPU, same run; the CSVs grow row by row ---
gpu_step bench_gru "$out/${csv[bench_gru]}" -- "${bundle_env[@]}" "$bin/fixq" bench gru --device cuda "${quick[@]}"
gpu_step peer_gru "$out/${csv[peer_gru]}" -- env PYTHONUNBUFFERED=1 "$peer_py" bench/peers/torch_gru_cuda.py "${quick[@]}"
gpu_step bench_gemm "$out/${csv[bench_gemm]}" -- "${bundle_env[@]}" "$bin/fixq" bench gemm --device cuda "${quick[@]}"
gpu_step peer_gemm "$out/${csv[peer_gemm]}" -- env PYTHONUNBUFFERED=1 "$peer_py" bench/peers/torch_int_mm.py "${quick[@]}"

# --- the CLI against the CPU: its test script has a no-GPU branch, which a dry run takes.
# fixq is handed over as a wrapper that gives the bundle's libraries to fixq alone, not to
# the Python the script also runs ---
if ((bundle_ok)); then
  wrapper=$work/fixq
  {
    echo '#!/usr/bin/env bash'
    echo '# The bundle'"'"'s fixq with its libraries, for this command alone (gpu_check.sh).'
    [[ -n $no_gpu ]] && echo 'export CUDA_VISIBLE_DEVICES='
    printf 'LD_LIBRARY_PATH=%q${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %q "$@"\n' "$lib" "$bin/fixq"
  } >"$wrapper"
  chmod +x "$wrapper"
  run_step cli - -- env FIXQ_PYTHON="$peer_py" bash tests/cli/gru_cuda_test.sh "$wrapper" "$root"
else
  skip_step cli "no usable bundle"
fi

# --- compute-sanitizer on the reduced set. API errors are not reported: the tests check
# every call and fail on one, and a cooperative launch the sanitizer's lower residency
# refuses is a handled fallback (issue 47 §12), not a fault ---
sanitizer=$(command -v compute-sanitizer || true)
for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  [[ -z $sanitizer && -x $c ]] && sanitizer=$c
done
note sanitizer "${sanitizer:-not found}"
for tool in memcheck racecheck synccheck; do
  if ((bundle_ok && !have_tests)) && [[ -z $no_gpu ]]; then
    skip_step "$tool" "no test_cuda in this build"
    continue
  fi
  if [[ -z $sanitizer ]] && ((bundle_ok)) && [[ -z $no_gpu ]]; then
    skip_step "$tool" "compute-sanitizer not found"
    continue
  fi
  extra=()
  [[ $tool == memcheck ]] && extra=(--leak-check full)
  [[ $tool == racecheck ]] && extra=(--racecheck-report all)
  gpu_step "$tool" - -- "${bundle_env[@]}" "$sanitizer" --tool "$tool" "${extra[@]}" --report-api-errors no \
    --error-exitcode 99 --print-limit 20 "$bin/test_cuda" --gtest_filter='EveryKernelOnce.*'
done

# --- what comes back: at most 8 files in $OUT, each under 16 MiB, plainly named; in a dry
# run, whose skipped benches wrote nothing, the files a GPU run writes are counted too ---
summarize
files=$( (find "$out" -type f -printf '%f\n'; printf '%s\n' "${outputs[@]}") | sort -u | wc -l)
big=$(find "$out" -type f -size +16M | wc -l)
odd=$(find "$out" -mindepth 1 | sed "s|^$out/||" | grep -cvE '^[A-Za-z0-9._-]+$')
out_ok=1
if ((files > 8 || big > 0 || odd > 0)); then
  out_ok=0
  note out_error "\$OUT holds or would hold $files files ($big over 16 MiB, $odd with other names): the device machine returns 8"
  summarize
fi
log "\$OUT ($out): $(find "$out" -type f -printf '%f '); a GPU run writes ${#outputs[@]} files: ${outputs[*]}"
((out_ok)) || log "too many or too large files in \$OUT: the device machine returns at most 8 of 16 MiB"

cat "$out/summary.txt"
banner
result=$(awk '/^RESULT:/ {print $2}' "$out/summary.txt")
if ((dry_run)); then
  if [[ $result == PASS ]] && ((out_ok && bundle_ok)) && { [[ -z $stale ]] || ((stale_ok)); }; then
    log "dry run passed"
    exit 0
  fi
  log "dry run FAILED$([[ -n $stale ]] && ((!stale_ok)) && echo ': the bundle is not these sources (--stale-ok to accept)')"
  exit 1
fi
((out_ok)) || exit 1
case $result in
  PASS) exit 0 ;;
  INCOMPLETE) exit 2 ;;
  *) exit 1 ;;
esac
