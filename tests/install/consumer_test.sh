#!/usr/bin/env bash
# `cmake --install` puts a usable fixq into a prefix: every public header, the static and the
# shared library, the CLI, a CMake package and fixq.pc. A small program (consumer/) is built
# against the installed tree both ways, find_package(fixq CONFIG) and pkg-config, after the
# tree was moved elsewhere (both packages must be relocatable), and run: it checks the
# library's GEMM and rounding against its own computations.
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
version=$(sed -n 's/^project(fixq VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
[[ -n $libdir && -n $cxx && -n $version ]] || fail "cannot read the install libdir, compiler or version"

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log"

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
  out=$("$tmp/cmake-build/consumer_$kind") || fail "consumer_$kind failed: $out"
  [[ $out == "consumer: ok "* ]] || fail "consumer_$kind printed: $out"
done
readelf -d "$tmp/cmake-build/consumer_shared" | grep -q "NEEDED.*\[$soname\]" || fail "consumer_shared does not link $soname"
ldd "$tmp/cmake-build/consumer_shared" | grep -q "$soname => $p/$libdir/" || fail "consumer_shared does not load fixq from the prefix"
if readelf -d "$tmp/cmake-build/consumer_static" | grep -q "NEEDED.*libfixq"; then fail "consumer_static links the shared fixq"; fi

# pkg-config: the version, then compile and link with its flags alone (plus C++20).
export PKG_CONFIG_PATH=$p/$libdir/pkgconfig
[[ $(pkg-config --modversion fixq) == "$version" ]] || fail "pkg-config --modversion: $(pkg-config --modversion fixq)"
read -ra cflags <<<"$(pkg-config --cflags fixq)"
read -ra libs <<<"$(pkg-config --libs fixq)"
"$cxx" -std=c++20 -O1 "${cflags[@]}" "$root/tests/install/consumer/consumer.cpp" -o "$tmp/consumer_pc" "${libs[@]}" \
  -Wl,-rpath,"$p/$libdir" || fail "building with pkg-config's flags failed"
out=$("$tmp/consumer_pc") || fail "consumer_pc failed: $out"
[[ $out == "consumer: ok "* ]] || fail "consumer_pc printed: $out"
# Every installed header, through pkg-config's include path alone: none needs a file that
# was not installed.
for h in "$p"/include/fixq/*.h; do echo "#include \"fixq/$(basename "$h")\""; done >"$tmp/all_headers.cpp"
"$cxx" -std=c++20 -fsyntax-only "${cflags[@]}" "$tmp/all_headers.cpp" || fail "the installed headers do not compile alone"
echo "install consumer: ok (CMake shared + static, pkg-config; prefix moved after install)"
