// The float GRU's AVX-512 kernels: a dot16 partial sum per zmm lane (float_kernels.h), so
// each output's sixteen partials are one register, reduced by the definition's tree; the
// unit update sixteen units per register. No FMA: a multiply and an add, each rounded.
#include "cpu/x86.h"

#include <algorithm>

#include "gru/float_kernels.h"
#include "gru/float_math.h"
#include "gru/float_matmul_driver.h"

namespace fixq::gru_float::FIXQ_KERNEL_NS(avx512) {

namespace {

using V = __m512;

// The 128-bit quarters (imm: two of a, then two of b), as vshuff32x4 (written through the
// integer form, which SIMDe 0.7 provides, for the emulated build).
template <int imm>
V shuffle_quarters(V a, V b) {
  return _mm512_castsi512_ps(_mm512_shuffle_i32x4(_mm512_castps_si512(a), _mm512_castps_si512(b), imm));
}

__mmask16 first_lanes(int64_t n) { return n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1u); }

// Lane i of the result: the dot16 tree over the lanes of v[i], for 16 vectors at once.
// Each stage adds lane l to lane l + s of the same vector, as the definition does, while
// the shuffles pack two half-reduced vectors into one register.
V reduce16(const V* v) {
  V u[8], w[4], x[2];
  for (int i = 0; i < 8; ++i) {  // s = 8: u[i] = [p_l + p_{l+8} of v[2i] | of v[2i+1]]
    const V lo = shuffle_quarters<_MM_SHUFFLE(1, 0, 1, 0)>(v[2 * i], v[2 * i + 1]);
    const V hi = shuffle_quarters<_MM_SHUFFLE(3, 2, 3, 2)>(v[2 * i], v[2 * i + 1]);
    u[i] = _mm512_add_ps(lo, hi);
  }
  for (int i = 0; i < 4; ++i) {  // s = 4: 128-bit quarter q of w[i] belongs to v[4i + q]
    const V lo = shuffle_quarters<_MM_SHUFFLE(2, 0, 2, 0)>(u[2 * i], u[2 * i + 1]);
    const V hi = shuffle_quarters<_MM_SHUFFLE(3, 1, 3, 1)>(u[2 * i], u[2 * i + 1]);
    w[i] = _mm512_add_ps(lo, hi);
  }
  for (int i = 0; i < 2; ++i) {  // s = 2: quarter q of x[i] = [c0, c1 of v[8i+q] | of v[8i+q+4]]
    const V lo = _mm512_shuffle_ps(w[2 * i], w[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0));
    const V hi = _mm512_shuffle_ps(w[2 * i], w[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2));
    x[i] = _mm512_add_ps(lo, hi);
  }
  // s = 1: lane 4q + r holds the result of v[q + 4r]; the permutation puts it at lane q + 4r.
  const V lo = _mm512_shuffle_ps(x[0], x[1], _MM_SHUFFLE(2, 0, 2, 0));
  const V hi = _mm512_shuffle_ps(x[0], x[1], _MM_SHUFFLE(3, 1, 3, 1));
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return _mm512_permutexvar_ps(order, _mm512_add_ps(lo, hi));
}

// The tree over the lanes of one vector.
float reduce1(V v) {
  const __m256 a = _mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  const __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));
  return _mm_cvtss_f32(_mm_add_ss(c, _mm_shuffle_ps(c, c, _MM_SHUFFLE(1, 1, 1, 1))));
}

// MR rows of a times JR rows of w (MR * JR <= 24 accumulators, with the MR loaded rows
// of a and one of w within the 32 registers): out[i, j] for the tile.
template <int MR, int JR>
void tile(const float* a, int64_t lda, const float* w, int64_t k, float* out, int64_t ldo) {
  static_assert(MR * JR <= 24);
  V acc[MR][JR];
  for (auto& row : acc)
    for (V& v : row) v = _mm512_setzero_ps();
  // (No lambda for the loop body: GCC then keeps acc in memory, a store per update.)
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    V av[MR];
    for (int r = 0; r < MR; ++r) av[r] = _mm512_loadu_ps(a + r * lda + i);
    for (int j = 0; j < JR; ++j) {
      const V wv = _mm512_loadu_ps(w + j * k + i);
      for (int r = 0; r < MR; ++r) acc[r][j] = _mm512_add_ps(acc[r][j], _mm512_mul_ps(av[r], wv));
    }
  }
  if (i < k) {
    // Lanes past k add 0 * 0 = +0 to a partial, which never changes it (a partial sum that
    // starts at +0 is never -0 under rounding to nearest).
    const __mmask16 m = first_lanes(k - i);
    V av[MR];
    for (int r = 0; r < MR; ++r) av[r] = _mm512_maskz_loadu_ps(m, a + r * lda + i);
    for (int j = 0; j < JR; ++j) {
      const V wv = _mm512_maskz_loadu_ps(m, w + j * k + i);
      for (int r = 0; r < MR; ++r) acc[r][j] = _mm512_add_ps(acc[r][j], _mm512_mul_ps(av[r], wv));
    }
  }
  if constexpr (MR * JR == 1) {
    out[0] = reduce1(acc[0][0]);
  } else {
    // Sixteen accumulators per reduction; a last group of fewer is padded with zeros.
    constexpr int kGroups = (MR * JR + 15) / 16;
    alignas(64) float s[kGroups * 16];
    for (int g = 0; g < kGroups; ++g) {
      V v[16];
      for (int n = 0; n < 16; ++n) {
        const int e = g * 16 + n;
        v[n] = e < MR * JR ? acc[e / JR][e % JR] : _mm512_setzero_ps();
      }
      _mm512_store_ps(s + g * 16, reduce16(v));
    }
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < JR; ++j) out[r * ldo + j] = s[r * JR + j];
  }
}

struct Tiles {
  static constexpr int kMainRows = 4;
  template <int MR, int JR>
  static void run(const float* a, int64_t lda, const float* w, int64_t k, float* out, int64_t ldo) {
    tile<MR, JR>(a, lda, w, k, out, ldo);
  }
  // Weight rows per tile for MR rows of a: 12 to 24 accumulators; a single row of a (the
  // recurrent product at batch 1) reads eight weight rows at a time, as many memory
  // streams as keep the loads flowing from L3 and DRAM (1.4x faster than sixteen at
  // H = 1024; the same at H = 256).
  static constexpr int wide_jr(int mr) { return mr == 1 ? 8 : mr == 2 ? 12 : mr == 3 ? 8 : 6; }
};

void matmul_nt(const float* a, int64_t lda, int64_t m, const float* w, int64_t n, int64_t k, float* out,
               int64_t ldo) {
  matmul_nt_blocked<Tiles>(a, lda, m, w, n, k, out, ldo);
}

struct Ops {
  using V = __m512;
  static V splat(float v) { return _mm512_set1_ps(v); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static V neg(V a) { return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MIN))); }
  static V abs(V a) { return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MAX))); }
  static V copy_sign(V a, V s) {
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MAX)),
                                               _mm512_and_si512(_mm512_castps_si512(s), _mm512_set1_epi32(INT32_MIN))));
  }
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static V min(V a, V b) { return _mm512_min_ps(a, b); }
  static __mmask16 less(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static __mmask16 is_nan(V a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
  static V select(__mmask16 m, V a, V b) { return _mm512_mask_blend_ps(m, b, a); }
  static V pow2(__m512i e) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(e, _mm512_set1_epi32(127)), 23)); }
  static V pow2_half_floor(V n) { return pow2(_mm512_srav_epi32(_mm512_cvttps_epi32(n), _mm512_set1_epi32(1))); }
  static V pow2_half_ceil(V n) {
    const __m512i i = _mm512_cvttps_epi32(n);
    return pow2(_mm512_sub_epi32(i, _mm512_srav_epi32(i, _mm512_set1_epi32(1))));
  }
};

void gates(const GateArgs& g) {
  const Ops o;
  const int64_t H = g.H;
  for (int64_t b = 0; b < g.rows; ++b) {
    const float* wx = g.wx + b * 3 * H;
    const float* rh = g.rh + b * 3 * H;
    float* h = g.h + b * H;
    for (int64_t j = 0; j < H; j += 16) {
      // The last vector's lanes past H compute on zeros and are not stored.
      const __mmask16 m = first_lanes(H - j);
      auto ld = [&](const float* p) { return _mm512_maskz_loadu_ps(m, p + j); };
      const UnitValues<Ops> u = unit_update(o, ld(wx), ld(wx + H), ld(wx + 2 * H), ld(rh), ld(rh + H), ld(rh + 2 * H),
                                          ld(g.bx), ld(g.bx + H), ld(g.bx + 2 * H), ld(g.br), ld(g.br + H),
                                          ld(g.br + 2 * H), ld(h));
      _mm512_mask_storeu_ps(h + j, m, u.h);
      if (g.all) {
        const V v[kGateIntermediates] = {u.z_pre, u.z,     u.r_pre, u.r,           u.rh_add_br,
                                         u.r_rh,  u.g_pre, u.g,     u.old_contrib, u.new_contrib};
        for (int op = 0; op < kGateIntermediates; ++op) _mm512_mask_storeu_ps(g.all[op] + b * H + j, m, v[op]);
      }
    }
  }
}

}  // namespace

extern const FloatKernels kFloat;
const FloatKernels kFloat{"avx512", matmul_nt, gates};

}  // namespace fixq::gru_float::FIXQ_KERNEL_NS(avx512)
