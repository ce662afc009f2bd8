#!/usr/bin/env bash
# Installs every Debian package fixq needs (only if one is missing) and builds it into
# build/ (Release). Idempotent: a second run installs nothing and rebuilds only changes.
#   FIXQ_BUILD_DIR   build directory (default: build)
#   FIXQ_CMAKE_ARGS  extra CMake arguments (e.g. -DFIXQ_SANITIZE=ON)
set -euo pipefail
cd "$(dirname "$0")/.."

# Why each package (all from Debian 12, nothing downloaded from anywhere else):
#   build-essential cmake ninja-build  compiler and build
#   libgtest-dev libbenchmark-dev      tests and benchmarks
#   libcli11-dev                       the CLI's argument parsing (header-only, well kept)
#   nlohmann-json3-dev                 JSON of safetensors headers and GRU configs (header-only)
#   python3-numpy python3-torch        Debian's /usr/bin/python3: golden files, tools/export_gru.py,
#                                      and the tests that compare the GRU with torch.nn.GRU
#   libopenblas-dev libdnnl-dev        the peers benchmarks are measured against (sgemm, oneDNN)
#   pybind11-dev python3-pytest        the Python module `fixq` (build/python) and its tests
#   chromium                           the test that renders `fixq gru eval --report` pages headless
#   libsimde-dev                       the tests compile the AVX-512 kernels a second time against SIMDe's
#                                      portable intrinsics, so CPUs without AVX-512 still prove them bit-exact
#   libonnx-dev libprotobuf-dev        reading ONNX models (`--model model.onnx`); python3-onnx edits them in tests
#   nodejs npm                         @huggingface/gguf, the independent GGUF reader of the tests (tests/gguf_js)
#   gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-user gcc-arm-none-eabi libnewlib-arm-none-eabi
#                                      `fixq gru export-c`'s C run bit-exact on 32-bit ARM under qemu, and built for a Cortex-M4
packages=(build-essential cmake ninja-build libgtest-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev
          python3-numpy python3-torch libopenblas-dev libdnnl-dev pybind11-dev python3-pytest chromium libsimde-dev
          libonnx-dev libprotobuf-dev python3-onnx nodejs
          gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-user gcc-arm-none-eabi libnewlib-arm-none-eabi)
# A nodejs that bundles npm (NodeSource's) conflicts with Debian's npm package: ask for it only when missing.
command -v npm >/dev/null || packages+=(npm)

source scripts/install_missing.sh  # the scripts run from the repository root
install_missing setup "${packages[@]}"
# The npm registry's @huggingface/gguf, pinned by tests/gguf_js/package-lock.json, into a
# folder git ignores; only when it is not there yet.
if [[ ! -f tests/gguf_js/node_modules/@huggingface/gguf/package.json ]]; then
  echo "setup: npm ci in tests/gguf_js (@huggingface/gguf)"
  npm ci --prefix tests/gguf_js --no-audit --no-fund --loglevel=error >/dev/null
fi

build_dir=${FIXQ_BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release ${FIXQ_CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" --parallel "$(nproc)"
echo "setup: built $build_dir/bin/fixq"
