// The AVX2 lane kernels of the fast GRU step: eight hidden units per vector, int32 lanes,
// the same integers as the reference (build_fast_plan proved every lane fits, q_fast.h).
#include "cpu/x86.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <type_traits>

#include "arith/lanes_avx2.h"
#include "gru/q_fast.h"
#include "gru/q_lut_eval.h"
#include "gru/q_unit_update.h"

namespace fixq::gru_detail::FIXQ_KERNEL_NS(avx2) {

namespace {

using namespace avx2_lanes;
constexpr int64_t kLanes = 8;

V load(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const V*>(p)); }
V clamp_v(V v, V lo, V hi) { return _mm256_min_epi32(_mm256_max_epi32(v, lo), hi); }

// activation_lookup's operations on eight lanes (q_lut_eval.h).
struct LutOps {
  using V = avx2_lanes::V;
  V splat(int32_t v) const { return avx2_lanes::splat(v); }
  V add(V a, V b) const { return _mm256_add_epi32(a, b); }
  V sub(V a, V b) const { return _mm256_sub_epi32(a, b); }
  V shr(V v, int s) const { return _mm256_srlv_epi32(v, avx2_lanes::splat(s)); }
  V mask(V v, int32_t m) const { return _mm256_and_si256(v, avx2_lanes::splat(m)); }
  V gather(const int32_t* table, V i) const { return _mm256_i32gather_epi32(table, i, 4); }
  V interp(V lo, V d, V fr, int shift, int total) const {
    const V pow_shift = avx2_lanes::splat(int32_t{1} << shift), t = _mm256_set1_epi64x(total);
    const V half = _mm256_set1_epi64x(int64_t{1} << (total - 1));
    auto part = [&](V lo_p, V d_p, V fr_p) {
      const V v = _mm256_add_epi64(_mm256_mul_epi32(lo_p, pow_shift), _mm256_mul_epi32(d_p, fr_p));
      return sra64(_mm256_add_epi64(v, half), t);
    };
    return interleave_low(part(lo, d, fr),
                          part(_mm256_srli_epi64(lo, 32), _mm256_srli_epi64(d, 32), _mm256_srli_epi64(fr, 32)));
  }
  V interp_knots(const int32_t* table, V k, V fr, int shift, int total) const {
    return interp_two_gathers(*this, table, k, fr, shift, total);
  }
  V clamp(V v, int32_t lo, int32_t hi) const { return clamp_v(v, avx2_lanes::splat(lo), avx2_lanes::splat(hi)); }
};

// Everything a step reads, prepared once per run: the operators' constants and the unit
// update's scales in registers' form, and the plan's per-row and per-unit arrays.
struct State {
  // Plain arrays of vectors: std::array<__m256i, N> drops the type's alignment attribute.
  V zp[13], qmin[13], qmax[13];  // [Operand]
  std::array<LaneScaleRegs, kUnitScales> scale;
  std::array<bool, kUnitScales> wide;
  std::array<const ActivationLut*, 3> lut;
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
  s->q_one = splat(c.q_one);
  s->fast = &f;
  s->H = plan.hidden_size;
  s->hp = f.hp;
  s->h_storage = plan.h.storage;
}

// The unit update (q_unit_update.h) on eight int32 lanes. Shifts: the plan's scales are
// all one addition and one shift or a left shift (FastPlan::shifts).
template <bool Pow2, bool Shifts = false>
struct LaneDomain {
  using V = avx2_lanes::V;
  const State& s;
  int64_t j;  // first unit of the vector

  V sub(V a, V b) const { return _mm256_sub_epi32(a, b); }
  V add(V a, V b) const { return _mm256_add_epi32(a, b); }
  V less_zp(Operand o, V v) const { return _mm256_sub_epi32(v, s.zp[static_cast<size_t>(o)]); }
  V plus_zp(Operand o, V v) const { return _mm256_add_epi32(v, s.zp[static_cast<size_t>(o)]); }
  V sat(Operand o, V v) const { return clamp_v(v, s.qmin[static_cast<size_t>(o)], s.qmax[static_cast<size_t>(o)]); }
  V scale(UnitScale u, V v) const {
    const LaneScaleRegs& r = s.scale[static_cast<size_t>(u)];
    if constexpr (Shifts) {
      if (s.fast->lane[static_cast<size_t>(u)].left > 0) return _mm256_sllv_epi32(v, r.left);
      return _mm256_srav_epi32(_mm256_add_epi32(v, r.half), r.right);
    }
    if constexpr (Pow2) return apply_pow2(v, r);
    else return apply_multiplier(v, r);
  }
  V product(UnitScale u, V a, V b) const {
    const auto i = static_cast<size_t>(u);
    if constexpr (Shifts) return scale(u, _mm256_mullo_epi32(a, b));
    if (!s.wide[i]) return scale(u, _mm256_mullo_epi32(a, b));
    if constexpr (Pow2) return apply_wide_pow2(a, b, s.scale[i]);
    else return apply_wide_multiplier(a, b, s.scale[i]);
  }
  V bias(UnitBias b) const { return load(s.fast->bias[static_cast<size_t>(b)].data() + j); }
  V lut(UnitLut l, V v) const { return activation_lookup(LutOps{}, *s.lut[static_cast<size_t>(l)], v); }
  V one_in_z_out() const { return s.q_one; }
};

// acc - comp for eight rows from n: int32 accumulators (where acc - comp fits int32,
// build_fast_plan) or int64 ones, clamped to the window where the output is not saturated.
V window(const RequantRows& r, const int32_t* acc, int64_t n) {
  const auto at = static_cast<size_t>(n);
  return clamp_v(_mm256_sub_epi32(load(acc + n), load(&r.comp32[at])), load(&r.lo[at]), load(&r.hi[at]));
}
V window(const RequantRows& r, const int64_t* acc, int64_t n) {
  auto half = [&](int64_t o) {
    const auto at = static_cast<size_t>(n + o);
    const V a = _mm256_loadu_si256(reinterpret_cast<const V*>(acc + n + o));
    const V c = _mm256_loadu_si256(reinterpret_cast<const V*>(&r.comp[at]));
    const V v = _mm256_sub_epi64(a, c);
    const V lo = _mm256_cvtepi32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(&r.lo[at])));
    const V hi = _mm256_cvtepi32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(&r.hi[at])));
    const V up = _mm256_blendv_epi8(v, lo, _mm256_cmpgt_epi64(lo, v));
    return _mm256_blendv_epi8(up, hi, _mm256_cmpgt_epi64(up, hi));
  };
  // Low dwords of both halves, in order.
  const V idx = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  const V a = _mm256_permutevar8x32_epi32(half(0), idx), b = _mm256_permutevar8x32_epi32(half(4), idx);
  return _mm256_permute2x128_si256(a, b, 0x20);
}

// Eight rows of a GEMM requantized to their operator: sat(R_n(window) + zp).
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
    s.right_even = _mm256_and_si256(s.right, _mm256_set1_epi64x(0xffffffff));
    s.right_odd = _mm256_srli_epi64(s.right, 32);
    y = apply_multiplier(v, s);
  }
  return clamp_v(_mm256_add_epi32(y, splat(r.zp)), splat(r.out.qmin), splat(r.out.qmax));
}

// Eight rows in the fused form (q_fast.h): acc points at row g * H + j, at = g * hp + j.
V requant_fused(const FusedRequant& f, const int32_t* acc, int64_t at) {
  const auto i = static_cast<size_t>(at);
  auto aligned = [](const int32_t* p) { return _mm256_load_si256(reinterpret_cast<const V*>(p)); };
  const V x = clamp_v(load(acc), aligned(&f.lo_acc[i]), aligned(&f.hi_acc[i]));
  return _mm256_srav_epi32(_mm256_add_epi32(x, aligned(&f.add[i])), aligned(&f.shift[i]));
}

// Eight int32 lanes in an int16 range to int16.
__m128i narrow16(V v) { return _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)); }

template <class Acc>
void requant_wx(const void* state, const Acc* acc, int16_t* out) {
  const State& s = *static_cast<const State*>(state);
  const RequantRows& r = s.fast->wx;
  if constexpr (std::is_same_v<Acc, int32_t>) {
    if (r.fused) {
      for (int64_t g = 0; g < 3; ++g)
        for (int64_t j = 0; j < s.hp; j += kLanes)
          _mm_storeu_si128(reinterpret_cast<__m128i*>(out + g * s.hp + j),
                           narrow16(requant_fused(*r.fused, acc + g * s.H + j, g * s.hp + j)));
      return;
    }
  }
  for (int64_t g = 0; g < 3; ++g)
    for (int64_t j = 0; j < s.hp; j += kLanes) {
      const V v = r.pow2 ? requant<true>(r, acc, g * s.H + j) : requant<false>(r, acc, g * s.H + j);
      // In Wx's 8- or 16-bit range: the saturating pack is exact.
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + g * s.hp + j), narrow16(v));
    }
}

V load_wx(const int16_t* p) { return _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }

// h as int32 lanes from its storage; lanes past H are 0 (never stored back).
V load_h(const void* h, IntType t, int64_t j, int64_t H) {
  const int64_t n = std::min<int64_t>(kLanes, H - j), bytes = int_type_bytes(t);
  alignas(16) unsigned char buf[16] = {};
  std::memcpy(buf, static_cast<const char*>(h) + j * bytes, static_cast<size_t>(n * bytes));
  const __m128i v = _mm_load_si128(reinterpret_cast<const __m128i*>(buf));
  return t == IntType::S16 ? _mm256_cvtepi16_epi32(v) : _mm256_cvtepi8_epi32(v);
}

void store_h(void* y, IntType t, int64_t j, int64_t H, V v) {
  const int64_t n = std::min<int64_t>(kLanes, H - j), bytes = int_type_bytes(t);
  // Values are in h's range: the saturating packs are exact.
  const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  alignas(16) unsigned char buf[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(buf), t == IntType::S16 ? w : _mm_packs_epi16(w, w));
  std::memcpy(static_cast<char*>(y) + j * bytes, buf, static_cast<size_t>(n * bytes));
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

constexpr GruLaneKernels kLanesTable{"avx2, 8 int32 lanes", kLanes, sizeof(State), prepare,
                                     requant_wx<int32_t>,    requant_wx<int64_t>, step<int32_t>, step<int64_t>};

}  // namespace

extern const GruKernels kGru;
const GruKernels kGru{&kLanesTable};

}  // namespace fixq::gru_detail::FIXQ_KERNEL_NS(avx2)
