// OpenBLAS as a peer of fixq's benchmarks: the float32 sgemm that packed weights are
// measured against (packed_bench). Built (library fixq_peer_openblas) only where OpenBLAS
// is found at configure time (FIXQ_OPENBLAS, bench/peers/CMakeLists.txt).
#pragma once

#include <cstdint>
#include <string>

namespace fixq::peers {

// y [m, n] = x [m, k] * w [k, n], all float32 row-major: cblas_sgemm.
void openblas_sgemm(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k);
// OpenBLAS on one thread, whatever OPENBLAS_NUM_THREADS says.
void openblas_single_thread();
// OpenBLAS's build description, e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64".
std::string openblas_version_str();

}  // namespace fixq::peers
