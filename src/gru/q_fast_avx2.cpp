// The AVX2 kernels of the fast GRU step: eight hidden units per vector, int32 lanes, the
// same integers as q_step_intonly.cpp (build_fast_plan proved every lane fits, q_fast.h).
#include <immintrin.h>

#include "gru/q_fast.h"

namespace fixq::gru_detail::avx2 {

namespace {

using V = __m256i;

V splat(int32_t v) { return _mm256_set1_epi32(v); }
V load(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const V*>(p)); }
void store(int32_t* p, V v) { _mm256_storeu_si256(reinterpret_cast<V*>(p), v); }
V clamp(V v, V lo, V hi) { return _mm256_min_epi32(_mm256_max_epi32(v, lo), hi); }

// Arithmetic right shift of 64-bit lanes by per-lane counts in [0, 63] (AVX2 has only the
// logical one): floor(q / 2^s) = ~(~q >>> s) for negative q.
V sra64(V q, V s) {
  const V sign = _mm256_cmpgt_epi64(_mm256_setzero_si256(), q);
  return _mm256_xor_si256(_mm256_srlv_epi64(_mm256_xor_si256(q, sign), s), sign);
}

// round_half_up(q / 2^s) of 64-bit lanes, s in [1, 62]: (q + 2^(s-1)) >> s cannot overflow
// because the plan bounds |q| below 2^62.
V rounding_shift64(V q, V s) {
  const V half = _mm256_sllv_epi64(_mm256_set1_epi64x(1), _mm256_sub_epi64(s, _mm256_set1_epi64x(1)));
  return sra64(_mm256_add_epi64(q, half), s);
}

// Low 32 bits of the 64-bit lanes of even (lanes 0, 2, 4, 6) and odd results, interleaved
// back into eight int32 lanes.
V interleave_low(V even, V odd) { return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA); }

// A scale in lane form (q_fast.h), per lane.
struct Scale {
  V m, left, right, right_m1, bit;  // right_m1 = max(right - 1, 0); bit = right > 0
  V right_even, right_odd;          // right as 64-bit lanes (multiplier plans)
  bool add_then_shift = false;      // LaneScale::add_then_shift, with half = 2^(right-1)
  V half;
};

Scale make_scale(V m, V left, V right) {
  Scale s;
  s.m = m;
  s.left = left;
  s.right = right;
  s.right_m1 = _mm256_max_epi32(_mm256_sub_epi32(right, splat(1)), _mm256_setzero_si256());
  s.bit = _mm256_min_epi32(right, splat(1));
  s.right_even = _mm256_and_si256(right, _mm256_set1_epi64x(0xffffffff));
  s.right_odd = _mm256_srli_epi64(right, 32);
  s.half = _mm256_setzero_si256();
  return s;
}

Scale make_scale(const LaneScale& l) {
  Scale s = make_scale(splat(l.m), splat(l.left), splat(l.right));
  s.add_then_shift = l.add_then_shift;
  // Only add-then-shift scales (right <= 30) use half; multiplier shifts reach 62.
  s.half = splat(l.add_then_shift && l.right > 0 ? int32_t{1} << (l.right - 1) : 0);
  return s;
}

// round_half_up(x * 2^left / 2^right) in int32 (power-of-two plans): (x >> r) plus bit
// r - 1 of x; counts >= 32 fill with the sign, which gives 0 as the exact result does.
V apply_pow2(V x, const Scale& s) {
  if (s.add_then_shift) return _mm256_srav_epi32(_mm256_add_epi32(x, s.half), s.right);
  x = _mm256_sllv_epi32(x, s.left);
  const V q = _mm256_srav_epi32(x, s.right);
  return _mm256_add_epi32(q, _mm256_and_si256(_mm256_srav_epi32(x, s.right_m1), s.bit));
}

// round_half_up(x * m / 2^right) with a 64-bit product (multiplier plans).
V apply_mult(V x, const Scale& s) {
  const V even = _mm256_mul_epi32(x, s.m);
  const V odd = _mm256_mul_epi32(_mm256_srli_epi64(x, 32), _mm256_srli_epi64(s.m, 32));
  return interleave_low(rounding_shift64(even, s.right_even), rounding_shift64(odd, s.right_odd));
}

template <bool Pow2>
V apply(V x, const Scale& s) {
  if constexpr (Pow2) return apply_pow2(x, s);
  else return apply_mult(x, s);
}

// s(a * b) for a product that may leave int32 (power-of-two plans): the 64-bit product,
// shifted left, then rounded right in 64 bits.
V apply_wide_pow2(V a, V b, const Scale& s) {
  auto part = [&](V pa, V pb) {
    const V p = _mm256_sllv_epi64(_mm256_mul_epi32(pa, pb), _mm256_and_si256(s.left, _mm256_set1_epi64x(0xffffffff)));
    const V r = s.right_even;
    // right == 0: the product itself (rounding_shift64 needs right >= 1).
    const V rounded = rounding_shift64(p, _mm256_max_epi32(r, _mm256_set1_epi64x(1)));
    const V is_zero = _mm256_cmpeq_epi64(r, _mm256_setzero_si256());
    return _mm256_blendv_epi8(rounded, p, is_zero);
  };
  return interleave_low(part(a, b), part(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32)));
}

// s(a * b) for a product that may leave int32 (multiplier plans): with p = hi * 2^8 + lo,
// floor((p * m + 2^(r-1)) / 2^r) = floor((hi * m + floor((lo * m + 2^(r-1)) / 2^8)) / 2^(r-8)),
// every part inside int64 (|p| < 2^38, m < 2^31, r in [9, 62]: q_fast_plan.cpp).
V apply_wide_mult(V a, V b, const Scale& s) {
  const V eight = _mm256_set1_epi64x(8);
  auto part = [&](V pa, V pb, V r) {
    const V p = _mm256_mul_epi32(pa, pb);
    const V hi = sra64(p, eight), lo = _mm256_and_si256(p, _mm256_set1_epi64x(0xff));
    const V half = _mm256_sllv_epi64(_mm256_set1_epi64x(1), _mm256_sub_epi64(r, _mm256_set1_epi64x(1)));
    const V low_part = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(lo, s.m), half), 8);
    return sra64(_mm256_add_epi64(_mm256_mul_epi32(hi, s.m), low_part), _mm256_sub_epi64(r, eight));
  };
  return interleave_low(part(a, b, s.right_even),
                        part(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32), s.right_odd));
}

template <bool Pow2>
V product_term(V a, V b, const Scale& s, bool wide) {
  if (wide) {
    if constexpr (Pow2) return apply_wide_pow2(a, b, s);
    else return apply_wide_mult(a, b, s);
  }
  return apply<Pow2>(_mm256_mullo_epi32(a, b), s);
}

// An activation table evaluated per lane as ActivationLut::operator() does.
struct Lut {
  const int32_t* table;
  bool direct;
  V qmin, shift, mask, pow_shift, total64, half64, out_min, out_max;

  explicit Lut(const ActivationLut& l)
      : table(l.table().data()),
        direct(l.direct()),
        qmin(splat(l.input_min())),
        shift(splat(l.shift())),
        mask(splat((1 << l.shift()) - 1)),
        pow_shift(splat(1 << l.shift())),
        total64(_mm256_set1_epi64x(l.frac_bits() + l.shift())),
        half64(_mm256_set1_epi64x(l.frac_bits() + l.shift() > 0 ? int64_t{1} << (l.frac_bits() + l.shift() - 1) : 0)),
        out_min(splat(l.output_range().qmin)),
        out_max(splat(l.output_range().qmax)) {}

  V operator()(V q) const {
    const V i = _mm256_sub_epi32(q, qmin);
    if (direct) return _mm256_i32gather_epi32(table, i, 4);
    // lo * 2^s + (hi - lo) * fr, rounded at F + s fractional bits, in 64-bit halves.
    const V k = _mm256_srlv_epi32(i, shift), fr = _mm256_and_si256(i, mask);
    const V lo = _mm256_i32gather_epi32(table, k, 4);
    const V d = _mm256_sub_epi32(_mm256_i32gather_epi32(table, _mm256_add_epi32(k, splat(1)), 4), lo);
    auto part = [&](V lo_p, V d_p, V fr_p) {
      const V v = _mm256_add_epi64(_mm256_mul_epi32(lo_p, pow_shift), _mm256_mul_epi32(d_p, fr_p));
      return sra64(_mm256_add_epi64(v, half64), total64);
    };
    const V y = interleave_low(part(lo, d, fr), part(_mm256_srli_epi64(lo, 32), _mm256_srli_epi64(d, 32),
                                                     _mm256_srli_epi64(fr, 32)));
    return clamp(y, out_min, out_max);
  }
};

struct OpLanes {
  V zp, min, max;
  explicit OpLanes(const OpQ& q) : zp(splat(q.zp)), min(splat(q.range.qmin)), max(splat(q.range.qmax)) {}
  V sat(V v) const { return clamp(v, min, max); }
};

template <bool Pow2, class LoadAcc>
void requant_rows(const RequantRows& r, int64_t H, int64_t hp, int32_t* out, LoadAcc load_v) {
  const V zp = splat(r.zp), qmin = splat(r.out.qmin), qmax = splat(r.out.qmax);
  for (int64_t g = 0; g < 3; ++g)
    for (int64_t j = 0; j < hp; j += 8) {
      const int64_t n = g * H + j;
      const V v = clamp(load_v(n), load(&r.lo[static_cast<size_t>(n)]), load(&r.hi[static_cast<size_t>(n)]));
      const Scale s = make_scale(load(&r.m[static_cast<size_t>(n)]), load(&r.left[static_cast<size_t>(n)]),
                                 load(&r.right[static_cast<size_t>(n)]));
      store(out + g * hp + j, clamp(_mm256_add_epi32(apply<Pow2>(v, s), zp), qmin, qmax));
    }
}

// Eight int64 lanes minus their compensation, clamped to the window, as int32 lanes.
V window64(const int64_t* acc, const RequantRows& r, int64_t n) {
  auto half = [&](int64_t o) {
    const V a = _mm256_loadu_si256(reinterpret_cast<const V*>(acc + n + o));
    const V c = _mm256_loadu_si256(reinterpret_cast<const V*>(&r.comp[static_cast<size_t>(n + o)]));
    const V v = _mm256_sub_epi64(a, c);
    const V lo = _mm256_cvtepi32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(&r.lo[static_cast<size_t>(n + o)])));
    const V hi = _mm256_cvtepi32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(&r.hi[static_cast<size_t>(n + o)])));
    const V up = _mm256_blendv_epi8(v, lo, _mm256_cmpgt_epi64(lo, v));
    return _mm256_blendv_epi8(up, hi, _mm256_cmpgt_epi64(up, hi));
  };
  // Low dwords of both halves, in order.
  const V idx = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  const V a = _mm256_permutevar8x32_epi32(half(0), idx), b = _mm256_permutevar8x32_epi32(half(4), idx);
  return _mm256_permute2x128_si256(a, b, 0x20);
}

template <bool Pow2>
void update(const CellPlan& p, const FastPlan& f, const int32_t* wx, const int32_t* rh, const int32_t* h,
            int32_t* h_new) {
  const int64_t hp = f.hp;
  const OpLanes wx_q(p.wx), rh_q(p.rh), z_pre(p.z_pre), r_pre(p.r_pre), g_pre(p.g_pre), z_out(p.z_out),
      r_out(p.r_out), g_out(p.g_out), rhab_q(p.rh_add_br), rrh_q(p.rrh), old_q(p.old_c), new_q(p.new_c), h_q(p.h);
  const Scale wx_to_z = make_scale(f.wx_to_z), rh_to_z = make_scale(f.rh_to_z), wx_to_r = make_scale(f.wx_to_r),
              rh_to_r = make_scale(f.rh_to_r), rh_to_rhab = make_scale(f.rh_to_rhab), wx_to_g = make_scale(f.wx_to_g),
              rrh_to_g = make_scale(f.rrh_to_g), rrh_mul = make_scale(f.rrh_mul), old_mul = make_scale(f.old_mul),
              new_mul = make_scale(f.new_mul), old_to_h = make_scale(f.old_to_h), new_to_h = make_scale(f.new_to_h);
  const Lut sig_z(p.sig_z), sig_r(p.sig_r), tanh_g(p.tanh_g);
  const V q_one = splat(p.q_one);
  for (int64_t j = 0; j < hp; j += 8) {
    const size_t u = static_cast<size_t>(j);
    const V wx_z = _mm256_sub_epi32(load(wx + j), wx_q.zp), wx_r = _mm256_sub_epi32(load(wx + hp + j), wx_q.zp),
            wx_g = _mm256_sub_epi32(load(wx + 2 * hp + j), wx_q.zp);
    const V rh_z = _mm256_sub_epi32(load(rh + j), rh_q.zp), rh_r = _mm256_sub_epi32(load(rh + hp + j), rh_q.zp),
            rh_g = _mm256_sub_epi32(load(rh + 2 * hp + j), rh_q.zp);

    const V zp = z_pre.sat(_mm256_add_epi32(_mm256_add_epi32(apply<Pow2>(wx_z, wx_to_z), apply<Pow2>(rh_z, rh_to_z)),
                                            load(&f.c_z[u])));
    const V rp = r_pre.sat(_mm256_add_epi32(_mm256_add_epi32(apply<Pow2>(wx_r, wx_to_r), apply<Pow2>(rh_r, rh_to_r)),
                                            load(&f.c_r[u])));
    const V z = sig_z(zp), r = sig_r(rp);

    const V rhab = rhab_q.sat(_mm256_add_epi32(apply<Pow2>(rh_g, rh_to_rhab), load(&f.c_rhab[u])));
    const V rrh = rrh_q.sat(_mm256_add_epi32(
        product_term<Pow2>(_mm256_sub_epi32(r, r_out.zp), _mm256_sub_epi32(rhab, rhab_q.zp), rrh_mul, f.wide_rrh),
        rrh_q.zp));
    const V gp = g_pre.sat(_mm256_add_epi32(
        _mm256_add_epi32(apply<Pow2>(wx_g, wx_to_g), apply<Pow2>(_mm256_sub_epi32(rrh, rrh_q.zp), rrh_to_g)),
        load(&f.c_g[u])));
    const V g = tanh_g(gp);

    const V old_c = old_q.sat(_mm256_add_epi32(
        product_term<Pow2>(_mm256_sub_epi32(z, z_out.zp), _mm256_sub_epi32(load(h + j), h_q.zp), old_mul, f.wide_old),
        old_q.zp));
    const V new_c = new_q.sat(_mm256_add_epi32(
        product_term<Pow2>(_mm256_sub_epi32(q_one, z), _mm256_sub_epi32(g, g_out.zp), new_mul, f.wide_new), new_q.zp));
    const V hn = _mm256_add_epi32(_mm256_add_epi32(apply<Pow2>(_mm256_sub_epi32(old_c, old_q.zp), old_to_h),
                                                   apply<Pow2>(_mm256_sub_epi32(new_c, new_q.zp), new_to_h)),
                                  h_q.zp);
    store(h_new + j, h_q.sat(hn));
  }
}

}  // namespace

void requant_rows_s32(const RequantRows& r, int64_t H, int64_t hp, const int32_t* acc, int32_t* out) {
  auto v = [&](int64_t n) {
    // acc - comp fits int32 here (build_fast_plan), and so does comp.
    const V c = _mm256_permutevar8x32_epi32(
        _mm256_loadu_si256(reinterpret_cast<const V*>(&r.comp[static_cast<size_t>(n)])), _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6));
    const V c2 = _mm256_permutevar8x32_epi32(
        _mm256_loadu_si256(reinterpret_cast<const V*>(&r.comp[static_cast<size_t>(n + 4)])), _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6));
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

}  // namespace fixq::gru_detail::avx2
