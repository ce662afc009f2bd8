// Private, for the quant/kernels_<family>.cpp files only: the quantize / dequantize kernels
// written once over a family's lane primitives L (src/simd/lanes_<family>.h), L::kLanes
// elements per step and the ragged tail in the same code under a lane mask, so every
// element goes through the vector statement of the scalar definition (quant/kernels.h):
// an IEEE float32 division, round half to even by an explicit rounding immediate
// (independent of MXCSR), clamp, convert, add the zero point; NaN lanes get the zero point.
#pragma once

#include <cstdint>

#include "quant/kernels.h"

namespace fixq::quant_detail {

// (A template over L, whose family types have internal linkage: so have its instances.)
template <class L>
struct QuantLanes {
  // One vector of quantization: lanes of x with per-lane scale and zero point.
  static typename L::I quantize_vec(typename L::F x, typename L::F scale, typename L::I zp, typename L::I qmin,
                                    typename L::I qmax, typename L::M* nan) {
    *nan = L::fnan(x);
    auto r = L::round_even(L::fdiv(x, scale));
    const auto lo = L::to_float(L::sub(qmin, zp)), hi = L::to_float(L::sub(qmax, zp));
    r = L::fmin(L::fmax(r, lo), hi);
    r = L::fselect(*nan, L::fzero(), r);  // NaN lanes -> 0, i.e. the zero point after the add
    return L::add(L::truncate(r), zp);
  }

  // The index of the first lane of v outside [qmin, qmax] among the first n, or -1.
  static int first_out_of_range(typename L::I v, typename L::I vmin, typename L::I vmax, int64_t n) {
    return L::first(L::mask_and(L::mask_or(L::gt(vmin, v), L::gt(v, vmax)), L::first_lanes(n)));
  }

  // The same vector of parameters for every vector of the run (per tensor).
  template <class V>
  static auto same(V v) {
    return [v](int64_t, int64_t) { return v; };
  }

  // The per-channel scales and zero points of the vector at i (left elements from there
  // on). Lanes past the tail get scale 1, so that a division there stays well defined.
  static auto channel_scales(const float* scale) {
    return [scale](int64_t i, int64_t left) {
      return L::fselect(L::first_lanes(left), L::fload_n(scale + i, left), L::fsplat(1.0f));
    };
  }
  static auto channel_zero_points(const int32_t* zp) {
    return [zp](int64_t i, int64_t left) { return L::load_widen_n(zp + i, left); };
  }

  // Lanes of x that are NaN or infinite (exponent bits all ones).
  static typename L::M non_finite(typename L::F x) {
    const auto exponent = L::splat(0x7F800000);
    return L::eq(L::bit_and(L::bits(x), exponent), exponent);
  }

  // x[i] of a per-tensor or per-channel run: whole vectors, then the tail. Returns the first
  // NaN, or with Finite the first NaN or infinity.
  template <bool Finite = false, class Q, class Scale, class Zp>
  static int64_t quantize_run(const float* x, int64_t n, Scale scale_at, Zp zp_at, int32_t qmin, int32_t qmax, Q* out) {
    const auto vmin = L::splat(qmin), vmax = L::splat(qmax);
    int64_t first_bad = -1;
    for (int64_t i = 0; i < n; i += L::kLanes) {
      const int64_t left = n - i;
      typename L::M nan;
      const auto xv = L::fload_n(x + i, left);
      const auto q = quantize_vec(xv, scale_at(i, left), zp_at(i, left), vmin, vmax, &nan);
      if constexpr (Finite) nan = non_finite(xv);
      const int lane = L::first(L::mask_and(nan, L::first_lanes(left)));
      if (lane >= 0 && first_bad < 0) first_bad = i + lane;
      L::store_narrow_n(out + i, left, q);
    }
    return first_bad;
  }

  template <class Q>
  static int64_t quantize_finite(const float* x, int64_t n, float scale, int32_t zp, int32_t qmin, int32_t qmax, Q* out) {
    return quantize_run<true>(x, n, same(L::fsplat(scale)), same(L::splat(zp)), qmin, qmax, out);
  }

  template <class Q>
  static int64_t quantize(const float* x, int64_t n, float scale, int32_t zp, int32_t qmin, int32_t qmax, Q* out) {
    return quantize_run(x, n, same(L::fsplat(scale)), same(L::splat(zp)), qmin, qmax, out);
  }

  template <class Q>
  static int64_t quantize_pc(const float* x, int64_t n, const float* scale, const int32_t* zp, int32_t qmin,
                             int32_t qmax, Q* out) {
    return quantize_run(x, n, channel_scales(scale), channel_zero_points(zp), qmin, qmax, out);
  }

  // The tail's lanes load as zeros.
  static int64_t first_non_finite(const float* x, int64_t n) {
    for (int64_t i = 0; i < n; i += L::kLanes)
      if (const int lane = L::first(non_finite(L::fload_n(x + i, n - i))); lane >= 0) return i + lane;
    return -1;
  }

  template <class Q, class Scale, class Zp>
  static int64_t dequantize_run(const Q* q, int64_t n, Scale scale_at, Zp zp_at, int32_t qmin, int32_t qmax, float* out) {
    const auto vmin = L::splat(qmin), vmax = L::splat(qmax);
    for (int64_t i = 0; i < n; i += L::kLanes) {
      const auto v = L::load_widen_n(q + i, n - i);
      if (const int bad = first_out_of_range(v, vmin, vmax, n - i); bad >= 0) return i + bad;
      L::fstore_n(out + i, n - i, L::fmul(L::to_float(L::sub(v, zp_at(i, n - i))), scale_at(i, n - i)));
    }
    return -1;
  }

  template <class Q>
  static int64_t dequantize(const Q* q, int64_t n, float scale, int32_t zp, int32_t qmin, int32_t qmax, float* out) {
    return dequantize_run(q, n, same(L::fsplat(scale)), same(L::splat(zp)), qmin, qmax, out);
  }

  template <class Q>
  static int64_t dequantize_pc(const Q* q, int64_t n, const float* scale, const int32_t* zp, int32_t qmin,
                               int32_t qmax, float* out) {
    return dequantize_run(q, n, channel_scales(scale), channel_zero_points(zp), qmin, qmax, out);
  }
};

}  // namespace fixq::quant_detail
