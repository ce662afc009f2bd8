// OpenBLAS for fixq's benchmarks (peers/openblas.h). Its own cblas.h is used, which
// declares openblas_set_num_threads, whatever BLAS Debian's cblas.h alternative points to.
#include "peers/openblas.h"

#include <cblas.h>

#include "fixq/error.h"

namespace fixq::peers {

void openblas_sgemm(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k) {
  require(m >= 0 && n >= 0 && k >= 0 && m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX,
          "openblas_sgemm: shape [", m, ", ", k, "] x [", k, ", ", n, "] does not fit cblas' int");
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
              1.0f, x, static_cast<int>(k), w, static_cast<int>(n), 0.0f, y, static_cast<int>(n));
}

void openblas_single_thread() { openblas_set_num_threads(1); }

std::string openblas_version_str() { return openblas_get_config(); }

}  // namespace fixq::peers
