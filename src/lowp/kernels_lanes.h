// Private, for the lowp/kernels_<family>.cpp files only: lowp/element.h's encode and decode
// and the OCP MX blocks of mx_block.h, written once over a family's lane primitives L
// (src/simd/lanes_<family>.h), L::kLanes values per step and the ragged tail in the same
// code under a lane mask, so every element goes through the vector statement of the scalar
// definition, which the tests compare with it bit for bit.
#pragma once

#include <array>
#include <cstdint>

#include "lowp/element.h"
#include "lowp/kernels.h"
#include "lowp/mx_block.h"
#include "lowp/pack.h"

namespace fixq::lowp_detail {

template <class L>
struct LowpLanes {
  static typename L::I splat(uint32_t v) { return L::splat(static_cast<int32_t>(v)); }

  // round_magnitude on L's lanes. Normal results: the same integer steps. Lanes below half
  // the smallest subnormal (float32 exponent field < e_zero, zeros included) are 0.
  // Subnormal results: |x| * 2^(bias + m - 1) counts subnormal steps; that product is exact
  // (a power of two, and the result is a normal float below 2^(m + 1)), and rounding it to
  // an integer with the explicit round-to-nearest-even immediate is round_magnitude's
  // rounding, whatever the FPU mode. bf16 needs no subnormal branch: it has float32's
  // exponent range, so the normal steps round float32 subnormals too.
  template <LowpType T>
  static typename L::I round_magnitude_lanes(typename L::I a) {
    constexpr Traits t = traits(T);
    constexpr uint32_t sh = 23 - t.m;
    constexpr uint32_t e_norm = 128 - t.bias;
    constexpr int e_zero = 127 - t.bias - t.m;  // 2^(e_zero - 127) is half the smallest subnormal
    const auto e = L::template srli<23>(a);
    auto r = L::add(a, splat((1u << (sh - 1)) - 1));
    r = L::add(r, L::bit_and(L::template srli<sh>(a), splat(1)));
    auto mag = L::sub(L::template srli<sh>(r), splat((127u - t.bias) << t.m));
    if constexpr (T != LowpType::Bf16) {
      const auto tiny = L::gt(L::splat(e_zero), e);
      mag = L::select(tiny, L::zero(), mag);
      const auto subnormal = L::mask_and_not(L::gt(splat(e_norm), e), tiny);
      if (L::any(subnormal)) {
        constexpr float kSteps = static_cast<float>(uint64_t{1} << (t.bias + t.m - 1));
        const auto q = L::truncate(L::round_even(L::fmul(L::from_bits(a), L::fsplat(kSteps))));
        mag = L::select(subnormal, q, mag);
      }
    }
    return mag;
  }

  // encode_bits on L's lanes of float32 patterns; the codes come back as int32 lanes.
  template <LowpType T, Overflow O>
  static typename L::I encode_lanes(typename L::I x) {
    constexpr Traits t = traits(T);
    constexpr bool kDefault = O == Overflow::Default;
    const auto zero = L::zero();
    const auto a = L::bit_and(x, splat(0x7FFFFFFFu));
    const auto nan = L::gt(a, splat(0x7F800000u));
    if constexpr (t.special == Special::E8m0) {
      const auto nonpositive = L::mask_or(L::gt(zero, x), L::eq(a, zero));
      auto code = L::template srli<23>(L::add(a, splat(0x400000)));
      const auto code_sub = L::select(L::gt(a, splat(0x5FFFFF)), splat(1), zero);
      code = L::select(L::gt(splat(0x800000), a), code_sub, code);
      code = L::select(L::gt(code, splat(t.max_mag)), splat(kDefault ? kE8m0Nan : t.max_mag), code);
      code = L::select(nonpositive, splat(kDefault ? kE8m0Nan : 0), code);
      return L::select(nan, splat(kE8m0Nan), code);
    } else {
      auto mag = round_magnitude_lanes<T>(a);
      const auto over = L::gt(mag, splat(t.max_mag));
      if constexpr (!kDefault || t.special == Special::FiniteOnly) {
        mag = L::min(mag, splat(t.max_mag));  // lanes not over are already <= max
      } else if constexpr (t.special == Special::Ieee) {
        mag = L::select(over, splat(t.inf_mag), mag);
      } else if constexpr (t.special == Special::NanAllOnes) {
        mag = L::select(over, splat(t.nan_mag), mag);
      }
      auto sign = L::template slli<t.bits - 1>(L::template srli<31>(x));
      if constexpr (t.special == Special::Fnuz) {
        sign = L::select(L::eq(mag, zero), zero, sign);
        auto code = L::bit_or(mag, sign);
        if constexpr (kDefault) code = L::select(over, splat(kFnuzNan), code);
        return L::select(nan, splat(kFnuzNan), code);
      } else if constexpr (t.special == Special::FiniteOnly) {
        return L::select(nan, splat(kNoNanMarker), L::bit_or(mag, sign));
      } else {
        return L::select(nan, L::bit_or(sign, splat(t.nan_mag)), L::bit_or(mag, sign));
      }
    }
  }

  // The high halves of decode_bits for every byte code (quiet NaN beyond the type's bits):
  // every float32 a code of at most 8 bits decodes to has zero low 16 bits (at most 3
  // mantissa bits; e8m0's 2^-127 is 0x00400000; the NaNs are 0x7FC00000 and 0xFFC00000).
  // Built from decode_bits, so it holds the scalar definition. One entry more than codes
  // (L::lookup_hi16's contract).
  template <LowpType T>
  static const std::array<uint16_t, 257>& decode_table() {
    static const std::array<uint16_t, 257> table = [] {
      alignas(64) std::array<uint16_t, 257> d{};
      for (uint32_t c = 0; c < 256; ++c)
        d[c] = static_cast<uint16_t>((c < (1u << traits(T).bits) ? decode_bits<T>(c) : kQuietNan) >> 16);
      return d;
    }();
    return table;
  }

  // decode_bits of byte codes (int32 lanes, < 256) of a type of at most 8 bits; codes
  // beyond the type's bits give the quiet NaN.
  template <LowpType T>
  static typename L::F decode_lanes(typename L::I codes) {
    constexpr int bits = traits(T).bits;
    const uint16_t* table = decode_table<T>().data();
    if constexpr (bits == 8) return L::from_bits(L::template lookup_hi16<256>(table, codes));
    const auto f = L::template lookup_hi16<64>(table, codes);
    return L::from_bits(L::select(L::gt(codes, splat((1u << bits) - 1)), splat(kQuietNan), f));
  }

  // fp16: vcvtph2ps is exact but quiets signalling NaNs; NaN lanes (rare: checked first)
  // widen their payload bit for bit instead, as decode_bits does.
  static typename L::F decode_fp16(typename L::F f, typename L::I h) {
    const auto nan = L::gt(L::bit_and(h, splat(0x7FFF)), splat(0x7C00));
    if (!L::any(nan)) return f;
    const auto sign = L::template slli<16>(L::bit_and(h, splat(0x8000)));
    const auto payload = L::template slli<13>(L::bit_and(h, splat(0x3FF)));
    return L::fselect(nan, L::from_bits(L::bit_or(L::bit_or(sign, splat(0x7F800000)), payload)), f);
  }

  template <LowpType T, Overflow O>
  static int64_t encode(const float* x, int64_t n, void* out) {
    using Code = CodeOf<T>;
    Code* codes = static_cast<Code*>(out);
    int64_t first_nan = -1;
    for (int64_t i = 0; i < n; i += L::kLanes) {
      const int64_t left = n - i;
      const auto c = encode_lanes<T, O>(L::bits(L::fload_n(x + i, left)));
      L::store_narrow_n(codes + i, left, c);
      if constexpr (traits(T).special == Special::FiniteOnly) {
        const int lane = L::first(L::mask_and(L::eq(c, splat(kNoNanMarker)), L::first_lanes(left)));
        if (lane >= 0 && first_nan < 0) first_nan = i + lane;
      }
    }
    return first_nan;
  }

  template <LowpType T>
  static int64_t decode(const void* in, int64_t n, float* x) {
    const auto* codes = static_cast<const CodeOf<T>*>(in);
    int64_t first_bad = -1;
    for (int64_t i = 0; i < n; i += L::kLanes) {
      const int64_t left = n - i;
      const auto c = L::load_widen_n(codes + i, left);
      typename L::F f;
      if constexpr (T == LowpType::Bf16) {
        f = L::from_bits(L::template slli<16>(c));
      } else if constexpr (T == LowpType::Fp16) {
        f = decode_fp16(L::load_halfs_n(codes + i, left), c);
      } else {
        f = decode_lanes<T>(c);
        if constexpr (traits(T).bits < 8) {
          const int lane = L::first(L::mask_and(L::gt(c, splat((1u << traits(T).bits) - 1)), L::first_lanes(left)));
          if (lane >= 0 && first_bad < 0) first_bad = i + lane;
        }
      }
      L::fstore_n(x + i, left, f);
    }
    return first_bad;
  }

  // ---- OCP MX: one 32-element block per step, kMxBlockSize / L::kLanes vectors of it. NaN
  // and infinity blocks go through the scalar block definition.
  static constexpr int kVectors = static_cast<int>(kMxBlockSize) / L::kLanes;

  // MXINT8's element: round half even (explicit immediate), clamp, convert.
  static typename L::I int8_codes(typename L::F t) {
    const auto r = L::round_even(L::fmul(t, L::fsplat(64.0f)));
    return L::truncate(L::fmin(L::fmax(r, L::fsplat(-127.0f)), L::fsplat(127.0f)));
  }

  template <MxType T>
  static void mx_quantize(const float* x, int64_t blocks, uint8_t* out) {
    using Tr = MxTraits<T>;
    for (int64_t b = 0; b < blocks; ++b) {
      const float* v = x + b * kMxBlockSize;
      uint8_t* o = out + b * Tr::block_bytes;
      typename L::F vals[kVectors];
      auto amax = L::zero();
      for (int k = 0; k < kVectors; ++k) {
        vals[k] = L::fload(v + L::kLanes * k);
        // Magnitude patterns of non-negative floats order as the values do.
        amax = L::max_u(amax, L::bit_and(L::bits(vals[k]), splat(0x7FFFFFFFu)));
      }
      const uint32_t m = L::hmax_u(amax);
      if (m >= 0x7F800000u) {
        mx_quantize_block<T>(v, o);
        continue;
      }
      const int s = mx_exponent(m, Tr::emax);
      o[0] = static_cast<uint8_t>(s + 127);
      const auto factor = L::fsplat(pow2f(-s));
      alignas(64) uint8_t codes[kMxBlockSize];  // MXINT8's two's complement bytes, or float codes
      for (int k = 0; k < kVectors; ++k) {
        const auto t = L::fmul(vals[k], factor);
        if constexpr (Tr::is_int) L::store_narrow(reinterpret_cast<int8_t*>(codes) + L::kLanes * k, int8_codes(t));
        else L::store_narrow(codes + L::kLanes * k, encode_lanes<Tr::element, Overflow::Saturate>(L::bits(t)));
      }
      pack_bits(Tr::bits, codes, kMxBlockSize, o + 1);
    }
  }

  template <MxType T>
  static void mx_dequantize(const uint8_t* in, int64_t blocks, float* x) {
    using Tr = MxTraits<T>;
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t* p = in + b * Tr::block_bytes;
      float* v = x + b * kMxBlockSize;
      if (p[0] == kMxNanScale) {
        mx_dequantize_block<T>(p, v);
        continue;
      }
      const auto scale = L::fsplat(pow2f(static_cast<int>(p[0]) - 127));
      alignas(64) uint8_t codes[kMxBlockSize];
      unpack_bits(Tr::bits, p + 1, kMxBlockSize, codes);
      for (int k = 0; k < kVectors; ++k) {
        typename L::F e;
        if constexpr (Tr::is_int) {
          e = L::fmul(L::to_float(L::load_widen(reinterpret_cast<const int8_t*>(codes) + L::kLanes * k)),
                      L::fsplat(0.015625f));
        } else {
          e = decode_lanes<Tr::element>(L::load_widen(codes + L::kLanes * k));
        }
        L::fstore(v + L::kLanes * k, L::fmul(e, scale));
      }
    }
  }
};

}  // namespace fixq::lowp_detail
