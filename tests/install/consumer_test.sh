#!/usr/bin/env bash
# `cmake --install` puts a usable fixq into a prefix: every public header, the static and the
# shared library, the CLI, a CMake package and fixq.pc. A small program (consumer/) is built
# against the installed tree both ways, find_package(fixq CONFIG) and pkg-config, after the
# tree was moved elsewhere (both packages must be relocatable), shared and static, and run:
# it checks the library's GEMM and rounding against its own computations, and, where fixq
# was built with ONNX import, reads an ONNX GRU (python's onnx says what it must find), so
# that the link dependencies libfixq brings (protobuf, libonnx_proto) are proven carried
# by both packages.
#   usage: consumer_test.sh BUILD_DIR REPO_ROOT
set -euo pipefail
build=$(cd "$1" && pwd)
root=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install consumer: $*" >&2; exit 1; }

cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
libdir=$(cache CMAKE_INSTALL_LIBDIR)
cxx=$(cache CMAKE_CXX_COMPILER)
launcher=$(cache CMAKE_CXX_COMPILER_LAUNCHER)
onnx=$(cache FIXQ_ONNX)
version=$(sed -n 's/^project(fixq VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
[[ -n $libdir && -n $cxx && -n $version ]] || fail "cannot read the install libdir, compiler or version"

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log"

# The ONNX GRU the consumers read, and its shape as the onnx package reads it: W of the
# first GRU node is [directions, 3H, input], one GRU node per layer.
model=()
expect_onnx=""
if [[ $onnx == ON ]]; then
  model=("$root/tests/fuzz/corpus/onnx_gru/seed-gru-2layer-bidi.onnx")
  expect_onnx=$(/usr/bin/python3 - "${model[0]}" <<'PY'
import sys
import onnx
g = onnx.load(sys.argv[1]).graph
grus = [n for n in g.node if n.op_type == "GRU"]
dims = {i.name: list(i.dims) for i in g.initializer}
d, h3, c = dims[grus[0].input[1]]
print(f"onnx: input {c} hidden {h3 // 3} layers {len(grus)} directions {d}")
PY
  ) || fail "python's onnx cannot read ${model[0]}"
fi
# check_run NAME OUTPUT: the consumer's verdict, and the ONNX model it read.
check_run() {
  [[ $2 == *"consumer: ok "* ]] || fail "$1 printed: $2"
  if [[ -n $expect_onnx ]]; then
    [[ $(grep '^onnx:' <<<"$2") == "$expect_onnx" ]] || fail "$1 read the ONNX model as '$(grep '^onnx:' <<<"$2")', python's onnx as '$expect_onnx'"
  fi
}

# What must be there.
p=$tmp/prefix
for h in "$root"/include/fixq/*.h; do
  [[ -f $p/include/fixq/$(basename "$h") ]] || fail "header $(basename "$h") not installed"
done
for f in "$libdir/libfixq.a" "$libdir/libfixq.so" "bin/fixq" "$libdir/cmake/fixq/fixqConfig.cmake" \
  "$libdir/cmake/fixq/fixqConfigVersion.cmake" "$libdir/pkgconfig/fixq.pc"; do
  [[ -e $p/$f ]] || fail "$f not installed; installed: $(cd "$p" && find . -type f | sort | tr '\n' ' ')"
done
# The shared library carries its ABI version (0.x: major.minor).
soname=$(readelf -d "$p/$libdir/libfixq.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[[ $soname == "libfixq.so.${version%.*}" ]] || fail "soname '$soname', expected libfixq.so.${version%.*}"
# Nothing installed for builders may point back into the source or build tree.
if grep -rl -e "$root" -e "$build" "$p/$libdir/cmake" "$p/$libdir/pkgconfig" "$p/include" >"$tmp/leaks.txt"; then
  fail "installed files name the source or build tree: $(cat "$tmp/leaks.txt")"
fi
"$p/bin/fixq" info >/dev/null || fail "the installed fixq does not run"

# Relocated: every use below goes through the moved tree.
mv "$p" "$tmp/moved"
p=$tmp/moved

# CMake: find_package(fixq CONFIG) -> fixq::fixq (shared) and fixq::fixq_static.
launch=()
[[ -n $launcher ]] && launch=(-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher")
cmake -S "$root/tests/install/consumer" -B "$tmp/cmake-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" "${launch[@]}" -DCMAKE_PREFIX_PATH="$p" >"$tmp/cmake.log" 2>&1 ||
  { cat "$tmp/cmake.log" >&2; fail "configuring the CMake consumer failed"; }
cmake --build "$tmp/cmake-build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log" >&2; fail "building the CMake consumer failed"; }
for kind in shared static; do
  out=$("$tmp/cmake-build/consumer_$kind" "${model[@]}") || fail "consumer_$kind failed: $out"
  check_run "consumer_$kind (CMake)" "$out"
done
# Each tool's whole output first: `tool | grep -q` under pipefail fails at random, when grep
# exits before the tool has written everything (SIGPIPE).
shared_dyn=$(readelf -d "$tmp/cmake-build/consumer_shared")
shared_ldd=$(ldd "$tmp/cmake-build/consumer_shared")
static_dyn=$(readelf -d "$tmp/cmake-build/consumer_static")
grep -q "NEEDED.*\[$soname\]" <<<"$shared_dyn" || fail "consumer_shared does not link $soname"
grep -q "$soname => $p/$libdir/" <<<"$shared_ldd" ||
  fail "consumer_shared does not load fixq from the prefix $p/$libdir: $(grep fixq <<<"$shared_ldd")"
if grep -q "NEEDED.*libfixq" <<<"$static_dyn"; then fail "consumer_static links the shared fixq"; fi
# libfixq.so's own dependencies stay its own: the program does not link them itself.
if grep -E -q "NEEDED.*(onnx|protobuf)" <<<"$shared_dyn"; then
  fail "consumer_shared links ONNX or protobuf directly: libfixq.so's dependencies leak into its consumers"
fi

# pkg-config: the version, then compile and link with its flags alone (plus C++20).
export PKG_CONFIG_PATH=$p/$libdir/pkgconfig
[[ $(pkg-config --modversion fixq) == "$version" ]] || fail "pkg-config --modversion: $(pkg-config --modversion fixq)"
read -ra cflags <<<"$(pkg-config --cflags fixq)"
read -ra libs <<<"$(pkg-config --libs fixq)"
"$cxx" -std=c++20 -O1 "${cflags[@]}" "$root/tests/install/consumer/consumer.cpp" -o "$tmp/consumer_pc" "${libs[@]}" \
  -Wl,-rpath,"$p/$libdir" || fail "building with pkg-config's flags failed"
# Static: libfixq.a in place of -lfixq, and what `pkg-config --static` adds for it.
read -ra static_libs <<<"$(pkg-config --static --libs fixq)"
static_libs=("${static_libs[@]/#-lfixq/-l:libfixq.a}")
"$cxx" -std=c++20 -O1 "${cflags[@]}" "$root/tests/install/consumer/consumer.cpp" -o "$tmp/consumer_pc_static" \
  "${static_libs[@]}" || fail "building with pkg-config --static's flags failed: ${static_libs[*]}"
if grep -q "NEEDED.*libfixq" <<<"$(readelf -d "$tmp/consumer_pc_static")"; then fail "consumer_pc_static links the shared fixq"; fi
for kind in pc pc_static; do
  out=$("$tmp/consumer_$kind" "${model[@]}") || fail "consumer_$kind failed: $out"
  check_run "consumer_$kind (pkg-config)" "$out"
done
# Every installed header, through pkg-config's include path alone: none needs a file that
# was not installed.
for h in "$p"/include/fixq/*.h; do echo "#include \"fixq/$(basename "$h")\""; done >"$tmp/all_headers.cpp"
"$cxx" -std=c++20 -fsyntax-only "${cflags[@]}" "$tmp/all_headers.cpp" || fail "the installed headers do not compile alone"
echo "install consumer: ok (CMake and pkg-config, each shared + static${expect_onnx:+, ONNX import}; prefix moved after install)"
