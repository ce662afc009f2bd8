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
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

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
                      IntRange out, ScaleKind kind);
  int32_t operator()(int32_t q_x) const;
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
                           double scale_out, int32_t zp_out, IntRange out, ScaleKind kind);
  int32_t operator()(int32_t q_x, int32_t q_y) const;
};

}  // namespace fixq
