#!/usr/bin/env bash
# scripts/gpu_check.sh --dry-run as CI runs it (issue 47), on a bundle made from this build by
# scripts/gpu_bundle.sh: every step's logic without a GPU, the bundle, $OUT's file count and
# the time budget; then that a bundle of other sources fails the dry run loudly, and that the
# summary counts a test skipped on a GPU as a failure but a skip for want of one as expected.
#   gpu_check_dry_run_test.sh BUILD_DIR REPO_ROOT
set -euo pipefail
build=$(cd "$1" && pwd)
root=$2
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "gpu_check_dry_run: $*" >&2
  exit 1
}

# A test that skips itself where a GPU is present is a GPU test that never runs, and the
# summary counts every skip on a GPU as a failure: the only skip is FIXQ_REQUIRE_GPU's.
skips=$(grep -rn 'GTEST_SKIP' tests/cuda --include='*.cpp' --include='*.h' --include='*.cu' | grep -v '^tests/cuda/gpu_test_util.h:' || true)
[[ -z $skips ]] || fail "tests skip themselves other than for want of a GPU: $skips"

bash scripts/gpu_bundle.sh --build-dir "$build" --out "$tmp/bundle" --no-build >"$tmp/bundle.log" 2>&1 ||
  { cat "$tmp/bundle.log" >&2; fail "gpu_bundle.sh failed"; }
grep -q '^sources [0-9a-f]\{16\}$' "$tmp/bundle/BUILT" || fail "BUILT records no sources digest: $(cat "$tmp/bundle/BUILT")"

# A plan whose limits exceed the budget is refused before anything runs.
if OUT=$tmp/out0 bash scripts/gpu_check.sh --dry-run --bundle "$tmp/bundle" --budget 300 >"$tmp/budget.log" 2>&1; then
  fail "a budget below the steps' limits passed"
fi
grep -q "over the budget of 300 s" "$tmp/out0/summary.txt" || { cat "$tmp/budget.log" >&2; fail "no budget error in the summary"; }

# The dry run itself. Its Python (the CLI test's helpers; the peers' on a GPU) is a probe that
# records the library path it gets: the bundle's libraries are for the bundle's binaries alone.
system_python=$(command -v /usr/bin/python3 || command -v python3)
cat >"$tmp/python3" <<EOF
#!/usr/bin/env bash
echo "LD_LIBRARY_PATH=\${LD_LIBRARY_PATH:-}" >>"$tmp/python_env.txt"
exec "$system_python" "\$@"
EOF
chmod +x "$tmp/python3"
start=$(date +%s)
# (--stale-ok: where others edit the tree meanwhile, the sources may change under the run;
# the check of a stale bundle is the second run's, below.)
if ! OUT=$tmp/out FIXQ_PYTHON=$tmp/python3 bash scripts/gpu_check.sh --dry-run --bundle "$tmp/bundle" --stale-ok \
  >"$tmp/dry.log" 2>&1; then
  cat "$tmp/dry.log" >&2
  fail "the dry run failed"
fi
echo "the dry run took $(($(date +%s) - start)) s"
files=$(find "$tmp/out" -type f | wc -l)
((files <= 8)) || fail "\$OUT holds $files files (at most 8 come back): $(ls "$tmp/out")"
summary=$tmp/out/summary.txt
[[ -f $summary && -f $tmp/out/logs.tgz ]] || fail "no summary.txt or logs.tgz in \$OUT: $(ls "$tmp/out")"
grep -q '^RESULT: PASS (dry run' "$summary" || { cat "$summary" >&2; fail "the summary does not pass"; }
for step in bench_gru peer_gru bench_gemm peer_gemm memcheck racecheck synccheck; do
  grep -qE "^$step +[0-9]+s +- +skipped +\(no GPU: dry run\)" "$summary" || { cat "$summary" >&2; fail "$step is not skipped for want of a GPU"; }
done
for step in bundle tests cli; do
  grep -qE "^$step +[0-9]+s +[0-9]+s +PASS" "$summary" || { cat "$summary" >&2; fail "$step did not pass"; }
done
# The order: the tests, then the benches and peers (the numbers come before anything slower
# can run out the time), then the CLI, then the sanitizers.
order=$(awk '/^step / {on = 1; next} on && NF == 0 {exit} on {printf "%s ", $1}' "$summary")
[[ $order == "bundle gpu tests bench_gru peer_gru bench_gemm peer_gemm cli memcheck racecheck synccheck " ]] ||
  fail "the steps run in the order: $order"
tar -tzf "$tmp/out/logs.tgz" >"$tmp/logs.txt"
grep -q 'logs/tests.xml' "$tmp/logs.txt" || fail "logs.tgz lacks tests.xml"
[[ -s $tmp/python_env.txt ]] || fail "the dry run's CLI step ran no Python"
if grep -q "$tmp/bundle/lib" "$tmp/python_env.txt"; then fail "Python ran with the bundle's libraries on its path"; fi
# The output's tail (12,000 characters come back) holds the whole summary.
[[ $(tail -c 12000 "$tmp/dry.log" | grep -c '^RESULT:') == 1 ]] || fail "the summary is not in the last 12,000 characters"

# A bundle of other sources: the loud warning, and the dry run fails.
sed -i 's/^sources .*/sources 0000000000000000/' "$tmp/bundle/BUILT"
if OUT=$tmp/out2 bash scripts/gpu_check.sh --dry-run --bundle "$tmp/bundle" >"$tmp/stale.log" 2>&1; then
  fail "a dry run on a bundle of other sources passed"
fi
grep -q 'WARNING: THE BUNDLE IS NOT HEAD' "$tmp/stale.log" || { cat "$tmp/stale.log" >&2; fail "no warning for a stale bundle"; }
grep -q 'WARNING: THE BUNDLE IS NOT HEAD' "$tmp/out2/summary.txt" || fail "the summary does not warn of the stale bundle"

# The summary's verdict on a run's tests, from a made-up record: on a GPU any skipped test
# fails the check; without one, a skip for want of a GPU is expected.
summarize_tests() {  # mode no_gpu skip_message
  local w=$tmp/work_$1_$2 o=$tmp/o_$1_$2
  mkdir -p "$w" "$o"
  printf 'mode\t%s\nbudget\t465\ncaps\t465\n' "$1" >"$w/info.tsv"
  [[ $2 == yes ]] && printf 'no_gpu\tno CUDA device\n' >>"$w/info.tsv"
  printf 'tests\t130\tdone\t0\t3\t\n' >"$w/steps.tsv"
  cat >"$w/tests.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="2" failures="0" disabled="0" errors="0" time="0.1" name="AllTests">
  <testsuite name="GruOnGpu" tests="2" failures="0" disabled="0" skipped="1" errors="0" time="0.1">
    <testcase name="Runs" status="run" result="completed" time="0" classname="GruOnGpu" />
    <testcase name="Skips" status="run" result="skipped" time="0" classname="GruOnGpu">
      <skipped message="$3"><![CDATA[$3]]></skipped>
    </testcase>
  </testsuite>
</testsuites>
EOF
  "$system_python" scripts/gpu_summary.py "$w" "$o"
}
# (Into files, then grep: grep -q would close the pipe on the summary mid-write.)
summarize_tests gpu no "a GPU is present: the device tests cover it" >"$tmp/on_gpu.txt"
grep -q '^tests .*FAIL .*skipped: GruOnGpu.Skips' "$tmp/on_gpu.txt" || fail "a test skipped on a GPU does not fail the summary"
grep -q '^RESULT: FAIL' "$tmp/on_gpu.txt" || fail "a test skipped on a GPU does not fail the result"
summarize_tests dry-run yes "no usable GPU: no CUDA device" >"$tmp/no_gpu.txt"
grep -q '^RESULT: PASS' "$tmp/no_gpu.txt" || fail "a test skipped for want of a GPU fails a dry run's summary"
echo "gpu_check --dry-run: passed ($(grep -c . "$summary") summary lines, $files files in \$OUT); a stale bundle fails it"
