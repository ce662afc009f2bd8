// The float GRU's AVX2 kernels: a dot16 output's sixteen partial sums in two ymm registers
// (partials 0-7 and 8-15, float_kernels.h), reduced by the definition's tree; the unit
// update eight units per register. No FMA: a multiply and an add, each rounded.
#include "cpu/x86.h"

#include <algorithm>

#include "gru/float_kernels.h"
#include "gru/float_math.h"
#include "gru/float_matmul_driver.h"

namespace fixq::gru_float::FIXQ_KERNEL_NS(avx2) {

namespace {

using V = __m256;

// The first n of eight lanes (n < 8).
__m256i first_lanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// The dot16 tree for four outputs, each given as its partials 0-7 (lo) and 8-15 (hi):
// out[i] for i < 4. The s = 8 stage is lo + hi; then each stage adds lane l to lane l + s
// of the same output while shuffles pack two outputs per register.
void reduce4(const V* lo, const V* hi, float* out) {
  V a[4];
  for (int i = 0; i < 4; ++i) a[i] = _mm256_add_ps(lo[i], hi[i]);
  // s = 4: b01 = [b of a0 | b of a1], b23 likewise.
  const V b01 = _mm256_add_ps(_mm256_permute2f128_ps(a[0], a[1], 0x20), _mm256_permute2f128_ps(a[0], a[1], 0x31));
  const V b23 = _mm256_add_ps(_mm256_permute2f128_ps(a[2], a[3], 0x20), _mm256_permute2f128_ps(a[2], a[3], 0x31));
  // s = 2: half 0 = [c0, c1 of a0 | c0, c1 of a2], half 1 = the same of a1, a3.
  const V c = _mm256_add_ps(_mm256_shuffle_ps(b01, b23, _MM_SHUFFLE(1, 0, 1, 0)),
                            _mm256_shuffle_ps(b01, b23, _MM_SHUFFLE(3, 2, 3, 2)));
  // s = 1: half 0 lanes 0, 1 = a0, a2; half 1 lanes 4, 5 = a1, a3.
  const V d = _mm256_add_ps(_mm256_shuffle_ps(c, c, _MM_SHUFFLE(2, 0, 2, 0)), _mm256_shuffle_ps(c, c, _MM_SHUFFLE(3, 1, 3, 1)));
  alignas(32) float s[8];
  _mm256_store_ps(s, d);
  out[0] = s[0];
  out[1] = s[4];
  out[2] = s[1];
  out[3] = s[5];
}

// The tree for one output.
float reduce1(V lo, V hi) {
  const V a = _mm256_add_ps(lo, hi);
  const __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));
  return _mm_cvtss_f32(_mm_add_ss(c, _mm_shuffle_ps(c, c, _MM_SHUFFLE(1, 1, 1, 1))));
}

// MR rows of a times JR rows of w (MR * JR <= 4 outputs, two accumulators each).
template <int MR, int JR>
void tile(const float* a, int64_t lda, const float* w, int64_t k, float* out, int64_t ldo) {
  static_assert(MR * JR <= 4);
  V lo[MR][JR], hi[MR][JR];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < JR; ++j) lo[r][j] = hi[r][j] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    V alo[MR], ahi[MR];
    for (int r = 0; r < MR; ++r) {
      alo[r] = _mm256_loadu_ps(a + r * lda + i);
      ahi[r] = _mm256_loadu_ps(a + r * lda + i + 8);
    }
    for (int j = 0; j < JR; ++j) {
      const V wlo = _mm256_loadu_ps(w + j * k + i), whi = _mm256_loadu_ps(w + j * k + i + 8);
      for (int r = 0; r < MR; ++r) {
        lo[r][j] = _mm256_add_ps(lo[r][j], _mm256_mul_ps(alo[r], wlo));
        hi[r][j] = _mm256_add_ps(hi[r][j], _mm256_mul_ps(ahi[r], whi));
      }
    }
  }
  if (i < k) {
    // Lanes past k add 0 * 0 = +0, which never changes a partial (never -0, see avx512).
    const int64_t rest = k - i;
    const __m256i mlo = rest >= 8 ? _mm256_set1_epi32(-1) : first_lanes(rest);
    const __m256i mhi = rest >= 8 ? first_lanes(rest - 8) : _mm256_setzero_si256();
    V alo[MR], ahi[MR];
    for (int r = 0; r < MR; ++r) {
      alo[r] = _mm256_maskload_ps(a + r * lda + i, mlo);
      ahi[r] = _mm256_maskload_ps(a + r * lda + i + 8, mhi);
    }
    for (int j = 0; j < JR; ++j) {
      const V wlo = _mm256_maskload_ps(w + j * k + i, mlo), whi = _mm256_maskload_ps(w + j * k + i + 8, mhi);
      for (int r = 0; r < MR; ++r) {
        lo[r][j] = _mm256_add_ps(lo[r][j], _mm256_mul_ps(alo[r], wlo));
        hi[r][j] = _mm256_add_ps(hi[r][j], _mm256_mul_ps(ahi[r], whi));
      }
    }
  }
  if constexpr (MR * JR == 1) {
    out[0] = reduce1(lo[0][0], hi[0][0]);
  } else {
    V l4[4], h4[4];
    for (int n = 0; n < 4; ++n) {
      l4[n] = n < MR * JR ? lo[n / JR][n % JR] : _mm256_setzero_ps();
      h4[n] = n < MR * JR ? hi[n / JR][n % JR] : _mm256_setzero_ps();
    }
    float s[4];
    reduce4(l4, h4, s);
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < JR; ++j) out[r * ldo + j] = s[r * JR + j];
  }
}

struct Tiles {
  static constexpr int kMainRows = 2;
  template <int MR, int JR>
  static void run(const float* a, int64_t lda, const float* w, int64_t k, float* out, int64_t ldo) {
    tile<MR, JR>(a, lda, w, k, out, ldo);
  }
  static constexpr int wide_jr(int mr) { return mr == 1 ? 4 : 2; }
};

void matmul_nt(const float* a, int64_t lda, int64_t m, const float* w, int64_t n, int64_t k, float* out,
               int64_t ldo) {
  matmul_nt_blocked<Tiles>(a, lda, m, w, n, k, out, ldo);
}

struct Ops {
  using V = __m256;
  static V splat(float v) { return _mm256_set1_ps(v); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V neg(V a) { return _mm256_xor_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN))); }
  static V abs(V a) { return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MAX))); }
  static V copy_sign(V a, V s) {
    return _mm256_or_ps(_mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MAX))),
                        _mm256_and_ps(s, _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN))));
  }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V min(V a, V b) { return _mm256_min_ps(a, b); }
  static V less(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static V is_nan(V a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
  static V select(V m, V a, V b) { return _mm256_blendv_ps(b, a, m); }
  static V pow2(__m256i e) { return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(e, _mm256_set1_epi32(127)), 23)); }
  static V pow2_half_floor(V n) { return pow2(_mm256_srai_epi32(_mm256_cvttps_epi32(n), 1)); }
  static V pow2_half_ceil(V n) {
    const __m256i i = _mm256_cvttps_epi32(n);
    return pow2(_mm256_sub_epi32(i, _mm256_srai_epi32(i, 1)));
  }
};

void gates(const GateArgs& g) {
  const Ops o;
  const ScalarOps so;
  const int64_t H = g.H;
  for (int64_t b = 0; b < g.rows; ++b) {
    const float* wx = g.wx + b * 3 * H;
    const float* rh = g.rh + b * 3 * H;
    float* h = g.h + b * H;
    auto store = [&](const auto& u, int64_t j, auto put) {
      put(h + j, u.h);
      if (g.all) {
        const decltype(u.h) v[kGateIntermediates] = {u.z_pre, u.z,     u.r_pre, u.r,           u.rh_add_br,
                                                     u.r_rh,  u.g_pre, u.g,     u.old_contrib, u.new_contrib};
        for (int op = 0; op < kGateIntermediates; ++op) put(g.all[op] + b * H + j, v[op]);
      }
    };
    int64_t j = 0;
    for (; j + 8 <= H; j += 8) {
      auto ld = [&](const float* p) { return _mm256_loadu_ps(p + j); };
      store(unit_update(o, ld(wx), ld(wx + H), ld(wx + 2 * H), ld(rh), ld(rh + H), ld(rh + 2 * H), ld(g.bx),
                        ld(g.bx + H), ld(g.bx + 2 * H), ld(g.br), ld(g.br + H), ld(g.br + 2 * H), ld(h)),
            j, [](float* p, V v) { _mm256_storeu_ps(p, v); });
    }
    // The last units one at a time: the same operations on one float give the same bits.
    for (; j < H; ++j)
      store(unit_update(so, wx[j], wx[H + j], wx[2 * H + j], rh[j], rh[H + j], rh[2 * H + j], g.bx[j], g.bx[H + j],
                        g.bx[2 * H + j], g.br[j], g.br[H + j], g.br[2 * H + j], h[j]),
            j, [](float* p, float v) { *p = v; });
  }
}

}  // namespace

extern const FloatKernels kFloat;
const FloatKernels kFloat{"avx2", matmul_nt, gates};

}  // namespace fixq::gru_float::FIXQ_KERNEL_NS(avx2)
