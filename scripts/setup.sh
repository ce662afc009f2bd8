#!/usr/bin/env bash
# Installs the Debian packages fixq needs (only those missing) and builds it into build/
# (Release). Idempotent: a second run installs nothing and rebuilds only changes.
#   scripts/setup.sh            everything: library, CLI, Python package, tests, benchmarks
#                               and their peers (each required, so nothing is left out silently)
#   scripts/setup.sh --runtime  only what building and using the library, the CLI and the
#                               Python package needs; tests, benchmarks and peers are off
#   scripts/setup.sh --demo     --runtime plus python3-torch, for the demo's PyTorch rows
#                               (what scripts/demo.sh, the README's first command, needs)
#   FIXQ_BUILD_DIR   build directory (default: build)
#   FIXQ_CMAKE_ARGS  extra CMake arguments (e.g. -DFIXQ_SANITIZE=ON), after setup's own
set -euo pipefail
cd "$(dirname "$0")/.."

mode=all
case ${1:-} in
  "") ;;
  --runtime) mode=runtime ;;
  --demo) mode=demo ;;
  *) echo "setup: unknown option '$1' (expected nothing, --runtime or --demo)" >&2; exit 2 ;;
esac

# Why each package (all from Debian 12, nothing downloaded from anywhere else).
# Runtime: building and using the library, the CLI and the Python package.
#   build-essential cmake ninja-build  compiler and build
#   libcli11-dev                       the CLI's argument parsing (header-only, well kept)
#   nlohmann-json3-dev                 JSON of safetensors headers and GRU configs (header-only)
#   pybind11-dev python3-dev           the Python module `fixq` (pybind11 headers, Python.h)
#   python3-numpy                      the Python package's arrays
#   python3-venv python3-pip           `pip install .` of the Python package, offline, into a venv
#   python3-setuptools python3-wheel   (README "Install"; pyproject.toml, --no-build-isolation)
#   libonnx-dev libprotobuf-dev        reading ONNX models (`--model model.onnx`); libfixq links them
runtime_packages=(build-essential cmake ninja-build libcli11-dev nlohmann-json3-dev pybind11-dev python3-dev
                  python3-numpy python3-venv python3-pip python3-setuptools python3-wheel libonnx-dev libprotobuf-dev)
# Tests and benchmarks.
#   libgtest-dev libbenchmark-dev      tests and benchmarks
#   python3-torch python3-pytest       Debian's /usr/bin/python3: golden files, tools/export_gru.py,
#                                      fixq.torch, and the tests that compare the GRU with torch.nn.GRU
#   chromium                           the test that renders `fixq gru eval --report` pages headless
#   pkgconf                            the test that builds a program against the installed fixq.pc
#   libsimde-dev                       the tests compile the AVX-512 kernels a second time against SIMDe's
#                                      portable intrinsics, so CPUs without AVX-512 still prove them bit-exact
#   python3-onnx                       the tests build and edit ONNX models
#   nodejs npm                         @huggingface/gguf, the independent GGUF reader of the tests (tests/gguf_js)
#   gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-user gcc-arm-none-eabi libnewlib-arm-none-eabi
#                                      `fixq gru export-c`'s C run bit-exact on 32-bit ARM under qemu, and built for a Cortex-M4
#   libdnnl-dev libopenblas-dev        the peers benchmarks measure fixq against (oneDNN, sgemm);
#                                      optional when building (FIXQ_ONEDNN, FIXQ_OPENBLAS)
#   espeak-ng                          the speech of data/speech, regenerated bit for bit by a test (tools/train_speech.py)
dev_packages=(libgtest-dev libbenchmark-dev python3-torch python3-pytest chromium pkgconf libsimde-dev
              python3-onnx nodejs gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-user gcc-arm-none-eabi
              libnewlib-arm-none-eabi libdnnl-dev libopenblas-dev espeak-ng)
# A nodejs that bundles npm (NodeSource's) conflicts with Debian's npm package: ask for it only when missing.
command -v npm >/dev/null || dev_packages+=(npm)

# The demo: its PyTorch rows (python/fixq/baselines) need torch, nothing else of the above.
demo_packages=(python3-torch)

packages=("${runtime_packages[@]}")
cmake_args=(-DFIXQ_BUILD_TESTS=OFF -DFIXQ_BUILD_BENCH=OFF -DFIXQ_ONEDNN=OFF -DFIXQ_OPENBLAS=OFF)
if [[ $mode == demo ]]; then
  packages+=("${demo_packages[@]}")
elif [[ $mode == all ]]; then
  packages+=("${dev_packages[@]}")
  cmake_args=(-DFIXQ_BUILD_TESTS=ON -DFIXQ_BUILD_BENCH=ON -DFIXQ_ONEDNN=ON -DFIXQ_OPENBLAS=ON)
fi

source scripts/install_missing.sh  # the scripts run from the repository root
install_missing setup "${packages[@]}"
# The npm registry's @huggingface/gguf, pinned by tests/gguf_js/package-lock.json, into a
# folder git ignores; only when it is not there yet.
if [[ $mode == all && ! -f tests/gguf_js/node_modules/@huggingface/gguf/package.json ]]; then
  echo "setup: npm ci in tests/gguf_js (@huggingface/gguf)"
  npm ci --prefix tests/gguf_js --no-audit --no-fund --loglevel=error >/dev/null
fi

build_dir=${FIXQ_BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cmake_args[@]}" ${FIXQ_CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" --parallel "$(nproc)"
echo "setup: built $build_dir/bin/fixq"
