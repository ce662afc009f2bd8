// The AVX-512 lane kernels of the fast GRU step: sixteen hidden units per vector, int32
// lanes, the same integers as the reference (build_fast_plan proved every lane fits,
// q_fast.h). The products before them run on the GEMM's vpdpbusd kernels.
#include "cpu/x86.h"

#include "arith/lanes_avx512.h"
#include "gru/q_fast.h"
#include "gru/q_lut_eval.h"
#include "gru/q_unit_update.h"

namespace fixq::gru_detail::FIXQ_KERNEL_NS(avx512) {

namespace {

using namespace avx512_lanes;

V load(const int32_t* p) { return _mm512_loadu_si512(p); }
void store(int32_t* p, V v) { _mm512_storeu_si512(p, v); }
V clamp_v(V v, V lo, V hi) { return _mm512_min_epi32(_mm512_max_epi32(v, lo), hi); }

// activation_lookup's operations on sixteen lanes (q_lut_eval.h).
struct LutOps {
  using V = avx512_lanes::V;
  V splat(int32_t v) const { return avx512_lanes::splat(v); }
  V add(V a, V b) const { return _mm512_add_epi32(a, b); }
  V sub(V a, V b) const { return _mm512_sub_epi32(a, b); }
  V shr(V v, int s) const { return _mm512_srlv_epi32(v, avx512_lanes::splat(s)); }
  V mask(V v, int32_t m) const { return _mm512_and_si512(v, avx512_lanes::splat(m)); }
  V gather(const int32_t* table, V i) const { return _mm512_i32gather_epi32(i, table, 4); }
  V interp(V lo, V d, V fr, int shift, int total) const {
    const V pow_shift = avx512_lanes::splat(int32_t{1} << shift), t = _mm512_set1_epi64(total);
    const V half = _mm512_set1_epi64(int64_t{1} << (total - 1));
    auto part = [&](V lo_p, V d_p, V fr_p) {
      const V v = _mm512_add_epi64(_mm512_mul_epi32(lo_p, pow_shift), _mm512_mul_epi32(d_p, fr_p));
      return _mm512_srav_epi64(_mm512_add_epi64(v, half), t);
    };
    return interleave_low(part(lo, d, fr),
                          part(_mm512_srli_epi64(lo, 32), _mm512_srli_epi64(d, 32), _mm512_srli_epi64(fr, 32)));
  }
  V clamp(V v, int32_t lo, int32_t hi) const { return clamp_v(v, avx512_lanes::splat(lo), avx512_lanes::splat(hi)); }
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

// The unit update (q_unit_update.h) on sixteen int32 lanes.
template <bool Pow2>
struct LaneDomain {
  using V = avx512_lanes::V;
  const LanePlan& p;
  const FastPlan& f;
  int64_t j;  // first unit of the vector

  V sub(V a, V b) const { return _mm512_sub_epi32(a, b); }
  V add(V a, V b) const { return _mm512_add_epi32(a, b); }
  V less_zp(Operand o, V v) const { return _mm512_sub_epi32(v, p.zp[static_cast<size_t>(o)]); }
  V plus_zp(Operand o, V v) const { return _mm512_add_epi32(v, p.zp[static_cast<size_t>(o)]); }
  V sat(Operand o, V v) const { return clamp_v(v, p.qmin[static_cast<size_t>(o)], p.qmax[static_cast<size_t>(o)]); }
  V scale(UnitScale s, V v) const {
    const LaneScaleRegs& r = p.scale[static_cast<size_t>(s)];
    if constexpr (Pow2) return apply_pow2(v, r);
    else return apply_multiplier(v, r);
  }
  V product(UnitScale s, V a, V b) const {
    const auto i = static_cast<size_t>(s);
    if (!p.wide[i]) return scale(s, _mm512_mullo_epi32(a, b));
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
  for (int64_t j = 0; j < hp; j += 16) {
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
    for (int64_t j = 0; j < hp; j += 16) {
      const int64_t n = g * H + j;
      const auto at = static_cast<size_t>(n);
      const V v = clamp_v(load_v(n), load(&r.lo[at]), load(&r.hi[at]));
      const LaneScaleRegs s = lane_scale_regs(load(&r.m[at]), load(&r.left[at]), load(&r.right[at]));
      const V y = Pow2 ? apply_pow2(v, s) : apply_multiplier(v, s);
      store(out + g * hp + j, clamp_v(_mm512_add_epi32(y, zp), qmin, qmax));
    }
}

// Sixteen int64 accumulators minus their compensation, clamped to the window, as int32 lanes.
V window64(const int64_t* acc, const RequantRows& r, int64_t n) {
  auto half = [&](int64_t o) {
    const auto at = static_cast<size_t>(n + o);
    const V v = _mm512_sub_epi64(_mm512_loadu_si512(acc + n + o), _mm512_loadu_si512(&r.comp[at]));
    const V lo = _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(&r.lo[at])));
    const V hi = _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(&r.hi[at])));
    return _mm512_cvtepi64_epi32(_mm512_min_epi64(_mm512_max_epi64(v, lo), hi));  // in int32 now: exact
  };
  return _mm512_inserti64x4(_mm512_castsi256_si512(half(0)), half(8), 1);
}

void requant_rows_s32(const RequantRows& r, int64_t H, int64_t hp, const int32_t* acc, int32_t* out) {
  auto v = [&](int64_t n) {
    // acc - comp fits int32 here (build_fast_plan), and so does comp.
    const auto at = static_cast<size_t>(n);
    const __m256i c0 = _mm512_cvtepi64_epi32(_mm512_loadu_si512(&r.comp[at]));
    const __m256i c1 = _mm512_cvtepi64_epi32(_mm512_loadu_si512(&r.comp[at + 8]));
    return _mm512_sub_epi32(load(acc + n), _mm512_inserti64x4(_mm512_castsi256_si512(c0), c1, 1));
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
    for (; j + 16 <= n; j += 16) store(out + j, _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + j))));
    for (; j < n; ++j) out[j] = s[j];
  } else {
    const auto* s = static_cast<const int8_t*>(q);
    for (; j + 16 <= n; j += 16) store(out + j, _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + j))));
    for (; j < n; ++j) out[j] = s[j];
  }
}

void narrow(const int32_t* v, int64_t n, IntType t, void* out) {
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const V x = load(v + j);  // in range: the truncating vpmovdw / vpmovdb are exact
    if (t == IntType::S16) _mm256_storeu_si256(reinterpret_cast<__m256i*>(static_cast<int16_t*>(out) + j), _mm512_cvtepi32_epi16(x));
    else _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<int8_t*>(out) + j), _mm512_cvtepi32_epi8(x));
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

constexpr GruLaneKernels kLanes{"avx512, 16 int32 lanes", 16, requant_rows_s32, requant_rows_s64, widen, narrow, update_units};

}  // namespace

extern const GruKernels kGru;
const GruKernels kGru{&kLanes};

}  // namespace fixq::gru_detail::FIXQ_KERNEL_NS(avx512)
