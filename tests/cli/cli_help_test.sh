#!/usr/bin/env bash
# The command line as a user meets it: every command's --help exits 0 and shows a worked
# example; every example runs as written (from a copy of the repository layout, so that
# `build/bin/fixq`, `tools/` and `data/` resolve); and mistakes are one line on stderr,
# "fixq: error: <what>; <what to do>", with a non-zero exit code.
#   usage: cli_help_test.sh FIXQ_BINARY REPO_ROOT
set -euo pipefail
fixq=$(realpath "$1")
root=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Every command path, from the "Subcommands:" sections of the help texts, depth first.
subcommands() {  # subcommands PATH...: the names listed by `fixq PATH --help`
  "$fixq" "$@" --help | awk '/^Subcommands:/ { on = 1; next } on && /^  [^ ]/ { print $1; next } on && /^$/ { on = 0 }'
}
commands=("")
walk() {
  local sub
  for sub in $(subcommands "$@"); do
    commands+=("${*:+$* }$sub")
    walk "$@" "$sub"
  done
}
walk
[[ ${#commands[@]} -ge 12 ]] || { echo "cli help: only ${#commands[@]} commands found: ${commands[*]}" >&2; exit 1; }

# The examples of one help text: the indented lines under a line starting with "Example".
examples() {
  awk '/^Example/ { on = 1; next } on && /^  / { sub(/^  /, ""); print; next } { on = 0 }'
}

for cmd in "${commands[@]}"; do
  # shellcheck disable=SC2086  # cmd is a space-separated command path
  "$fixq" $cmd --help >"$tmp/help.txt" 2>"$tmp/err.txt" ||
    { echo "cli help: 'fixq ${cmd} --help' failed:" >&2; cat "$tmp/err.txt" >&2; exit 1; }
  [[ -n $(examples <"$tmp/help.txt") ]] ||
    { echo "cli help: 'fixq ${cmd} --help' has no worked example:" >&2; cat "$tmp/help.txt" >&2; exit 1; }
done

# Run the examples in a scratch directory laid out like the repository root. The gru
# examples go first: they make gru.safetensors, which quantize-stats' example reads.
# Not run: bench (it takes minutes) and demo (the main job, ~15 s, scripts/demo.sh).
work=$tmp/work
mkdir -p "$work/build/bin"
ln -s "$fixq" "$work/build/bin/fixq"
ln -s "$root/tools" "$work/tools"
ln -s "$root/data" "$work/data"
touch "$tmp/start"
ordered=()
for cmd in "${commands[@]}"; do [[ $cmd == gru* ]] && ordered+=("$cmd"); done
for cmd in "${commands[@]}"; do [[ $cmd != gru* && $cmd != bench* && $cmd != demo ]] && ordered+=("$cmd"); done
ran=0
for cmd in "${ordered[@]}"; do
  # shellcheck disable=SC2086
  while IFS= read -r line; do
    (cd "$work" && bash -c "$line") >"$tmp/out.txt" 2>"$tmp/err.txt" ||
      { echo "cli help: the example of 'fixq ${cmd}' fails: $line" >&2; cat "$tmp/err.txt" >&2; exit 1; }
    ran=$((ran + 1))
  done < <("$fixq" $cmd --help | examples)
done
[[ $ran -ge 15 ]] || { echo "cli help: only $ran example lines ran" >&2; exit 1; }
[[ -s "$work/eval.html" && -s "$work/w_q4_0.npy" && -s "$work/gru.fixq" && -s "$work/y.npy" ]] ||
  { echo "cli help: the examples did not make their files:" >&2; ls "$work" >&2; exit 1; }
changed=$(find "$root/data" "$root/tools" -newer "$tmp/start" | head -3)
[[ -z $changed ]] || { echo "cli help: an example wrote into the repository: $changed" >&2; exit 1; }

# --version: one line, the version of CMakeLists.txt's project().
version=$(sed -n 's/^project(fixq VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
[[ $("$fixq" --version) == "fixq $version" ]] || { echo "cli help: 'fixq --version' printed '$("$fixq" --version)'" >&2; exit 1; }

# Mistakes: one line on stderr in the agreed form, nothing on stdout, exit code != 0.
expect_error() {  # expect_error NEEDLE ARGS...
  local needle=$1 code=0
  shift
  (cd "$work" && "$fixq" "$@") >"$tmp/out.txt" 2>"$tmp/err.txt" || code=$?
  [[ $code -ne 0 ]] || { echo "cli help: expected failure: fixq $*" >&2; exit 1; }
  [[ $(wc -l <"$tmp/err.txt") -eq 1 && ! -s "$tmp/out.txt" ]] ||
    { echo "cli help: not one line on stderr for: fixq $*" >&2; cat "$tmp/err.txt" "$tmp/out.txt" >&2; exit 1; }
  grep -Eq '^fixq: error: .+; .+' "$tmp/err.txt" && grep -q -- "$needle" "$tmp/err.txt" ||
    { echo "cli help: error for 'fixq $*' lacks '$needle' or the form:" >&2; cat "$tmp/err.txt" >&2; exit 1; }
}
expect_error "'fixq' needs a command: one of info, .*gru, model; run 'fixq --help'"
expect_error "unknown command 'frobnicate'; run 'fixq --help'" frobnicate
expect_error "'fixq gru' needs a command: one of quantize, run, eval, tables, export-c; run 'fixq gru --help'" gru
expect_error "unknown command 'frob'; run 'fixq formats --help'" formats frob
expect_error "File does not exist: missing.npy; run 'fixq quant-error --help'" quant-error missing.npy
expect_error "--bits.*; run 'fixq quant-error --help'" quant-error data/charlm/embedding.npy --bits four
expect_error "bits outside \[2, 16\]\|2..16\|bits" quant-error data/charlm/embedding.npy --bits 40
expect_error "--granularity\|granularity 'diagonal'" quant-error data/charlm/embedding.npy --granularity diagonal
expect_error "--calib-batch.*; run 'fixq gru quantize --help'" gru quantize --model gru.safetensors --calib ref/x.npy \
  --calib-batch lots -o q.fixq
expect_error "--output is required\|-o,--output" gru quantize --model gru.safetensors --calib ref/x.npy
expect_error "--config 'int4'" gru quantize --model gru.safetensors --calib ref/x.npy --config int4 -o q.fixq
expect_error "unknown GGUF type\|q9_K" quantize-stats --types q9_K data/charlm/embedding.npy
expect_error "not a float GRU model file\|safetensors" gru eval --model gru.fixq --float ref/x.npy --input ref/x.npy
echo "cli help: ${#commands[@]} commands, $ran example lines: ok"
