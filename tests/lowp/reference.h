// An independent, slow reference for the low-precision float types, written from the
// format definitions and sharing nothing with src/lowp: a table of every finite value of
// the type (from the value formula, in double), nearest-value search by exact midpoint
// comparisons, and the special-value rules spelled out per kind of type. fixq's encoders
// use integer bit tricks instead; the tests hold them to this.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "fixq/lowp.h"

namespace fixq::lowp_ref {

enum class Kind {
  Ieee,        // top exponent: inf (mantissa 0) and NaNs
  NanAllOnes,  // S.1111.111 is NaN, everything else finite
  Fnuz,        // 1.0000.000 (negative zero's code) is the only NaN, everything else finite
  FiniteOnly,  // every code finite
  E8m0,        // unsigned 2^(code - 127), 0xFF NaN
};

struct Def {
  int bits, ebits, mbits, bias;
  Kind kind;
};

// From the definitions (OCP OFP8 and MX v1.0, IEEE 754, ml_dtypes' type list).
inline Def def(LowpType t) {
  switch (t) {
    case LowpType::E4m3fn: return {8, 4, 3, 7, Kind::NanAllOnes};
    case LowpType::E4m3fnuz: return {8, 4, 3, 8, Kind::Fnuz};
    case LowpType::E5m2: return {8, 5, 2, 15, Kind::Ieee};
    case LowpType::E5m2fnuz: return {8, 5, 2, 16, Kind::Fnuz};
    case LowpType::E8m0fnu: return {8, 8, 0, 127, Kind::E8m0};
    case LowpType::E4m3b11fnuz: return {8, 4, 3, 11, Kind::Fnuz};
    case LowpType::E2m3fn: return {6, 2, 3, 1, Kind::FiniteOnly};
    case LowpType::E3m2fn: return {6, 3, 2, 3, Kind::FiniteOnly};
    case LowpType::E2m1fn: return {4, 2, 1, 1, Kind::FiniteOnly};
    case LowpType::Bf16: return {16, 8, 7, 127, Kind::Ieee};
    case LowpType::Fp16: return {16, 5, 10, 15, Kind::Ieee};
  }
  return {};
}

class Ref {
 public:
  explicit Ref(LowpType t) : d_(def(t)) {
    const uint32_t mags = d_.kind == Kind::E8m0 ? 256u : 1u << (d_.bits - 1);
    for (uint32_t m = 0; m < mags && is_finite_mag(m); ++m) max_mag_ = m;
    // Every finite magnitude in code order (which is value order), then one virtual step
    // above the largest: the value code max+1 would have if the format went on. Rounding
    // to that step is overflow; its code's parity settles the tie at max + half a step.
    for (uint32_t m = 0; m <= max_mag_ + 1; ++m) values_.push_back(formula(m));
  }

  uint32_t max_mag() const { return max_mag_; }
  uint32_t overflow_index() const { return max_mag_ + 1; }

  // The index (magnitude code) of the value nearest to a (finite, >= 0); overflow_index()
  // when a rounds beyond the largest finite value. Ties: the even index; e8m0, which has no
  // mantissa to be even, rounds ties up (ml_dtypes' documented behaviour).
  uint32_t round_index(double a) const {
    if (a >= values_.back()) return overflow_index();
    if (a <= values_.front()) return 0;  // e8m0 has no zero: its smallest value is nearest
    const auto hi = static_cast<uint32_t>(std::upper_bound(values_.begin(), values_.end(), a) - values_.begin());
    const uint32_t lo = hi - 1;
    const double mid = (values_[lo] + values_[hi]) / 2;  // exact: few significant bits
    if (a < mid) return lo;
    if (a > mid) return hi;
    if (d_.kind == Kind::E8m0) return hi;
    return lo % 2 == 0 ? lo : hi;
  }

  // The code for magnitude index idx (possibly overflow_index()) with the given sign.
  std::optional<uint32_t> code_for(uint32_t idx, bool negative, Overflow o) const {
    const uint32_t sign = negative && d_.kind != Kind::E8m0 ? 1u << (d_.bits - 1) : 0u;
    if (d_.kind == Kind::E8m0 && negative) return o == Overflow::Default ? nan_code(false) : 0u;
    if (idx == overflow_index()) {
      if (o == Overflow::Saturate || d_.kind == Kind::FiniteOnly) return sign | max_mag_;
      if (d_.kind == Kind::Ieee) return sign | inf_mag();
      return nan_code(negative);
    }
    if (idx == 0 && d_.kind == Kind::Fnuz) return 0u;  // no negative zero
    return sign | idx;
  }

  // The expected code of the float32 pattern x; nullopt where fixq must report an error
  // (NaN into a type without NaN).
  std::optional<uint32_t> encode(uint32_t x, Overflow o) const {
    const float f = std::bit_cast<float>(x);
    const bool negative = std::signbit(f);
    if (std::isnan(f)) {
      if (d_.kind == Kind::FiniteOnly) return std::nullopt;
      return nan_code(negative);
    }
    if (d_.kind == Kind::E8m0 && f == 0.0f) return o == Overflow::Default ? nan_code(false) : 0u;
    if (std::isinf(f)) return code_for(overflow_index(), negative, o);
    return code_for(round_index(std::fabs(static_cast<double>(f))), negative, o);
  }

  // The value of a code; NaN for NaN codes, +-inf for infinities.
  double decode(uint32_t code) const {
    const bool negative = d_.kind != Kind::E8m0 && ((code >> (d_.bits - 1)) & 1) != 0;
    const uint32_t mag = d_.kind == Kind::E8m0 ? code : code & ((1u << (d_.bits - 1)) - 1);
    if (is_nan_code(code)) return std::numeric_limits<double>::quiet_NaN();
    if (d_.kind == Kind::Ieee && mag == inf_mag()) return negative ? -INFINITY : INFINITY;
    return negative ? -formula(mag) : formula(mag);
  }

  bool is_nan_code(uint32_t code) const {
    switch (d_.kind) {
      case Kind::Ieee: return (code & ((1u << (d_.bits - 1)) - 1)) > inf_mag();
      case Kind::NanAllOnes: return (code & ((1u << (d_.bits - 1)) - 1)) == (1u << (d_.bits - 1)) - 1;
      case Kind::Fnuz: return code == 1u << (d_.bits - 1);
      case Kind::E8m0: return code == 0xFF;
      case Kind::FiniteOnly: return false;
    }
    return false;
  }

  // The canonical NaN code fixq (and ml_dtypes) produce.
  uint32_t nan_code(bool negative) const {
    const uint32_t sign = negative ? 1u << (d_.bits - 1) : 0u;
    switch (d_.kind) {
      case Kind::Ieee: return sign | inf_mag() | (1u << (d_.mbits - 1));  // quiet: top mantissa bit
      case Kind::NanAllOnes: return sign | ((1u << (d_.bits - 1)) - 1);
      case Kind::Fnuz: return 1u << (d_.bits - 1);
      default: return 0xFF;
    }
  }

 private:
  bool is_finite_mag(uint32_t mag) const {
    switch (d_.kind) {
      case Kind::Ieee: return (mag >> d_.mbits) < (1u << d_.ebits) - 1;
      case Kind::NanAllOnes: return mag != (1u << (d_.bits - 1)) - 1;
      case Kind::E8m0: return mag != 0xFF;
      default: return true;
    }
  }

  uint32_t inf_mag() const { return ((1u << d_.ebits) - 1) << d_.mbits; }

  // (-1)^s * 2^(e - bias) * (1 + f / 2^m) for e > 0, 2^(1 - bias) * (f / 2^m) for e == 0;
  // e8m0: 2^(code - 127).
  double formula(uint32_t mag) const {
    if (d_.kind == Kind::E8m0) return std::ldexp(1.0, static_cast<int>(mag) - 127);
    const int e = static_cast<int>(mag >> d_.mbits);
    const double f = static_cast<double>(mag & ((1u << d_.mbits) - 1));
    if (e == 0) return std::ldexp(f, 1 - d_.bias - d_.mbits);
    return std::ldexp(std::ldexp(1.0, d_.mbits) + f, e - d_.bias - d_.mbits);
  }

  Def d_;
  uint32_t max_mag_ = 0;
  std::vector<double> values_;
};

}  // namespace fixq::lowp_ref
