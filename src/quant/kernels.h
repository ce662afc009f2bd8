// Private: the element-wise quantize / dequantize kernels behind fixq/quant.h.
//
// Contract shared by every instruction set (scalar is the definition):
//   quantize:   q = zp + clamp(round_half_even(x / scale), qmin - zp, qmax - zp),
//               x / scale in float32; NaN -> zp; +-Inf -> qmax / qmin.
//   dequantize: x = float(q - zp) * scale in float32.
// Both return the index of the first NaN input (quantize) or out-of-range input
// (dequantize) within the run, or -1; the front end turns that into its policy or error.
// "_pc" kernels take one (scale, zp) per element (per-channel along the last axis).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "fixq/arith.h"
#include "cpu/registry.h"

namespace fixq::quant_detail {

template <class Q>
struct QuantKernels {
  int64_t (*quantize)(const float* x, int64_t n, float scale, int32_t zp, int32_t qmin,
                      int32_t qmax, Q* out);
  int64_t (*quantize_pc)(const float* x, int64_t n, const float* scale, const int32_t* zp,
                         int32_t qmin, int32_t qmax, Q* out);
  int64_t (*dequantize)(const Q* q, int64_t n, float scale, int32_t zp, int32_t qmin,
                        int32_t qmax, float* out);
  int64_t (*dequantize_pc)(const Q* q, int64_t n, const float* scale, const int32_t* zp,
                           int32_t qmin, int32_t qmax, float* out);
  // quantize, returning the index of the first input that is NaN or infinite instead: a
  // model's float input checked in the pass that quantizes it (its values are the same).
  int64_t (*quantize_finite)(const float* x, int64_t n, float scale, int32_t zp, int32_t qmin,
                             int32_t qmax, Q* out);
};

// One family's kernels for every storage type.
struct QuantTable {
  QuantKernels<int8_t> s8;
  QuantKernels<uint8_t> u8;
  QuantKernels<int16_t> s16;
  QuantKernels<uint16_t> u16;
  QuantKernels<int32_t> s32;
  // The index of the first element of x[0, n) that is NaN or infinite, or -1.
  int64_t (*first_non_finite)(const float* x, int64_t n);

  template <class Q>
  const QuantKernels<Q>& of() const {
    if constexpr (std::is_same_v<Q, int8_t>) return s8;
    else if constexpr (std::is_same_v<Q, uint8_t>) return u8;
    else if constexpr (std::is_same_v<Q, int16_t>) return s16;
    else if constexpr (std::is_same_v<Q, uint16_t>) return u16;
    else return s32;
  }
};

// The table of a family whose kernels are K::quantize<Q>, K::quantize_pc<Q>,
// K::dequantize<Q> and K::dequantize_pc<Q>.
template <class K>
constexpr QuantTable make_quant_table() {
  auto of = []<class Q>(Q*) {
    return QuantKernels<Q>{&K::template quantize<Q>, &K::template quantize_pc<Q>, &K::template dequantize<Q>,
                           &K::template dequantize_pc<Q>, &K::template quantize_finite<Q>};
  };
  return {of(static_cast<int8_t*>(nullptr)), of(static_cast<uint8_t*>(nullptr)), of(static_cast<int16_t*>(nullptr)),
          of(static_cast<uint16_t*>(nullptr)), of(static_cast<int32_t*>(nullptr)), &K::first_non_finite};
}

// Each family's table, defined in its own file with FIXQ_KERNEL_TABLE (src/cpu/registry.h).
FIXQ_DECLARE_KERNEL_TABLES(QuantTable, kQuant)

// The tables of the families that bring kernels (registry.cpp).
cpu_detail::KernelRegistry<QuantTable>& registry();
// This module's rows of fixq::active_kernels(): the kernel each operation runs now, picked
// as the operations pick it (registry.cpp).
std::vector<KernelChoice> report_kernels();


// The kernels the active features select, each operation picked on its own.
template <class Q>
QuantKernels<Q> active_kernels() {
  const auto& r = registry();
  return {r.pick([](const QuantTable& t) { return t.of<Q>().quantize; }).kernel,
          r.pick([](const QuantTable& t) { return t.of<Q>().quantize_pc; }).kernel,
          r.pick([](const QuantTable& t) { return t.of<Q>().dequantize; }).kernel,
          r.pick([](const QuantTable& t) { return t.of<Q>().dequantize_pc; }).kernel,
          r.pick([](const QuantTable& t) { return t.of<Q>().quantize_finite; }).kernel};
}

// One of them, as active_kernels<Q>() would pick it (for a caller that needs one per call:
// the five picks of active_kernels take ~37 ns, 1% of a GRU step streamed at H = 256).
template <class Q, class K>
K active_kernel(K QuantKernels<Q>::*which) {
  return registry().pick([which](const QuantTable& t) { return t.of<Q>().*which; }).kernel;
}

// The index of the first element of x[0, n) that is NaN or infinite, or -1, on the active
// kernels: the check of a model's float inputs (a GRU forward's, once per call).
inline int64_t first_non_finite(const float* x, int64_t n) {
  return registry().pick([](const QuantTable& t) { return t.first_non_finite; }).kernel(x, n);
}

// The scalar definition of one element, shared by every tail loop so that all paths
// agree to the bit. `static`: each instruction-set TU gets its own copy, so the linker can
// never hand the scalar TU a copy compiled with AVX-512 enabled (an ODR trap with -m flags). lo = qmin - zp and hi = qmax - zp are exact in float (|.| < 2^18).
static inline int32_t quantize_element(float x, float scale, int32_t zp, int32_t qmin, int32_t qmax) {
  if (std::isnan(x)) return zp;
  const float t = x / scale;
  return zp + static_cast<int32_t>(round_half_even_saturate(t, int64_t{qmin} - zp, int64_t{qmax} - zp));
}

static inline float dequantize_element(int32_t q, float scale, int32_t zp) {
  return static_cast<float>(q - zp) * scale;
}

}  // namespace fixq::quant_detail
