// Private, for gru/int/fast/kernels_avx512vbmi.cpp only: the fast GRU step on 32 int16 lanes
// (Lanes16Form, gru/int/fast/loop.h) for cells whose every intermediate fits int16: the unit update
// of 32 units in about as many operations as 16 units take in int32 lanes. The GEMM rows
// arrive as int32 accumulators and leave the fused requantization (gru/int/fast/loop.h) as int32;
// two vectors of them pack into one. Activation tables are read from their four byte
// registers with vpermi2b, as the int32 lanes of this family read them.
#pragma once

#include "simd/lanes_avx512vbmi.h"

#include "gru/int/fast/step.h"

namespace fixq::gru_detail {

namespace {

using L16 = simd::Avx512Vbmi;  // the int32 lanes' family
using V = __m512i;
constexpr int64_t kLanes = L16::kLanes, kLanes16 = 32;

V splat16(int32_t v) { return _mm512_set1_epi16(static_cast<int16_t>(v)); }
__m128i count(int s) { return _mm_cvtsi32_si128(s); }
__mmask32 first_lanes32(int64_t n) { return n >= kLanes16 ? ~__mmask32(0) : (__mmask32(1) << n) - 1u; }

// The family's State and the constants of the int16 lanes, prepared once per run.
struct State16 {
  State<L16> base;
  V zp[13], qmin[13], qmax[13];  // [Operand], 32 copies each
  V half[kUnitScales];           // 2^(r-1) (0 for r = 0)
  __m128i shift[kUnitScales], pre_a[kUnitScales], pre_b[kUnitScales];
  __m128i left[kUnitScales];
  std::array<bool, kUnitScales> is_left{};  // the ratio is a left shift
  V q_one;
  std::array<int32_t, 3> input_min{};  // [UnitLut]
};

void prepare16(const CellPlan& plan, const FastPlan& f, void* storage) {
  State16* s = new (storage) State16;
  prepare<L16>(plan, f, &s->base);
  if (!f.lanes16) return;
  const CellRefs c(plan);
  for (size_t o = 0; o < std::size(s->zp); ++o) {
    s->zp[o] = splat16(c.operand[o]->zp);
    s->qmin[o] = splat16(c.operand[o]->range.qmin);
    s->qmax[o] = splat16(c.operand[o]->range.qmax);
  }
  for (size_t i = 0; i < kUnitScales; ++i) {
    const int r = f.lane[i].right;
    s->half[i] = splat16(r > 0 ? 1 << (r - 1) : 0);
    s->shift[i] = count(r);
    s->left[i] = count(f.lane[i].left);
    s->is_left[i] = f.lane[i].left > 0;
    s->pre_a[i] = count(f.lanes16->pre_a[i]);
    s->pre_b[i] = count(f.lanes16->pre_b[i]);
  }
  s->q_one = splat16(c.q_one);
  for (size_t l = 0; l < 3; ++l) s->input_min[l] = c.lut[l]->input_min();
}

// The unit update (gru/int/unit_update.h) on 32 int16 lanes; lanes16_form proved every value,
// sum and shifted operand fits.
struct Lane16Domain {
  using V = __m512i;
  const State16& s;
  int64_t j;  // first unit of the vector

  V sub(V a, V b) const { return _mm512_sub_epi16(a, b); }
  V add(V a, V b) const { return _mm512_add_epi16(a, b); }
  V less_zp(Operand o, V v) const { return _mm512_sub_epi16(v, s.zp[static_cast<size_t>(o)]); }
  V plus_zp(Operand o, V v) const { return _mm512_add_epi16(v, s.zp[static_cast<size_t>(o)]); }
  V sat(Operand o, V v) const {
    const auto i = static_cast<size_t>(o);
    return _mm512_min_epi16(_mm512_max_epi16(v, s.qmin[i]), s.qmax[i]);
  }
  // A ratio above 1 is rare (calibration seldom gives one): the add-then-shift stays on the
  // straight path. Laid out the other way, GCC 12 put every right shift out of line, two
  // taken jumps each, twenty per 32 units.
  V scale(UnitScale u, V v) const {
    const auto i = static_cast<size_t>(u);
    if (s.is_left[i]) [[unlikely]]
      return _mm512_sll_epi16(v, s.left[i]);
    return _mm512_sra_epi16(_mm512_add_epi16(v, s.half[i]), s.shift[i]);
  }
  V product(UnitScale u, V a, V b) const {
    const auto i = static_cast<size_t>(u);
    return _mm512_mulhrs_epi16(_mm512_sll_epi16(a, s.pre_a[i]), _mm512_sll_epi16(b, s.pre_b[i]));
  }
  V bias(UnitBias b) const { return _mm512_load_si512(s.base.fast->lanes16->bias[static_cast<size_t>(b)].data() + j); }
  // table[v - input_min], looked up in the word lanes themselves: each word's low byte (the
  // index, in [0, 255]: v is saturated to the table's input range) picks within 128 entries
  // and its bit 7 the half; the high bytes (0) look up entries nobody reads. The entry is
  // then the word's low byte, sign-extended. No narrowing to bytes and widening back (three
  // shuffles, on the port the two vpermt2b use).
  V lut(UnitLut l, V v) const {
    const auto i = static_cast<size_t>(l);
    const V* t = s.base.bytes[i].b;
    const V idx = _mm512_sub_epi16(v, splat16(s.input_min[i]));
    const V lo = _mm512_permutex2var_epi8(t[0], idx, t[1]), hi = _mm512_permutex2var_epi8(t[2], idx, t[3]);
    return _mm512_srai_epi16(_mm512_slli_epi16(_mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), lo, hi), 8), 8);
  }
  V one_in_z_out() const { return s.q_one; }
};

// 32 int16 from two vectors of sixteen int32 in int16's range, in order.
V pack16(V lo, V hi) {
  return _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), _mm512_packs_epi32(lo, hi));
}

V load_h16(const void* h, IntType t, int64_t j, __mmask32 m) {
  if (t == IntType::S16) return _mm512_maskz_loadu_epi16(m, static_cast<const int16_t*>(h) + j);
  return _mm512_cvtepi8_epi16(_mm512_castsi512_si256(_mm512_maskz_loadu_epi8(m, static_cast<const int8_t*>(h) + j)));
}

// Values are in h's range: the truncations are exact. A whole vector is one store; the
// last, partial one goes out as two halves of sixteen int32 lanes under their masks.
void store_h16(void* y, IntType t, int64_t j, int64_t H, V v) {
  if (H - j >= kLanes16) {
    if (t == IntType::S16) _mm512_storeu_si512(static_cast<int16_t*>(y) + j, v);
    else _mm256_storeu_si256(reinterpret_cast<__m256i*>(static_cast<int8_t*>(y) + j), _mm512_cvtepi16_epi8(v));
    return;
  }
  for (int64_t half = 0; half < 2 && j + half * kLanes < H; ++half) {
    const V w = _mm512_cvtepi16_epi32(half == 0 ? _mm512_castsi512_si256(v) : _mm512_extracti64x4_epi64(v, 1));
    const int64_t at = j + half * kLanes;
    if (t == IntType::S16) _mm512_mask_cvtepi32_storeu_epi16(static_cast<int16_t*>(y) + at, L16::first_lanes(H - at), w);
    else _mm512_mask_cvtepi32_storeu_epi8(static_cast<int8_t*>(y) + at, L16::first_lanes(H - at), w);
  }
}

[[gnu::flatten]] void step_units16(const State16& s16, const int32_t* acc, const int16_t* wx, const void* h, void* y) {
  const State<L16>& s = s16.base;
  const FusedRequant& f = *s.fast->rh.fused;
  const int64_t H = s.H, hp = s.hp;
  for (int64_t j = 0; j < H; j += kLanes16) {
    const __mmask32 m = first_lanes32(H - j);
    // Units j + 16.. exist only below H (their fused rows and accumulators with them).
    const bool upper = j + kLanes < H;
    auto rh = [&](int64_t g) {
      const V lo = requant_fused<L16>(f, acc + g * H + j, g * hp + j);
      const V hi = upper ? requant_fused<L16>(f, acc + g * H + j + kLanes, g * hp + j + kLanes) : _mm512_setzero_si512();
      return pack16(lo, hi);
    };
    auto wx_at = [&](int64_t g) { return _mm512_maskz_loadu_epi16(m, wx + g * hp + j); };
    Lane16Domain d{s16, j};
    const UnitInputs<Lane16Domain> in{wx_at(0), wx_at(1), wx_at(2), rh(0), rh(1), rh(2), load_h16(h, s.h_storage, j, m)};
    store_h16(y, s.h_storage, j, H, unit_update(d, in));
  }
}

// The family's step: int16 lanes where the cell has their form, else the int32 lanes.
template <class Acc>
void step16(const void* state, const Acc* acc, const int16_t* wx, const void* h, void* y) {
  const State16& s = *static_cast<const State16*>(state);
  if constexpr (std::is_same_v<Acc, int32_t>) {
    // The form needs a plan of shifts; the fused rows need int32 accumulators.
    if (s.base.fast->lanes16 && s.base.fast->rh.fused) return step_units16(s, acc, wx, h, y);
  }
  step<L16>(&s.base, acc, wx, h, y);
}

template <class Acc>
void requant_wx16(const void* state, const Acc* acc, int16_t* out) {
  requant_wx<L16, Acc>(&static_cast<const State16*>(state)->base, acc, out);
}

}  // namespace

}  // namespace fixq::gru_detail
