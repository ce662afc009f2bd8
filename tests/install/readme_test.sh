#!/usr/bin/env bash
# README.md's examples run as written, in order, in a scratch directory laid out like the
# repository root (build/bin/fixq is the binary under test, data/ the repository's):
#   ```python  with the build's Python package (<build>/python) on PYTHONPATH;
#   ```cmake   the next ```cpp block's CMakeLists.txt: both are built against
#              `cmake --install` of this build into a temporary prefix, then run;
#   ```sh      under bash -euo pipefail.
# ```console blocks are transcripts and setup commands (apt-get, the two commands, pip
# into the system), shown but not run. The README must keep its first screen: the examples
# and the two commands, and at most 300 lines.
#   usage: readme_test.sh BUILD_DIR REPO_ROOT
set -euo pipefail
build=$(cd "$1" && pwd)
root=$(cd "$2" && pwd)
readme=$root/README.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "readme: $*" >&2; exit 1; }

lines=$(wc -l <"$readme")
((lines <= 300)) || fail "README.md has $lines lines; at most 300"
grep -qx 'bash scripts/demo.sh .*' "$readme" && grep -qx 'bash scripts/test.sh .*' "$readme" ||
  fail "README.md lacks the two commands"

mkdir -p "$tmp/run/build/bin" "$tmp/blocks" "$tmp/app"
ln -s "$build/bin/fixq" "$tmp/run/build/bin/fixq"
ln -s "$root/data" "$tmp/run/data"
source "$root/tests/cli/doc_blocks.sh"
doc_blocks "$readme" "$tmp/blocks" python cmake cpp sh
blocks=("$tmp"/blocks/*)
kinds=$(for b in "${blocks[@]}"; do echo "${b##*.}"; done | sort | uniq -c | tr -s ' ' | tr '\n' ' ')
[[ $kinds == *" 1 cmake "* && $kinds == *" 1 cpp "* && $kinds == *"python"* && $kinds == *" sh "* ]] ||
  fail "expected a Python, a CMake + C++ and a shell example, found: $kinds"
# The first screen: every example comes before the first section heading.
first_heading=$(grep -n '^## ' "$readme" | head -1 | cut -d: -f1)
last_example=$(grep -n '^```\(python\|cpp\|sh\)' "$readme" | tail -1 | cut -d: -f1)
((last_example < first_heading)) || fail "an example lies below the first section (line $last_example)"
for b in "$tmp"/blocks/*.python "$tmp"/blocks/*.cpp; do
  n=$(wc -l <"$b")
  ((n <= 12)) || fail "the example $(basename "$b") has $n lines; at most 12"
done

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log"
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
ran=0
for block in "${blocks[@]}"; do
  name=$(basename "$block")
  case $block in
    *.python) run=(env PYTHONPATH="$build/python" /usr/bin/python3 "$block") ;;
    *.sh) run=(bash -euo pipefail "$block") ;;
    *.cmake) cp "$block" "$tmp/app/CMakeLists.txt"; continue ;;
    *.cpp)
      cp "$block" "$tmp/app/app.cpp"
      run=(bash -euo pipefail -c '
        cmake -S "$1" -B "$1/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$3" \
          -DCMAKE_PREFIX_PATH="$2" >"$1/configure.log" 2>&1 || { cat "$1/configure.log"; exit 1; }
        cmake --build "$1/build" >"$1/build.log" 2>&1 || { cat "$1/build.log"; exit 1; }
        "$1/build/app"' app "$tmp/app" "$tmp/prefix" "$(cache CMAKE_CXX_COMPILER)") ;;
  esac
  ran=$((ran + 1))
  run_block "readme: example $name of README.md" "$block" "$tmp/$name.log" "$tmp/run" "${run[@]}"
done
# What the examples promise.
[[ -s $tmp/run/gru.fixq && -s $tmp/run/mcu/kws.c && -s $tmp/run/mcu/kws.h && -s $tmp/run/w.bin ]] ||
  fail "the examples did not make gru.fixq, mcu/kws.{c,h} and w.bin: $(ls "$tmp/run" "$tmp/run/mcu" 2>&1 | tr '\n' ' ')"
# The C++ program's number is the Python package's for the same model and input.
want=$(cd "$tmp/run" && PYTHONPATH="$build/python" /usr/bin/python3 -c "
import numpy as np, fixq
q = fixq.QuantizedGru.load('gru.fixq')
print('y[0] = %f' % q.forward(np.full((50, 2, q.input_size), 0.5, np.float32))[0].flat[0])")
[[ $(cat "$tmp"/*.cpp.log) == "$want" ]] || fail "the C++ example printed '$(cat "$tmp"/*.cpp.log)', Python gives '$want'"
echo "readme: $ran examples ran ($lines lines)"
