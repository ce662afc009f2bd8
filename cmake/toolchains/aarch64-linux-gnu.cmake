# Cross-compiling fixq for 64-bit ARM Linux with Debian 12's cross toolchain
# (g++-aarch64-linux-gnu, libc6-dev-arm64-cross) and its multiarch arm64 -dev packages
# (dpkg --add-architecture arm64; libgtest-dev:arm64 ...). The test binaries run under
# qemu-user (qemu-aarch64), which ctest and GoogleTest's discovery use as the emulator;
# scripts/test_aarch64.sh does all of it.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Debian's multiarch layout: arm64 libraries and their CMake packages under
# /usr/lib/aarch64-linux-gnu, headers in /usr/include (shared by every architecture, where
# the header-only packages such as SIMDe, CLI11 and nlohmann-json live) and
# /usr/include/aarch64-linux-gnu.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# QEMU_CPU (e.g. max, cortex-a72) picks the emulated CPU when set in the environment.
find_program(FIXQ_QEMU_AARCH64 qemu-aarch64)
if(FIXQ_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${FIXQ_QEMU_AARCH64} -L /usr/aarch64-linux-gnu)
endif()
