#!/usr/bin/env bash
# Fuzzes fixq's model-file loaders with libFuzzer (tests/fuzz/, ASan + UBSan) and merges
# what is new into the committed corpora, tests/fuzz/corpus/<target>/, which the
# regression test test_fuzz_regression runs in every normal build.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#     SECONDS  fuzzing time per target (default 60); targets run one after another
#     TARGET   a tests/fuzz/<TARGET>_fuzz.cpp (default: every one of them, so that a new
#              loader's target joins CI's run by being added)
#   scripts/fuzz.sh --ci [SECONDS] [TARGET...]
#     CI's short run (default 20 s per target): fuzzes from the committed corpora without
#     writing to them (no merge, no minimizing: the clone stays as it was checked out),
#     and fails on any finding. Targets run side by side, one per core. What the run found
#     stays in <build>/fuzz/ (the log and the input, artifacts/<target>/crash-*, leak-*,
#     timeout-*, oom-*).
# Builds into build-fuzz/ (clang, RelWithDebInfo), or into FIXQ_FUZZ_BUILD_DIR where that
# names a build already configured with -DFIXQ_FUZZ=ON (.ci/run: build-sanitize/, whose
# objects `scripts/test.sh --sanitize` has just compiled); logs and crash inputs go to
# <build>/fuzz/. Exits 1 if any target found a crash, leak, hang or sanitizer report.
#
# Corpus files named by libFuzzer (40 hex digits, the SHA-1 of their bytes) are re-minimized
# on every run: after fuzzing, the smallest set that keeps all coverage is merged anew from
# them and the new inputs. Files named otherwise (seed-* from tests/fuzz/make_seeds.py,
# crash-* reproducers of fixed bugs) are always kept and never renamed.
set -euo pipefail
cd "$(dirname "$0")/.."

ci=0
if [[ ${1:-} == --ci ]]; then
  ci=1
  shift
fi
seconds=${1:-$((ci ? 20 : 60))}
[[ $seconds =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a number, got '$seconds'" >&2; exit 2; }
shift $(($# > 0 ? 1 : 0))
targets=("$@")
if ((${#targets[@]} == 0)); then
  for f in tests/fuzz/*_fuzz.cpp; do t=$(basename "$f" _fuzz.cpp); targets+=("$t"); done
fi
started=$(date +%s)

# Why each package (Debian 12):
#   clang libclang-rt-dev llvm   the compiler, libFuzzer and the sanitizer runtimes of the
#                                default clang, and llvm-symbolizer for readable stacks
#   cmake ... libprotobuf-dev    what configuring fixq needs (as scripts/setup.sh; no peers)
packages=(clang libclang-rt-dev llvm cmake ninja-build libgtest-dev libcli11-dev nlohmann-json3-dev libsimde-dev
          libonnx-dev libprotobuf-dev)
source scripts/install_missing.sh  # the scripts run from the repository root
install_missing fuzz.sh "${packages[@]}"

build=${FIXQ_FUZZ_BUILD_DIR:-build-fuzz}
if [[ $build != build-fuzz ]]; then
  grep -q '^FIXQ_FUZZ:BOOL=ON$' "$build/CMakeCache.txt" 2>/dev/null ||
    { echo "fuzz.sh: FIXQ_FUZZ_BUILD_DIR=$build is not a build configured with -DFIXQ_FUZZ=ON" >&2; exit 2; }
else
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFIXQ_FUZZ=ON \
    -DFIXQ_BUILD_TESTS=ON -DFIXQ_BUILD_BENCH=OFF -DFIXQ_ONEDNN=OFF -DFIXQ_OPENBLAS=OFF >/dev/null
fi
cmake --build "$build" --target $(printf 'fuzz_%s ' "${targets[@]}")
built=$(date +%s)

out=$build/fuzz
mkdir -p "$out"
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
# Any allocation beyond these limits is reported: a loader must check sizes against the
# file before it allocates.
limits=(-rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10)
# Inputs up to 16 KB: the seeds are far smaller; the crash-* reproducers of deep JSON are
# larger, but mutating those would only slow the search.
max_len=16384
is_libfuzzer_name() { [[ $(basename "$1") =~ ^[0-9a-f]{40}$ ]]; }

# Every corpus file's name, size and bytes, to prove that --ci left them as they were.
corpus_digest() { (cd tests/fuzz/corpus && find . -type f -print0 | sort -z | xargs -0 sha1sum) | sha1sum; }
((ci)) && before=$(corpus_digest)

# One target's fuzzing; its exit status goes to $out/$t.status, its report to stderr.
fuzz_one() {
  local t=$1 bin=$build/bin/fuzz_$1 corpus=tests/fuzz/corpus/$1 work=$2 status=0
  local dict=()
  [[ -f tests/fuzz/dict/$t.dict ]] && dict=(-dict="tests/fuzz/dict/$t.dict")
  # New inputs go to the first directory, so the committed corpus is only read here.
  "$bin" "${limits[@]}" "${dict[@]}" -max_len=$max_len -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/$t/" "$work/new" "$corpus" >"$out/$t.log" 2>&1 || status=$?
  echo "$status" >"$out/$t.status"
  if ((status != 0)); then
    echo "fuzz.sh: $t FAILED (exit $status); the input is in $out/artifacts/$t/:" >&2
    grep -E "ERROR|SUMMARY|Test unit written" "$out/$t.log" >&2 || true
    ((ci)) && tail -n 60 "$out/$t.log" >&2  # CI keeps no build folder: the report goes to its log
  fi
  grep -E "^stat::(number_of_executed_units|average_exec_per_sec)" "$out/$t.log" | sed "s/^/$t /" || true
}

declare -A works
for t in "${targets[@]}"; do
  [[ -d tests/fuzz/corpus/$t ]] || { echo "fuzz.sh: no corpus tests/fuzz/corpus/$t" >&2; exit 2; }
  works[$t]=$(mktemp -d "$out/$t.XXXXXX")
  mkdir -p "${works[$t]}/new" "${works[$t]}/old" "${works[$t]}/merged" "$out/artifacts/$t"
done

# --ci runs as many targets at once as there are cores (each libFuzzer process is one thread),
# so CI's run takes 20 s per target per core rather than per target; each target still gets
# its SECONDS. Without --ci, one after another: each merge below rewrites its corpus.
jobs=1
((ci)) && jobs=$(nproc)
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
  echo "fuzz.sh: $t for ${seconds}s (log $out/$t.log)"
  fuzz_one "$t" "${works[$t]}" &
done
wait

failed=()
for t in "${targets[@]}"; do
  [[ $(cat "$out/$t.status" 2>/dev/null) == 0 ]] || failed+=("$t")
  work=${works[$t]}
  if ((ci)); then  # the committed corpus stays as it is; what was new goes with the scratch
    rm -rf "$work"
    continue
  fi
  corpus=tests/fuzz/corpus/$t
  bin=$build/bin/fuzz_$t

  # Minimize: the kept files first, then whatever of the old and new inputs adds coverage.
  # -use_counters=0: by code edges only, not by how often each runs, which would keep
  # thousands of files (the fuzzing above does use the counters).
  for f in "$corpus"/*; do
    if is_libfuzzer_name "$f"; then cp "$f" "$work/old/"; else cp "$f" "$work/merged/"; fi
  done
  "$bin" "${limits[@]}" -merge=1 -use_counters=0 -artifact_prefix="$out/artifacts/$t/" \
    "$work/merged" "$work/old" "$work/new" >"$out/$t.merge.log" 2>&1
  for f in "$corpus"/*; do if is_libfuzzer_name "$f"; then rm "$f"; fi; done
  for f in "$work/merged"/*; do if is_libfuzzer_name "$f"; then cp "$f" "$corpus/"; fi; done
  rm -rf "$work"
  files=$(find "$corpus" -type f | wc -l)
  bytes=$(find "$corpus" -type f -printf '%s\n' | awk '{ n += $1 } END { print n }')
  echo "fuzz.sh: $t corpus: $files files, $bytes bytes"
  # The corpus is committed and runs in every test run: keep it small.
  if ((files > 500 || bytes > 1000000)); then
    echo "fuzz.sh: warning: $corpus is over 500 files or 1 MB; shrink the seeds (make_seeds.py)" >&2
  fi
done

if ((ci)) && [[ $(corpus_digest) != "$before" ]]; then
  echo "fuzz.sh: --ci changed files under tests/fuzz/corpus/; it must only read them" >&2
  exit 1
fi
echo "fuzz.sh: build $((built - started)) s, fuzzing $(($(date +%s) - built)) s (${#targets[@]} targets, ${seconds} s each, $jobs at a time)"
if ((${#failed[@]})); then
  echo "fuzz.sh: findings in: ${failed[*]}" >&2
  ((ci)) && echo "fuzz.sh: reproduce one with $build/bin/fuzz_<target> <input>; fix it, then add the input to" \
    "tests/fuzz/corpus/<target>/ as crash-<what>.<ext>" >&2
  exit 1
fi
