// fixq/arith.h — the exact integer arithmetic every fixq module stands on.
//
// Part 1: rounding and saturation primitives. Each rounding rule of fixq's own integer
//         arithmetic lives in exactly one function here and every module calls it:
//           * integer rescale by 2^-n rounds half up: (x + 2^(n-1)) >> n, arithmetic shift;
//           * float -> integer rounds half to even;
//           * results that leave their range saturate, they never wrap.
//         Vector kernels (the *_avx2 / *_avx512 files, arith/lane_scale.h) restate these
//         rules in lanes; their tests hold them to these functions bit for bit.
//         Three roundings are not these rules, on purpose, each confined to one file:
//           * float -> narrower float (src/lowp/element.h: fp8, fp6, fp4, bf16, fp16, e8m0):
//             the significand rounds to nearest even as IEEE 754 and the OCP MX v1.0 spec
//             define each conversion (e8m0: ties up, as ml_dtypes); the GGUF blocks' fp16
//             fields use the same encoder;
//           * GGUF block quantizers (src/gguf/ggml_arith.h): ggml's reference quantizers
//             define the file bytes, so their own rules are reproduced: nearest_int (the
//             1.5 * 2^23 add, half to even only for |v| <= 2^22), roundf and lroundf (ties
//             away from zero), x86 truncation, UE4M3's half up; ggml's golden vectors check
//             them;
//           * calib/expected_error.cpp integrates the error over nearest-integer cells
//             floor(u + 1/2): ties have no probability mass there, so no value is rounded.
// Part 2: FixedPointScale, a positive real factor sigma held as (m, shift) so that
//         x * sigma is computed as (x * m + 2^(shift-1)) >> shift with one rounding
//         (docs/spec.md 2.3), either with m a normalized 31-bit multiplier or, for power-of-two
//         scales, with m = 1 (a pure shift).
// Part 3: the three quantized primitives of docs/spec.md 2.5 built on Parts 1-2: rescale from one
//         (scale, zero point) to another, quantized add, quantized multiply.
//
// Parts 1 and 2 and the evaluation of Part 3 are formulas a GPU shares (fixq/host_device.h):
// inline, FIXQ_HOST_DEVICE, and free of what device code lacks (exceptions, <cmath>,
// std::numeric_limits, std::clamp). Only building a scale from a real number (from_real,
// make, make_scale) is host code.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "fixq/host_device.h"

namespace fixq {

namespace detail {
// A 128-bit integer for exact intermediate products (a GCC, Clang and nvcc extension; the
// __extension__ keeps -Wpedantic quiet about it).
__extension__ typedef __int128 int128;
}  // namespace detail

// ---------------------------------------------------------------------------------------
// Part 1: rounding and saturation
// ---------------------------------------------------------------------------------------

// floor((x + 2^(n-1)) / 2^n) for n in [1, 63]; x for n == 0: x / 2^n rounded half up
// (ties toward +infinity), exactly as (x + (1 << (n-1))) >> n would give if the addition
// could not overflow. Written as (x >> n) + bit (n-1) of x so that it never overflows.
FIXQ_HOST_DEVICE constexpr int64_t rounding_shift_right_half_up(int64_t x, int n) {
  if (n <= 0) return x;
  if (n >= 64) return 0;  // |x| < 2^63 so x / 2^n lies in (-1/2, 1/2]
  return (x >> n) + ((x >> (n - 1)) & 1);
}

// Clamps x to [lo, hi].
FIXQ_HOST_DEVICE constexpr int64_t saturate(int64_t x, int64_t lo, int64_t hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

// Saturating conversion of an integer to the integer type T.
// T's range, without std::numeric_limits (host only in device code): the two's
// complement range of a signed T, [0, 2^bits - 1] of an unsigned one.
template <class T>
FIXQ_HOST_DEVICE constexpr int64_t int_type_min() {
  return T(-1) < T(0) ? -(int64_t{1} << (8 * sizeof(T) - 1)) : 0;
}
template <class T>
FIXQ_HOST_DEVICE constexpr int64_t int_type_max() {
  return T(-1) < T(0) ? static_cast<int64_t>((uint64_t{1} << (8 * sizeof(T) - 1)) - 1)
                      : static_cast<int64_t>((uint64_t{1} << (8 * sizeof(T))) - 1);
}

// Saturating conversion of an integer to an integer type T of at most 32 bits.
template <class T>
FIXQ_HOST_DEVICE constexpr T saturate_cast(int64_t x) {
  static_assert(sizeof(T) <= 4, "saturate_cast: types of at most 32 bits");
  return static_cast<T>(saturate(x, int_type_min<T>(), int_type_max<T>()));
}

// x * 2^n for n >= 0, saturated to the int64 range instead of overflowing.
FIXQ_HOST_DEVICE constexpr int64_t saturating_shift_left(int64_t x, int n) {
  if (x == 0 || n <= 0) return x;
  if (n >= 63) return x > 0 ? INT64_MAX : INT64_MIN;
  const int64_t limit = INT64_MAX >> n;
  if (x > limit) return INT64_MAX;
  if (x < -limit - 1) return INT64_MIN;
  return x * (int64_t{1} << n);
}

// A 128-bit value saturated to the int64 range.
FIXQ_HOST_DEVICE constexpr int64_t saturate_to_int64(detail::int128 x) {
  return x > INT64_MAX ? INT64_MAX : x < INT64_MIN ? INT64_MIN : static_cast<int64_t>(x);
}

// rounding_shift_right_half_up of a 128-bit x, n >= 1, saturated to the int64 range:
// floor(x / 2^n) plus bit n-1 of x.
FIXQ_HOST_DEVICE constexpr int64_t rounding_shift_right_half_up_128(detail::int128 x, int n) {
  // |x| <= 2^94 for every use here, so x / 2^n lies in (-1/2, 1/2] for n >= 127 (and the
  // shifts below stay defined).
  if (n >= 127) return 0;
  return saturate_to_int64((x >> n) + ((x >> (n - 1)) & 1));
}

// x rounded to the nearest integer, ties to even, independent of the FPU rounding mode.
// Exact for every finite double; NaN and infinities are returned unchanged.
double round_half_even(double x);

// x rounded half to even and saturated to [lo, hi]. NaN is the caller's business: it
// must be filtered before (quantizers map or reject it explicitly); here it gives lo.
int64_t round_half_even_saturate(double x, int64_t lo, int64_t hi);

// ---------------------------------------------------------------------------------------
// Part 2: fixed-point scales
// ---------------------------------------------------------------------------------------

// A positive real factor sigma represented as m * 2^-shift.
//   * from_real(sigma): m is normalized, 2^30 <= m < 2^31 (31 significant bits and a sign
//     bit: the best an int32 multiplier can hold), m = round_half_even(sigma * 2^shift).
//     Supported sigma: [2^-40, 2^20]; shift is then in [10, 70].
//   * pow2(n): sigma = 2^-n exactly, m = 1; n may be negative (a left shift).
// apply(x) = (x * m + 2^(shift-1)) >> shift with one rounding, half up; for shift < 0,
// x * m * 2^-shift saturated. Accuracy of from_real: |m * 2^-shift - sigma| <= 2^-(shift+1),
// so |apply(x) - x * sigma| <= 1/2 + |x| * 2^-(shift+1) <= 1/2 + |x| * sigma * 2^-31.
struct FixedPointScale {
  static constexpr double kMinReal = 0x1p-40;
  static constexpr double kMaxReal = 0x1p20;

  int32_t m = 1;
  int shift = 0;

  // Throws fixq::Error for sigma outside [kMinReal, kMaxReal], NaN or infinite.
  static FixedPointScale from_real(double sigma);
  // sigma = 2^-n; throws for n outside [-62, 126].
  static FixedPointScale pow2(int n);

  bool is_pow2() const { return m == 1; }
  // The real factor represented, m * 2^-shift (exact in double).
  double real() const;

  // Round-half-up of x * m / 2^shift, exact for every int64 x (the product is formed in
  // 128 bits), saturated to the int64 range; for shift <= 0, x * m * 2^-shift saturated.
  FIXQ_HOST_DEVICE constexpr int64_t apply(int64_t x) const {
    const detail::int128 p = static_cast<detail::int128>(x) * m;  // |p| < 2^94
    const bool fits = p >= INT64_MIN && p <= INT64_MAX;
    if (shift <= 0) return fits ? saturating_shift_left(static_cast<int64_t>(p), -shift) : saturate_to_int64(p);
    return fits ? rounding_shift_right_half_up(static_cast<int64_t>(p), shift) : rounding_shift_right_half_up_128(p, shift);
  }

  friend bool operator==(const FixedPointScale&, const FixedPointScale&) = default;
};

// ---------------------------------------------------------------------------------------
// Part 3: quantized primitives (docs/spec.md 2.5; Jacob et al., CVPR 2018, section 2)
// ---------------------------------------------------------------------------------------

// The kind of a quantization scale, and with it how every ratio of scales becomes integer
// arithmetic. One enum and one spelling for the library, the command line, Python and the
// files (to_string / parse_scale_kind):
//   PowerOfTwo  "pow2":       every scale is 2^-e, so every ratio is an exact power of two
//                             and is applied as a shift;
//   Multiplier  "multiplier": any positive real scale; a ratio is applied as a normalized
//                             31-bit fixed-point multiplier (FixedPointScale::from_real).
enum class ScaleKind { PowerOfTwo, Multiplier };

// "pow2" or "multiplier": the one spelling fixq prints and writes.
std::string to_string(ScaleKind kind);
// The spelling above, plus the earlier spellings that saved configurations and scripts may
// hold, each with a deprecation note (fixq/error.h): "float" (quantization schemes' former
// name for multiplier scales) and "power-of-two". Throws fixq::Error "<what> must be pow2 or
// multiplier, got '<text>'" for anything else (what: the option or field being read).
ScaleKind parse_scale_kind(std::string_view text, std::string_view what = "scales");

// Builds the FixedPointScale for sigma under kind. PowerOfTwo throws fixq::Error unless
// sigma is an exact power of two.
FixedPointScale make_scale(double sigma, ScaleKind kind);

// An integer output range [qmin, qmax].
struct IntRange {
  int32_t qmin = 0;
  int32_t qmax = 0;
};

// A rescaled term of the quantized primitives, scale.apply(v) clamped to +-2^40 before
// zero points are added: a value that large saturates any output of up to 32 bits anyway,
// and the clamp keeps the int64 sums of Part 3 from overflowing whatever the ratio.
FIXQ_HOST_DEVICE constexpr int64_t rescaled_term(const FixedPointScale& scale, int64_t v) {
  constexpr int64_t kTermGuard = int64_t{1} << 40;
  return saturate(scale.apply(v), -kTermGuard, kTermGuard);
}

// The requantization step every integer path shares: sat(scale.apply(v) + zp_out) into
// [out.qmin, out.qmax], exact for every int64 v (no intermediate can overflow).
FIXQ_HOST_DEVICE constexpr int32_t requantize(int64_t v, const FixedPointScale& scale, int32_t zp_out, IntRange out) {
  return static_cast<int32_t>(saturate(rescaled_term(scale, v) + zp_out, out.qmin, out.qmax));
}

// q_y = sat(S_x/S_y * (q_x - Z_x) + Z_y): re-expresses a quantized value under new
// quantization parameters. One rounding (half up), then saturation to the output range.
struct Rescale {
  FixedPointScale ratio;  // S_x / S_y
  int32_t zp_in = 0;
  int32_t zp_out = 0;
  IntRange out;

  static Rescale make(double scale_in, int32_t zp_in, double scale_out, int32_t zp_out,
                      IntRange out, ScaleKind kind);
  FIXQ_HOST_DEVICE constexpr int32_t operator()(int32_t q_x) const {
    return requantize(int64_t{q_x} - zp_in, ratio, zp_out, out);
  }
};

// q_z = sat(R(S_x/S_z * (q_x - Z_x)) + R(S_y/S_z * (q_y - Z_y)) + Z_z): each term is
// rescaled to the output scale with its own rounding (docs/spec.md 2.5),
// so the result is within 1 LSB of the exact sum before saturation, plus the multiplier
// bound of FixedPointScale.
struct QuantizedAdd {
  FixedPointScale ratio_x;  // S_x / S_z
  FixedPointScale ratio_y;  // S_y / S_z
  int32_t zp_x = 0;
  int32_t zp_y = 0;
  int32_t zp_out = 0;
  IntRange out;

  static QuantizedAdd make(double scale_x, int32_t zp_x, double scale_y, int32_t zp_y,
                           double scale_out, int32_t zp_out, IntRange out, ScaleKind kind);
  FIXQ_HOST_DEVICE constexpr int32_t operator()(int32_t q_x, int32_t q_y) const {
    const int64_t sum = rescaled_term(ratio_x, int64_t{q_x} - zp_x) + rescaled_term(ratio_y, int64_t{q_y} - zp_y);
    return static_cast<int32_t>(saturate(sum + zp_out, out.qmin, out.qmax));
  }
};

// q_z = sat(R(S_x*S_y/S_z * (q_x - Z_x)(q_y - Z_y)) + Z_z), one rounding (half up).
struct QuantizedMul {
  FixedPointScale ratio;  // S_x * S_y / S_z
  int32_t zp_x = 0;
  int32_t zp_y = 0;
  int32_t zp_out = 0;
  IntRange out;

  static QuantizedMul make(double scale_x, int32_t zp_x, double scale_y, int32_t zp_y,
                           double scale_out, int32_t zp_out, IntRange out, ScaleKind kind);
  // The differences of int32 values fit 33 bits; their product is formed in 128 bits and
  // saturated to int64, which is exact for every operand of a format of up to 31 bits.
  FIXQ_HOST_DEVICE constexpr int32_t operator()(int32_t q_x, int32_t q_y) const {
    const detail::int128 prod = static_cast<detail::int128>(int64_t{q_x} - zp_x) * (int64_t{q_y} - zp_y);
    return requantize(saturate_to_int64(prod), ratio, zp_out, out);
  }
};

}  // namespace fixq
