// fixq/arith.h — the exact integer arithmetic every fixq module stands on.
//
// Part 1: rounding and saturation primitives. Each rounding rule lives in exactly one
//         function here and every module calls it:
//           * integer rescale by 2^-n rounds half up: (x + 2^(n-1)) >> n, arithmetic shift;
//           * float -> integer rounds half to even;
//           * results that leave their range saturate, they never wrap.
// Part 2: FixedPointScale, a positive real factor sigma held as (m, shift) so that
//         x * sigma is computed as (x * m + 2^(shift-1)) >> shift with one rounding
//         (seed 002), either with m a normalized 31-bit multiplier or, for power-of-two
//         scales, with m = 1 (a pure shift).
// Part 3: the three quantized primitives of seed 000 built on Parts 1-2: rescale from one
//         (scale, zero point) to another, quantized add, quantized multiply.
#pragma once

#include <cstdint>
#include <limits>

namespace fixq {

// ---------------------------------------------------------------------------------------
// Part 1: rounding and saturation
// ---------------------------------------------------------------------------------------

// floor((x + 2^(n-1)) / 2^n) for n in [1, 63]; x for n == 0: x / 2^n rounded half up
// (ties toward +infinity), exactly as (x + (1 << (n-1))) >> n would give if the addition
// could not overflow. Written as (x >> n) + bit (n-1) of x so that it never overflows.
constexpr int64_t rounding_shift_right_half_up(int64_t x, int n) {
  if (n <= 0) return x;
  if (n >= 64) return 0;  // |x| < 2^63 so x / 2^n lies in (-1/2, 1/2]
  return (x >> n) + ((x >> (n - 1)) & 1);
}

// Clamps x to [lo, hi].
constexpr int64_t saturate(int64_t x, int64_t lo, int64_t hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

// Saturating conversion of an integer to the integer type T.
template <class T>
constexpr T saturate_cast(int64_t x) {
  return static_cast<T>(saturate(x, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}

// x * 2^n for n >= 0, saturated to the int64 range instead of overflowing.
constexpr int64_t saturating_shift_left(int64_t x, int n) {
  if (x == 0 || n <= 0) return x;
  if (n >= 63) return x > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  const int64_t limit = std::numeric_limits<int64_t>::max() >> n;
  if (x > limit) return std::numeric_limits<int64_t>::max();
  if (x < -limit - 1) return std::numeric_limits<int64_t>::min();
  return x * (int64_t{1} << n);
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

  // Round-half-up of x * m / 2^shift, exact for every int64 x (128-bit product when the
  // 64-bit one would overflow), saturated to the int64 range.
  int64_t apply(int64_t x) const;

  friend bool operator==(const FixedPointScale&, const FixedPointScale&) = default;
};

// ---------------------------------------------------------------------------------------
// Part 3: quantized primitives (seed 000, "量化运算基础推导")
// ---------------------------------------------------------------------------------------

// How real ratios of scales are turned into integer arithmetic.
enum class ScaleMode {
  PowerOfTwo,  // every ratio must be an exact power of two: shifts only
  Multiplier,  // any ratio: normalized 31-bit fixed-point multiplier
};

// Builds the FixedPointScale for sigma under mode. PowerOfTwo throws fixq::Error unless
// sigma is an exact power of two.
FixedPointScale make_scale(double sigma, ScaleMode mode);

// An integer output range [qmin, qmax].
struct IntRange {
  int32_t qmin = 0;
  int32_t qmax = 0;
};

// The requantization step every integer path shares: sat(scale.apply(v) + zp_out) into
// [out.qmin, out.qmax], exact for every int64 v (no intermediate can overflow).
int32_t requantize(int64_t v, const FixedPointScale& scale, int32_t zp_out, IntRange out);

// q_y = sat(S_x/S_y * (q_x - Z_x) + Z_y): re-expresses a quantized value under new
// quantization parameters. One rounding (half up), then saturation to the output range.
struct Rescale {
  FixedPointScale ratio;  // S_x / S_y
  int32_t zp_in = 0;
  int32_t zp_out = 0;
  IntRange out;

  static Rescale make(double scale_in, int32_t zp_in, double scale_out, int32_t zp_out,
                      IntRange out, ScaleMode mode);
  int32_t operator()(int32_t q_x) const;
};

// q_z = sat(R(S_x/S_z * (q_x - Z_x)) + R(S_y/S_z * (q_y - Z_y)) + Z_z): each term is
// rescaled to the output scale with its own rounding (as seed 000 adds "shifted" terms),
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
                           double scale_out, int32_t zp_out, IntRange out, ScaleMode mode);
  int32_t operator()(int32_t q_x, int32_t q_y) const;
};

// q_z = sat(R(S_x*S_y/S_z * (q_x - Z_x)(q_y - Z_y)) + Z_z), one rounding (half up).
struct QuantizedMul {
  FixedPointScale ratio;  // S_x * S_y / S_z
  int32_t zp_x = 0;
  int32_t zp_y = 0;
  int32_t zp_out = 0;
  IntRange out;

  static QuantizedMul make(double scale_x, int32_t zp_x, double scale_y, int32_t zp_y,
                           double scale_out, int32_t zp_out, IntRange out, ScaleMode mode);
  int32_t operator()(int32_t q_x, int32_t q_y) const;
};

}  // namespace fixq
