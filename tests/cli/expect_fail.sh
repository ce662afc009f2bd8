# Sourced by the CLI tests (not a test itself: no _test.sh suffix).
# expect_fail NEEDLE COMMAND...: COMMAND must fail with exactly one line on stderr that
# contains NEEDLE. Uses the caller's $tmp directory for the captured streams.
expect_fail() {
  local needle=$1
  shift
  if "$@" >"$tmp/out.txt" 2>"$tmp/err.txt"; then
    echo "expected failure: $*" >&2
    exit 1
  fi
  grep -q -- "$needle" "$tmp/err.txt" || { echo "error lacks '$needle':" >&2; cat "$tmp/err.txt" >&2; exit 1; }
  [[ $(wc -l <"$tmp/err.txt") -eq 1 ]] || { echo "error is not one line:" >&2; cat "$tmp/err.txt" >&2; exit 1; }
}
