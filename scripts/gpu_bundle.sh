#!/usr/bin/env bash
# Makes the bundle scripts/gpu_check.sh runs on a GPU machine: the CLI and test_cuda built
# here (where fixq's Debian build dependencies are), stripped, with the shared libraries they
# need that a bare GPU machine lacks, and a BUILT note saying what they were built from. The
# device tool carries it (name .gpu-bundle in `carry`), so the check spends no device time
# building. The bundle is git-ignored (/.gpu-bundle/ in .gitignore) and never committed;
# with the working tree it must stay under the 64 MiB the device tool carries.
#   scripts/gpu_bundle.sh [--build-dir DIR] [--out DIR] [--no-build]
# --build-dir: the build to take the binaries from (default $FIXQ_BUILD_DIR, else build/),
# configured with FIXQ_CUDA=ON first if it has no test_cuda, and its two targets built
# unless --no-build. --out: where to make the bundle (default .gpu-bundle).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FIXQ_BUILD_DIR:-build}
out=.gpu-bundle
no_build=0
while (($#)); do
  case $1 in
    --build-dir) build=${2:?--build-dir needs a folder}; shift ;;
    --out) out=${2:?--out needs a folder}; shift ;;
    --no-build) no_build=1 ;;
    *) echo "gpu_bundle: unknown argument '$1'" >&2; exit 1 ;;
  esac
  shift
done

if ((!no_build)); then
  grep -q 'bin/test_cuda' "$build/build.ninja" 2>/dev/null || cmake -S . -B "$build" -DFIXQ_CUDA=ON >/dev/null
  # The CLI without the oneDNN peer (its 40 MB library is of no use on the GPU machine), if
  # this build has that twin; else the CLI itself.
  targets=(fixq_cli test_cuda)
  grep -q 'fixq_cli_no_peers' "$build/build.ninja" 2>/dev/null && targets+=(fixq_cli_no_peers)
  cmake --build "$build" --parallel "$(nproc)" --target "${targets[@]}"
fi
cli=$build/bin/fixq
[[ -x $build/test-bin/fixq-no-peers ]] && cli=$build/test-bin/fixq-no-peers
for b in "$cli" "$build/bin/test_cuda"; do
  [[ -x $b ]] || { echo "gpu_bundle: $b is missing: build $build with FIXQ_CUDA=ON first" >&2; exit 1; }
done

# The digest of the sources the binaries were built from, taken before anything is copied
# (gpu_check.sh computes the same on the device and warns where they differ). A source
# edited after the build was compiled is not caught by it; the build just made is current.
digest=$(bash scripts/gpu_check.sh --sources-digest)
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
cp "$cli" "$out/bin/fixq"
cp "$build/bin/test_cuda" "$out/bin/test_cuda"
strip "$out/bin/fixq" "$out/bin/test_cuda"
# Shared libraries beyond the C and C++ runtimes, which any Linux with a glibc and libstdc++
# as new as Debian 12's has (the device image's are newer; the versions needed are listed
# in BUILT). The CUDA runtime is linked statically; the driver is the machine's own.
for b in "$out"/bin/*; do
  ldd "$b" | awk '/=> \// {print $3}' | while read -r lib; do
    case $(basename "$lib") in
      libc.so.* | libm.so.* | libstdc++.so.* | libgcc_s.so.* | libdl.so.* | libpthread.so.* | librt.so.* | libz.so.*) ;;
      *) cp -L "$lib" "$out/lib/" ;;
    esac
  done
done
# The newest glibc and libstdc++ symbol versions the binaries ask for: the device's must be
# at least these.
needs=$( (objdump -T "$out"/bin/* "$out"/lib/* 2>/dev/null || true) | grep -oE 'GLIBC(XX)?_[0-9.]+' |
  sort -t_ -k1,1 -k2,2V -u | awk -F_ '{max[$1] = $2} END {for (k in max) printf "%s_%s ", k, max[k]}' || true)
commit=unknown dirty=0
if git rev-parse --git-dir >/dev/null 2>&1; then
  commit=$(git rev-parse HEAD)
  dirty=$(git status --porcelain -- CMakeLists.txt cmake include src bench tests | wc -l)
fi
{
  echo "built $(date -u +%Y-%m-%dT%H:%MZ) from ${commit:0:10}$( ((dirty)) && echo "+$dirty uncommitted files") in $build"
  echo "sources $digest"
  echo "commit $commit"
  echo "needs ${needs:-?}"
  if ((dirty)); then git status --porcelain -- CMakeLists.txt cmake include src bench tests | sed 's/^/uncommitted /'; fi
} >"$out/BUILT"

bundle_kib=$(($(du -sb "$out" | cut -f1) / 1024))
# What travels beside it: the files git tracks and the untracked ones it does not ignore.
tree_kib=0
if [[ $commit != unknown ]]; then
  tree_kib=$(($( (git ls-files -z --cached --others --exclude-standard | du -cb --files0-from=- 2>/dev/null || true) | tail -1 | cut -f1) / 1024))
fi
echo "gpu_bundle: $out: $((bundle_kib / 1024)) MiB (the working tree $((tree_kib / 1024)) MiB); $(head -1 "$out/BUILT")"
ls -la "$out/bin" "$out/lib"
if ((bundle_kib + tree_kib > 64 * 1024)); then
  echo "gpu_bundle: the bundle and the working tree exceed the 64 MiB the device tool carries" >&2
  exit 1
fi
