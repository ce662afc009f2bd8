#!/usr/bin/env bash
# Makes .gpu-bundle/ for scripts/gpu_check.sh: the CLI and test_cuda built here (where
# fixq's Debian build dependencies are), with the shared libraries they need that a bare
# GPU machine lacks, so that the device tool can carry them (name .gpu-bundle in `carry`)
# and the check spends no device time building. Uses the build in build/ (FIXQ_CUDA on),
# building the two targets first.
#   scripts/gpu_bundle.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FIXQ_BUILD_DIR:-build}
grep -q 'bin/test_cuda' "$build/build.ninja" 2>/dev/null || cmake -S . -B "$build" -DFIXQ_CUDA=ON >/dev/null
# The CLI without the oneDNN peer (its 40 MB library is of no use on the GPU machine), if
# this build has that twin; else the CLI itself.
targets=(fixq_cli test_cuda)
grep -q 'fixq_cli_no_peers' "$build/build.ninja" 2>/dev/null && targets+=(fixq_cli_no_peers)
cmake --build "$build" --parallel "$(nproc)" --target "${targets[@]}"
rm -rf .gpu-bundle
mkdir -p .gpu-bundle/bin .gpu-bundle/lib
cli=$build/bin/fixq
[[ -x $build/test-bin/fixq-no-peers ]] && cli=$build/test-bin/fixq-no-peers
cp "$cli" .gpu-bundle/bin/fixq
cp "$build/bin/test_cuda" .gpu-bundle/bin/test_cuda
strip .gpu-bundle/bin/fixq .gpu-bundle/bin/test_cuda
# Shared libraries beyond the C and C++ runtimes, which any Linux with a newer glibc and
# libstdc++ has.
for b in .gpu-bundle/bin/*; do
  ldd "$b" | awk '/=> \// {print $3}' | while read -r lib; do
    case $(basename "$lib") in
      libc.so.*|libm.so.*|libstdc++.so.*|libgcc_s.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libz.so.*) ;;
      *) cp -L "$lib" .gpu-bundle/lib/ ;;
    esac
  done
done
echo "built $(date -u +%Y-%m-%dT%H:%MZ) from $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes')" >.gpu-bundle/BUILT
du -sh .gpu-bundle
ls -la .gpu-bundle/bin .gpu-bundle/lib
