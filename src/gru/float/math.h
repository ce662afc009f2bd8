// Private: the float GRU's elementwise arithmetic, written once for every instruction set.
//
// Each function is a template over an operations type O (O::V a float or a vector of
// floats, with add, sub, mul, fused multiply-add, div, min, max, compare-select and a few
// bit operations); the scalar reference instantiates it with ScalarOps below, each kernel
// family with its own vector operations (gru/float/kernels_lanes.h). Every step is one
// IEEE-754 single operation rounded to nearest, the same sequence on every path, so every
// path gives the same bits: each multiply-add written as o.fma is fused (one rounding:
// std::fma in the reference, vfmadd in the vector families), every other product and sum is
// rounded on its own (the library is built with -ffp-contract=off, and clang is told so
// below, so that no compiler fuses one path and not another), no reciprocal estimates, no
// libm.
//
// exp, sigmoid and tanh are fixq's own, not libm's: libm differs between versions and
// picks CPU-specific variants at load time (glibc's expf has an FMA one), and calibration
// must give the same bytes everywhere. Accuracy against the exact functions, the largest
// error over every float where the result is a normal float (measured once against
// double, with the fused multiply-adds; tests/gru/float_math_test.cpp checks the bounds on
// every 997th float):
//   exp_f32      1.009 ulp at -27.379 (bound 1 on the test's floats; the unfused form
//                had 0.98 everywhere),
//   sigmoid_f32  2.481 ulp  (bound 2.5; the error of 1 + exp(-v) and of the division add),
//   tanh_f32     1.332 ulp  (bound 2).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#if defined(__FAST_MATH__)
#error "the float GRU needs IEEE semantics: build without -ffast-math"
#endif
#if defined(__clang__)
#pragma clang fp contract(off)
#endif

namespace fixq::gru_float {

// exp(r) = 1 + r + r^2 P(r) on |r| <= ln(2)/2: the coefficients of P, fitted by Lawson's
// iteration (weighted least squares converging to minimax) for the relative error of exp
// (3.3e-9 before rounding the coefficients to float).
inline constexpr float kExpP[5] = {0.4999999403953552f, 0.16666515171527863f, 0.04166845604777336f,
                                   0.00836941134184599f, 0.0013813161058351398f};
// tanh(x) = x + x^3 Q(x^2) on |x| < kTanhPolyLimit, Q fitted the same way (4.4e-9).
inline constexpr float kTanhQ[5] = {-0.3333328068256378f, 0.13331441581249237f, -0.05373971536755562f,
                                    0.0206390842795372f, -0.005704984534531832f};
inline constexpr float kTanhPolyLimit = 0.625f;
// ln 2 in two parts (Cody and Waite): n * kLn2Hi is exact for |n| < 2^15 (kLn2Hi has 9
// significant bits), so x - n ln 2 loses nothing to cancellation.
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;
inline constexpr float kLog2e = 1.44269504088896341f;
// Adding and subtracting 1.5 * 2^23 rounds a float of magnitude < 2^22 to an integer, ties
// to even (the addition's own rounding does it).
inline constexpr float kRoundMagic = 12582912.0f;
// exp(x) is 0 below -150 and infinite above 150 in float; clamping there keeps n small.
inline constexpr float kExpClamp = 150.0f;

// exp(x) for every float x: 0 for very negative x, +inf above ln(FLT_MAX), NaN for NaN.
// x = n ln 2 + r with n = round(x log2(e)) (the product unrounded, in the fused add of the
// rounding constant); exp(x) = 2^n exp(r), with 2^n applied as two
// normal powers of two 2^n1 * 2^n2 (n1 = floor(n / 2)) so that results in the subnormal
// range and the overflow to infinity are rounded once, as a correctly rounded exp would.
template <class O>
typename O::V exp_f32(const O& o, typename O::V x) {
  using V = typename O::V;
  // max / min return their second operand for NaN (x86 semantics), so xc is always finite.
  const V xc = o.min(o.max(x, o.splat(-kExpClamp)), o.splat(kExpClamp));
  const V n = o.sub(o.fma(xc, o.splat(kLog2e), o.splat(kRoundMagic)), o.splat(kRoundMagic));
  // xc - n kLn2Hi is exact; the fused step subtracts n kLn2Lo unrounded.
  const V r = o.fma(n, o.splat(-kLn2Lo), o.fma(n, o.splat(-kLn2Hi), xc));
  V p = o.splat(kExpP[4]);
  for (int i = 3; i >= 0; --i) p = o.fma(p, r, o.splat(kExpP[i]));
  p = o.add(o.splat(1.0f), o.fma(o.mul(r, r), p, r));
  const V e = o.mul(o.mul(p, o.pow2_half_floor(n)), o.pow2_half_ceil(n));
  return o.select(o.is_nan(x), x, e);
}

// sigmoid(v) = 1 / (1 + exp(-v)).
template <class O>
typename O::V sigmoid_f32(const O& o, typename O::V v) {
  return o.div(o.splat(1.0f), o.add(o.splat(1.0f), exp_f32(o, o.neg(v))));
}

// tanh(x): the odd polynomial near 0, else 1 - 2 / (exp(2|x|) + 1), with x's sign.
template <class O>
typename O::V tanh_f32(const O& o, typename O::V x) {
  using V = typename O::V;
  const V a = o.abs(x), z = o.mul(a, a);
  V q = o.splat(kTanhQ[4]);
  for (int i = 3; i >= 0; --i) q = o.fma(q, z, o.splat(kTanhQ[i]));
  const V near = o.fma(a, o.mul(z, q), a);
  const V far = o.sub(o.splat(1.0f), o.div(o.splat(2.0f), o.add(exp_f32(o, o.add(a, a)), o.splat(1.0f))));
  return o.copy_sign(o.select(o.less(a, o.splat(kTanhPolyLimit)), near, far), x);
}

// The values of one GRU unit at one step (fixq/gru.h), each rounded as written there,
// sums left to right. Two are multiply-adds and fused: g_pre = fma(r, rh_add_br, wx_g) +
// bx_g and h = fma(z, h, new_contrib); r_rh and old_contrib, their products, are still
// rounded on their own for the tap (the integer GRU's operators, calibrated on them).
template <class O>
struct UnitValues {
  using V = typename O::V;
  V z_pre, z, r_pre, r, rh_add_br, r_rh, g_pre, g, old_contrib, new_contrib, h;
};

template <class O>
UnitValues<O> unit_update(const O& o, typename O::V wx_z, typename O::V wx_r, typename O::V wx_g,
                                      typename O::V rh_z, typename O::V rh_r, typename O::V rh_g,
                                      typename O::V bx_z, typename O::V bx_r, typename O::V bx_g,
                                      typename O::V br_z, typename O::V br_r, typename O::V br_g,
                                      typename O::V h) {
  UnitValues<O> u;
  u.z_pre = o.add(o.add(o.add(wx_z, rh_z), bx_z), br_z);
  u.z = sigmoid_f32(o, u.z_pre);
  u.r_pre = o.add(o.add(o.add(wx_r, rh_r), bx_r), br_r);
  u.r = sigmoid_f32(o, u.r_pre);
  // The reset gate scales only the recurrent part of the candidate (Haste, cuDNN, torch).
  u.rh_add_br = o.add(rh_g, br_g);
  u.r_rh = o.mul(u.r, u.rh_add_br);
  u.g_pre = o.add(o.fma(u.r, u.rh_add_br, wx_g), bx_g);
  u.g = tanh_f32(o, u.g_pre);
  u.old_contrib = o.mul(u.z, h);
  u.new_contrib = o.mul(o.sub(o.splat(1.0f), u.z), u.g);
  u.h = o.fma(u.z, h, u.new_contrib);
  return u;
}

// The operations on one float, the definition every vector family reproduces lane by lane.
struct ScalarOps {
  using V = float;
  static V splat(float v) { return v; }
  static V add(V a, V b) { return a + b; }
  static V sub(V a, V b) { return a - b; }
  static V mul(V a, V b) { return a * b; }
  static V fma(V a, V b, V c) { return std::fma(a, b, c); }  // a * b + c, rounded once
  static V div(V a, V b) { return a / b; }
  static V neg(V a) { return std::bit_cast<float>(std::bit_cast<uint32_t>(a) ^ 0x80000000u); }
  static V abs(V a) { return std::bit_cast<float>(std::bit_cast<uint32_t>(a) & 0x7FFFFFFFu); }
  // The magnitude of a with the sign of s.
  static V copy_sign(V a, V s) {
    return std::bit_cast<float>((std::bit_cast<uint32_t>(a) & 0x7FFFFFFFu) | (std::bit_cast<uint32_t>(s) & 0x80000000u));
  }
  // x86's maxps / minps: the second operand unless the first is strictly larger / smaller.
  static V max(V a, V b) { return a > b ? a : b; }
  static V min(V a, V b) { return a < b ? a : b; }
  static bool less(V a, V b) { return a < b; }
  static bool is_nan(V a) { return a != a; }
  static V select(bool m, V a, V b) { return m ? a : b; }
  // 2^floor(n / 2) and 2^(n - floor(n / 2)) for an integral n with |n| <= 252.
  static V pow2_half_floor(V n) { return pow2(static_cast<int32_t>(n) >> 1); }
  static V pow2_half_ceil(V n) {
    const auto i = static_cast<int32_t>(n);
    return pow2(i - (i >> 1));
  }
  static V pow2(int32_t e) { return std::bit_cast<float>(static_cast<uint32_t>(e + 127) << 23); }
};

}  // namespace fixq::gru_float
