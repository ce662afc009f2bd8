// The AVX2 lane kernels of the fast GRU step: eight hidden units per vector, int32 lanes,
// the same integers as the reference (build_fast_plan proved every lane fits, q_fast.h).
#include "cpu/x86.h"

#include "arith/lanes_avx2.h"
#include "gru/q_fast.h"
#include "gru/q_lut_eval.h"
#include "gru/q_unit_update.h"

namespace fixq::gru_detail::FIXQ_KERNEL_NS(avx2) {

namespace {

using namespace avx2_lanes;

V load(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const V*>(p)); }
void store(int32_t* p, V v) { _mm256_storeu_si256(reinterpret_cast<V*>(p), v); }
V clamp_v(V v, V lo, V hi) { return _mm256_min_epi32(_mm256_max_epi32(v, lo), hi); }

// activation_lookup's operations on eight lanes (q_lut_eval.h).
struct LutOps {
  using V = avx2_lanes::V;
  V splat(int32_t v) const { return avx2_lanes::splat(v); }
  V add(V a, V b) const { return _mm256_add_epi32(a, b); }
  V sub(V a, V b) const { return _mm256_sub_epi32(a, b); }
  V shr(V v, int s) const { return _mm256_srl_epi32(v, _mm_cvtsi32_si128(s)); }
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
  V clamp(V v, int32_t lo, int32_t hi) const { return clamp_v(v, avx2_lanes::splat(lo), avx2_lanes::splat(hi)); }
};

// Everything the unit update needs in registers, prepared once per call.
struct LanePlan {
  std::array<V, 13> zp, qmin, qmax;  // [Operand]
  std::array<LaneScaleRegs, kUnitScales> scale;
  std::array<bool, kUnitScales> wide;
  std::array<const ActivationLut*, 3> lut;
  V q_one;

  LanePlan(const CellRefs& c, const FastPlan& f) {
    for (size_t o = 0; o < zp.size(); ++o) {
      zp[o] = splat(c.operand[o]->zp);
      qmin[o] = splat(c.operand[o]->range.qmin);
      qmax[o] = splat(c.operand[o]->range.qmax);
    }
    for (size_t s = 0; s < scale.size(); ++s) scale[s] = lane_scale_regs(f.lane[s]);
    wide = f.wide;
    lut = c.lut;
    q_one = splat(c.q_one);
  }
};

// The unit update (q_unit_update.h) on eight int32 lanes.
template <bool Pow2>
struct LaneDomain {
  using V = avx2_lanes::V;
  const LanePlan& p;
  const FastPlan& f;
  int64_t j;  // first unit of the vector

  V sub(V a, V b) const { return _mm256_sub_epi32(a, b); }
  V add(V a, V b) const { return _mm256_add_epi32(a, b); }
  V less_zp(Operand o, V v) const { return _mm256_sub_epi32(v, p.zp[static_cast<size_t>(o)]); }
  V plus_zp(Operand o, V v) const { return _mm256_add_epi32(v, p.zp[static_cast<size_t>(o)]); }
  V sat(Operand o, V v) const { return clamp_v(v, p.qmin[static_cast<size_t>(o)], p.qmax[static_cast<size_t>(o)]); }
  V scale(UnitScale s, V v) const {
    const LaneScaleRegs& r = p.scale[static_cast<size_t>(s)];
    if constexpr (Pow2) return apply_pow2(v, r);
    else return apply_multiplier(v, r);
  }
  V product(UnitScale s, V a, V b) const {
    const auto i = static_cast<size_t>(s);
    if (!p.wide[i]) return scale(s, _mm256_mullo_epi32(a, b));
    if constexpr (Pow2) return apply_wide_pow2(a, b, p.scale[i]);
    else return apply_wide_multiplier(a, b, p.scale[i]);
  }
  V bias(UnitBias b) const { return load(f.bias[static_cast<size_t>(b)].data() + j); }
  V lut(UnitLut l, V v) const { return activation_lookup(LutOps{}, *p.lut[static_cast<size_t>(l)], v); }
  V one_in_z_out() const { return p.q_one; }
};

template <bool Pow2>
void update(const CellPlan& plan, const FastPlan& f, const int32_t* wx, const int32_t* rh, const int32_t* h,
            int32_t* h_new) {
  const int64_t hp = f.hp;
  const CellRefs refs(plan);
  const LanePlan lp(refs, f);
  for (int64_t j = 0; j < hp; j += 8) {
    LaneDomain<Pow2> d{lp, f, j};
    const UnitInputs<LaneDomain<Pow2>> in{load(wx + j),      load(wx + hp + j), load(wx + 2 * hp + j), load(rh + j),
                                          load(rh + hp + j), load(rh + 2 * hp + j), load(h + j)};
    store(h_new + j, unit_update(d, in));
  }
}

template <bool Pow2, class LoadAcc>
void requant_rows(const RequantRows& r, int64_t H, int64_t hp, int32_t* out, LoadAcc load_v) {
  const V zp = splat(r.zp), qmin = splat(r.out.qmin), qmax = splat(r.out.qmax);
  for (int64_t g = 0; g < 3; ++g)
    for (int64_t j = 0; j < hp; j += 8) {
      const int64_t n = g * H + j;
      const auto at = static_cast<size_t>(n);
      const V v = clamp_v(load_v(n), load(&r.lo[at]), load(&r.hi[at]));
      const LaneScaleRegs s = lane_scale_regs(load(&r.m[at]), load(&r.left[at]), load(&r.right[at]));
      const V y = Pow2 ? apply_pow2(v, s) : apply_multiplier(v, s);
      store(out + g * hp + j, clamp_v(_mm256_add_epi32(y, zp), qmin, qmax));
    }
}

// Eight int64 lanes minus their compensation, clamped to the window, as int32 lanes.
V window64(const int64_t* acc, const RequantRows& r, int64_t n) {
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

void requant_rows_s32(const RequantRows& r, int64_t H, int64_t hp, const int32_t* acc, int32_t* out) {
  auto v = [&](int64_t n) {
    // acc - comp fits int32 here (build_fast_plan), and so does comp.
    const V idx = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    const auto at = static_cast<size_t>(n);
    const V c = _mm256_permutevar8x32_epi32(_mm256_loadu_si256(reinterpret_cast<const V*>(&r.comp[at])), idx);
    const V c2 = _mm256_permutevar8x32_epi32(_mm256_loadu_si256(reinterpret_cast<const V*>(&r.comp[at + 4])), idx);
    return _mm256_sub_epi32(load(acc + n), _mm256_permute2x128_si256(c, c2, 0x20));
  };
  if (r.pow2) requant_rows<true>(r, H, hp, out, v);
  else requant_rows<false>(r, H, hp, out, v);
}

void requant_rows_s64(const RequantRows& r, int64_t H, int64_t hp, const int64_t* acc, int32_t* out) {
  auto v = [&](int64_t n) { return window64(acc, r, n); };
  if (r.pow2) requant_rows<true>(r, H, hp, out, v);
  else requant_rows<false>(r, H, hp, out, v);
}

void widen(const void* q, IntType t, int64_t n, int32_t* out) {
  int64_t j = 0;
  if (t == IntType::S16) {
    const auto* s = static_cast<const int16_t*>(q);
    for (; j + 8 <= n; j += 8) store(out + j, _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + j))));
    for (; j < n; ++j) out[j] = s[j];
  } else {
    const auto* s = static_cast<const int8_t*>(q);
    for (; j + 8 <= n; j += 8) store(out + j, _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s + j))));
    for (; j < n; ++j) out[j] = s[j];
  }
}

void narrow(const int32_t* v, int64_t n, IntType t, void* out) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const V x = load(v + j);
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));  // in range: exact
    if (t == IntType::S16) _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<int16_t*>(out) + j), w);
    else _mm_storel_epi64(reinterpret_cast<__m128i*>(static_cast<int8_t*>(out) + j), _mm_packs_epi16(w, w));
  }
  for (; j < n; ++j) {
    if (t == IntType::S16) static_cast<int16_t*>(out)[j] = static_cast<int16_t>(v[j]);
    else static_cast<int8_t*>(out)[j] = static_cast<int8_t>(v[j]);
  }
}

void update_units(const CellPlan& plan, const FastPlan& fast, const int32_t* wx, const int32_t* rh, const int32_t* h,
                  int32_t* h_new) {
  if (fast.pow2) update<true>(plan, fast, wx, rh, h, h_new);
  else update<false>(plan, fast, wx, rh, h, h_new);
}

constexpr GruLaneKernels kLanes{"avx2, 8 int32 lanes", 8, requant_rows_s32, requant_rows_s64, widen, narrow, update_units};

}  // namespace

extern const GruKernels kGru;
const GruKernels kGru{&kLanes};

}  // namespace fixq::gru_detail::FIXQ_KERNEL_NS(avx2)
