// The scalar reference kernels: the definition every fast path must match bit for bit.
#include <cmath>
#include <cstdint>

#include "quant/kernels.h"

namespace fixq::quant_detail::scalar {

namespace {

// One element at a time: the definition.
struct ElementKernels {

template <class Q>
static int64_t quantize(const float* x, int64_t n, float scale, int32_t zp, int32_t qmin, int32_t qmax, Q* out) {
  int64_t first_nan = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (first_nan < 0 && std::isnan(x[i])) first_nan = i;
    out[i] = static_cast<Q>(quantize_element(x[i], scale, zp, qmin, qmax));
  }
  return first_nan;
}

template <class Q>
static int64_t quantize_pc(const float* x, int64_t n, const float* scale, const int32_t* zp, int32_t qmin,
                    int32_t qmax, Q* out) {
  int64_t first_nan = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (first_nan < 0 && std::isnan(x[i])) first_nan = i;
    out[i] = static_cast<Q>(quantize_element(x[i], scale[i], zp[i], qmin, qmax));
  }
  return first_nan;
}

template <class Q>
static int64_t quantize_finite(const float* x, int64_t n, float scale, int32_t zp, int32_t qmin, int32_t qmax, Q* out) {
  int64_t first = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (first < 0 && !std::isfinite(x[i])) first = i;
    out[i] = static_cast<Q>(quantize_element(x[i], scale, zp, qmin, qmax));
  }
  return first;
}

static int64_t first_non_finite(const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) return i;
  return -1;
}

template <class Q>
static int64_t dequantize(const Q* q, int64_t n, float scale, int32_t zp, int32_t qmin, int32_t qmax, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    if (q[i] < qmin || q[i] > qmax) return i;
    out[i] = dequantize_element(q[i], scale, zp);
  }
  return -1;
}

template <class Q>
static int64_t dequantize_pc(const Q* q, int64_t n, const float* scale, const int32_t* zp, int32_t qmin,
                      int32_t qmax, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    if (q[i] < qmin || q[i] > qmax) return i;
    out[i] = dequantize_element(q[i], scale[i], zp[i]);
  }
  return -1;
}

};

}  // namespace

FIXQ_KERNEL_TABLE(QuantTable, kQuant, Isa::Scalar){make_quant_table<ElementKernels>()};

}  // namespace fixq::quant_detail::scalar
