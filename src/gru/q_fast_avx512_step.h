// Private, for q_fast_avx512*.cpp only: the AVX-512 lane kernels of the fast GRU step,
// sixteen hidden units per vector, int32 lanes, the same integers as the reference
// (build_fast_plan proved every lane fits, q_fast.h). The products before them run on the
// GEMM's vpdpbusd kernels.
//
// One body for the AVX-512 families, which differ only in how they read the activation
// tables (q_lut_eval.h): GatherTables with vpgatherdd (AVX-512 F), ByteTables from four
// registers with vpermi2b (AVX512_VBMI) for the direct tables of 8-bit operators whose
// entries fit a byte. Everything here has internal linkage: each family's file compiles
// its own copy with its own flags, and no copy can stand in for another at link time.
#pragma once

#include "cpu/x86.h"

#include <array>
#include <new>
#include <type_traits>

#include "arith/lanes_avx512.h"
#include "gru/q_fast.h"
#include "gru/q_lut_eval.h"
#include "gru/q_unit_update.h"

namespace fixq::gru_detail {

namespace {

using namespace avx512_lanes;
constexpr int64_t kLanes = 16;

V load(const int32_t* p) { return _mm512_loadu_si512(p); }
V clamp_v(V v, V lo, V hi) { return _mm512_min_epi32(_mm512_max_epi32(v, lo), hi); }
__mmask16 first_lanes(int64_t n) { return n >= kLanes ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1u); }

// activation_lookup's operations on sixteen lanes (q_lut_eval.h).
struct LutOps {
  using V = avx512_lanes::V;
  V splat(int32_t v) const { return avx512_lanes::splat(v); }
  V add(V a, V b) const { return _mm512_add_epi32(a, b); }
  V sub(V a, V b) const { return _mm512_sub_epi32(a, b); }
  V shr(V v, int s) const { return _mm512_srlv_epi32(v, avx512_lanes::splat(s)); }
  V mask(V v, int32_t m) const { return _mm512_and_si512(v, avx512_lanes::splat(m)); }
  // The tables' entries as bytes (ByteTables), or null: gather the int32 entries.
  const __m512i* bytes = nullptr;
  V gather(const int32_t* table, V i) const {
#if defined(FIXQ_GRU_BYTE_TABLES)
    if (bytes != nullptr) {
      // i in [0, 256): bit 7 picks the upper or lower 128 bytes, vpermi2b the byte.
      const __m512i b = _mm512_castsi128_si512(_mm512_cvtepi32_epi8(i));
      const __m512i lo = _mm512_permutex2var_epi8(bytes[0], b, bytes[1]);
      const __m512i hi = _mm512_permutex2var_epi8(bytes[2], b, bytes[3]);
      return _mm512_cvtepi8_epi32(_mm512_castsi512_si128(_mm512_mask_blend_epi8(_mm512_movepi8_mask(b), lo, hi)));
    }
#endif
    return _mm512_i32gather_epi32(i, table, 4);
  }
  // Both knots of a lane in one 8-byte gather element, table[k] | table[k + 1] << 32 (the
  // last knot has no successor to read: k < knots - 1), eight lanes per vpgatherdq: half
  // the gathered elements of two vpgatherdd, and the pairs already sit in 64-bit lanes.
  V interp_knots(const int32_t* table, V k, V fr, int shift, int total) const {
    const V pow_shift = avx512_lanes::splat(int32_t{1} << shift), t = _mm512_set1_epi64(total);
    const V half = _mm512_set1_epi64(int64_t{1} << (total - 1));
    auto part = [&](__m256i k8, __m256i fr8) {
      const V p = _mm512_i32gather_epi64(k8, table, 4);
      const V d = _mm512_sub_epi32(_mm512_srli_epi64(p, 32), p);  // low halves: table[k + 1] - table[k]
      // fr >= 0: widened with sign or without alike.
      const V v = _mm512_add_epi64(_mm512_mul_epi32(p, pow_shift), _mm512_mul_epi32(d, _mm512_cvtepi32_epi64(fr8)));
      return _mm512_cvtepi64_epi32(_mm512_srav_epi64(_mm512_add_epi64(v, half), t));  // low 32 bits, as the lanes hold
    };
    return _mm512_inserti64x4(
        _mm512_castsi256_si512(part(_mm512_castsi512_si256(k), _mm512_castsi512_si256(fr))),
        part(_mm512_extracti64x4_epi64(k, 1), _mm512_extracti64x4_epi64(fr, 1)), 1);
  }
  V clamp(V v, int32_t lo, int32_t hi) const { return clamp_v(v, avx512_lanes::splat(lo), avx512_lanes::splat(hi)); }
};

// Everything a step reads, prepared once per run: the operators' constants and the unit
// update's scales in registers' form, and the plan's per-row and per-unit arrays.
struct State {
  // Plain arrays of vectors: std::array<__m512i, N> drops the type's alignment attribute.
  V zp[13], qmin[13], qmax[13];  // [Operand]
  std::array<LaneScaleRegs, kUnitScales> scale;
  std::array<bool, kUnitScales> wide;
  std::array<const ActivationLut*, 3> lut;
  // [UnitLut]: the direct table's 256 entries as bytes in four registers, where they fit.
  V bytes[3][4];
  std::array<bool, 3> has_bytes{};
  V q_one;
  const FastPlan* fast;
  int64_t H, hp;
  IntType h_storage;
};

void prepare(const CellPlan& plan, const FastPlan& f, void* storage) {
  const CellRefs c(plan);
  State* s = new (storage) State;
  for (size_t o = 0; o < std::size(s->zp); ++o) {
    s->zp[o] = splat(c.operand[o]->zp);
    s->qmin[o] = splat(c.operand[o]->range.qmin);
    s->qmax[o] = splat(c.operand[o]->range.qmax);
  }
  for (size_t i = 0; i < s->scale.size(); ++i) s->scale[i] = lane_scale_regs(f.lane[i]);
  s->wide = f.wide;
  s->lut = c.lut;
#if defined(FIXQ_GRU_BYTE_TABLES)
  for (size_t l = 0; l < s->lut.size(); ++l) {
    const std::span<const int32_t> t = s->lut[l]->table();
    alignas(64) int8_t b[256] = {};
    bool fits = s->lut[l]->direct() && t.size() <= 256;
    for (size_t i = 0; fits && i < t.size(); ++i) {
      fits = t[i] >= -128 && t[i] <= 127;
      if (fits) b[i] = static_cast<int8_t>(t[i]);
    }
    s->has_bytes[l] = fits;
    for (size_t v = 0; v < 4; ++v) s->bytes[l][v] = _mm512_load_si512(b + 64 * v);
  }
#endif
  s->q_one = splat(c.q_one);
  s->fast = &f;
  s->H = plan.hidden_size;
  s->hp = f.hp;
  s->h_storage = plan.h.storage;
}

// The unit update (q_unit_update.h) on sixteen int32 lanes. Shifts: the plan's scales are
// all one addition and one shift or a left shift (FastPlan::shifts).
template <bool Pow2, bool Shifts = false>
struct LaneDomain {
  using V = avx512_lanes::V;
  const State& s;
  int64_t j;  // first unit of the vector

  V sub(V a, V b) const { return _mm512_sub_epi32(a, b); }
  V add(V a, V b) const { return _mm512_add_epi32(a, b); }
  V less_zp(Operand o, V v) const { return _mm512_sub_epi32(v, s.zp[static_cast<size_t>(o)]); }
  V plus_zp(Operand o, V v) const { return _mm512_add_epi32(v, s.zp[static_cast<size_t>(o)]); }
  V sat(Operand o, V v) const { return clamp_v(v, s.qmin[static_cast<size_t>(o)], s.qmax[static_cast<size_t>(o)]); }
  V scale(UnitScale u, V v) const {
    const LaneScaleRegs& r = s.scale[static_cast<size_t>(u)];
    if constexpr (Shifts) {
      if (s.fast->lane[static_cast<size_t>(u)].left > 0) return _mm512_sllv_epi32(v, r.left);
      return _mm512_srav_epi32(_mm512_add_epi32(v, r.half), r.right);
    }
    if constexpr (Pow2) return apply_pow2(v, r);
    else return apply_multiplier(v, r);
  }
  V product(UnitScale u, V a, V b) const {
    const auto i = static_cast<size_t>(u);
    if constexpr (Shifts) return scale(u, _mm512_mullo_epi32(a, b));
    if (!s.wide[i]) return scale(u, _mm512_mullo_epi32(a, b));
    if constexpr (Pow2) return apply_wide_pow2(a, b, s.scale[i]);
    else return apply_wide_multiplier(a, b, s.scale[i]);
  }
  V bias(UnitBias b) const { return load(s.fast->bias[static_cast<size_t>(b)].data() + j); }
  V lut(UnitLut l, V v) const {
    const auto i = static_cast<size_t>(l);
    LutOps ops;
    if (s.has_bytes[i]) ops.bytes = s.bytes[i];
    return activation_lookup(ops, *s.lut[i], v);
  }
  V one_in_z_out() const { return s.q_one; }
};

// acc - comp for sixteen rows from n: int32 accumulators (where acc - comp fits int32,
// build_fast_plan) or int64 ones, clamped to the window where the output is not saturated.
V window(const RequantRows& r, const int32_t* acc, int64_t n) {
  const auto at = static_cast<size_t>(n);
  return clamp_v(_mm512_sub_epi32(load(acc + n), load(&r.comp32[at])), load(&r.lo[at]), load(&r.hi[at]));
}
V window(const RequantRows& r, const int64_t* acc, int64_t n) {
  auto half = [&](int64_t o) {
    const auto at = static_cast<size_t>(n + o);
    const V v = _mm512_sub_epi64(_mm512_loadu_si512(acc + n + o), _mm512_loadu_si512(&r.comp[at]));
    const V lo = _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(&r.lo[at])));
    const V hi = _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(&r.hi[at])));
    return _mm512_cvtepi64_epi32(_mm512_min_epi64(_mm512_max_epi64(v, lo), hi));  // in int32 now: exact
  };
  return _mm512_inserti64x4(_mm512_castsi256_si512(half(0)), half(8), 1);
}

// Sixteen rows of a GEMM requantized to their operator: sat(R_n(window) + zp).
template <bool Pow2, class Acc>
V requant(const RequantRows& r, const Acc* acc, int64_t n) {
  const V v = window(r, acc, n);
  const auto at = static_cast<size_t>(n);
  LaneScaleRegs s;
  s.m = load(&r.m[at]);
  s.left = load(&r.left[at]);
  s.right = load(&r.right[at]);
  s.right_m1 = load(&r.right_m1[at]);
  s.bit = load(&r.bit[at]);
  s.add_then_shift = false;
  V y;
  if constexpr (Pow2) {
    y = apply_pow2(v, s);
  } else {
    s.right_even = _mm512_and_si512(s.right, _mm512_set1_epi64(0xffffffff));
    s.right_odd = _mm512_srli_epi64(s.right, 32);
    y = apply_multiplier(v, s);
  }
  return clamp_v(_mm512_add_epi32(y, splat(r.zp)), splat(r.out.qmin), splat(r.out.qmax));
}

// Sixteen rows in the fused form (q_fast.h): acc points at row g * H + j, at = g * hp + j.
V requant_fused(const FusedRequant& f, const int32_t* acc, int64_t at) {
  const auto i = static_cast<size_t>(at);
  const V x = clamp_v(load(acc), _mm512_load_si512(&f.lo_acc[i]), _mm512_load_si512(&f.hi_acc[i]));
  return _mm512_srav_epi32(_mm512_add_epi32(x, _mm512_load_si512(&f.add[i])), _mm512_load_si512(&f.shift[i]));
}

template <class Acc>
void requant_wx(const void* state, const Acc* acc, int16_t* out) {
  const State& s = *static_cast<const State*>(state);
  const RequantRows& r = s.fast->wx;
  if constexpr (std::is_same_v<Acc, int32_t>) {
    if (r.fused) {
      for (int64_t g = 0; g < 3; ++g)
        for (int64_t j = 0; j < s.hp; j += kLanes)
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + g * s.hp + j),
                             _mm512_cvtepi32_epi16(requant_fused(*r.fused, acc + g * s.H + j, g * s.hp + j)));
      return;
    }
  }
  for (int64_t g = 0; g < 3; ++g)
    for (int64_t j = 0; j < s.hp; j += kLanes) {
      const V v = r.pow2 ? requant<true>(r, acc, g * s.H + j) : requant<false>(r, acc, g * s.H + j);
      // In Wx's 8- or 16-bit range: the truncation is exact.
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + g * s.hp + j), _mm512_cvtepi32_epi16(v));
    }
}

V load_wx(const int16_t* p) { return _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }

// h as int32 lanes from its storage; lanes past H are 0 (never stored back).
V load_h(const void* h, IntType t, int64_t j, int64_t H) {
  const __mmask16 m = first_lanes(H - j);
  if (t == IntType::S16) return _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(m, static_cast<const int16_t*>(h) + j));
  return _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, static_cast<const int8_t*>(h) + j));
}

void store_h(void* y, IntType t, int64_t j, int64_t H, V v) {
  const __mmask16 m = first_lanes(H - j);  // values are in h's range: truncation is exact
  if (t == IntType::S16) _mm512_mask_cvtepi32_storeu_epi16(static_cast<int16_t*>(y) + j, m, v);
  else _mm512_mask_cvtepi32_storeu_epi8(static_cast<int8_t*>(y) + j, m, v);
}

template <bool Pow2, bool Fused, bool Shifts = false, class Acc>
[[gnu::flatten]] void step_units(const State& s, const Acc* acc, const int16_t* wx, const void* h, void* y) {
  const RequantRows& r = s.fast->rh;
  const int64_t H = s.H, hp = s.hp;
  auto rh = [&](int64_t g, int64_t j) {
    if constexpr (Fused) return requant_fused(*r.fused, acc + g * H + j, g * hp + j);
    else return requant<Pow2>(r, acc, g * H + j);
  };
  for (int64_t j = 0; j < H; j += kLanes) {
    LaneDomain<Pow2, Shifts> d{s, j};
    const UnitInputs<LaneDomain<Pow2, Shifts>> in{load_wx(wx + j),          load_wx(wx + hp + j), load_wx(wx + 2 * hp + j),
                                          rh(0, j),                 rh(1, j),             rh(2, j),
                                          load_h(h, s.h_storage, j, H)};
    store_h(y, s.h_storage, j, H, unit_update(d, in));
  }
}

template <class Acc>
void step(const void* state, const Acc* acc, const int16_t* wx, const void* h, void* y) {
  const State& s = *static_cast<const State*>(state);
  if constexpr (std::is_same_v<Acc, int32_t>) {
    if (s.fast->rh.fused) {  // fused: a power-of-two plan
      if (s.fast->shifts) return step_units<true, true, true>(s, acc, wx, h, y);
      return step_units<true, true>(s, acc, wx, h, y);
    }
  }
  if (s.fast->pow2) step_units<true, false>(s, acc, wx, h, y);
  else step_units<false, false>(s, acc, wx, h, y);
}

}  // namespace

}  // namespace fixq::gru_detail
