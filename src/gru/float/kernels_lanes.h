// Private, for the gru/float/kernels_<family>.cpp files only: the float GRU's two kernels
// (gru/float/kernels.h) written once over a family's lane primitives L (src/simd/lanes_<family>.h):
//   matmul_nt: each output's sixteen dot16 partial sums in one L::P, reduced by the
//              definition's tree (L::reduce_one, L::reduce_group);
//   gates:     the unit update L::kLanes units per vector, the last ones under a lane mask.
// No FMA: a multiply and an add, each rounded, as the scalar definition.
#pragma once

#include <cstdint>

#include "gru/float/kernels.h"
#include "gru/float/math.h"
#include "gru/float/matmul_driver.h"

namespace fixq::gru_float {

template <class L>
struct FloatGruLanes {
  using P = typename L::P;
  using F = typename L::F;

  // MR rows of a times JR rows of w (MR * JR <= L::kPartialsBudget accumulators): out[i, j]
  // for the tile. (No lambda for the loop body: GCC then keeps acc in memory.)
  template <int MR, int JR>
  static void tile(const float* a, int64_t lda, const float* w, int64_t k, float* out, int64_t ldo) {
    static_assert(MR * JR <= L::kPartialsBudget);
    P acc[MR][JR];
    for (auto& row : acc)
      for (P& v : row) v = L::pzero();
    int64_t i = 0;
    for (; i + 16 <= k; i += 16) {
      P av[MR];
      for (int r = 0; r < MR; ++r) av[r] = L::pload(a + r * lda + i);
      for (int j = 0; j < JR; ++j) {
        const P wv = L::pload(w + j * k + i);
        for (int r = 0; r < MR; ++r) acc[r][j] = L::padd_mul(acc[r][j], av[r], wv);
      }
    }
    if (i < k) {
      // Lanes past k add 0 * 0 = +0 to a partial, which never changes it (a partial sum
      // that starts at +0 is never -0 under rounding to nearest).
      P av[MR];
      for (int r = 0; r < MR; ++r) av[r] = L::pload_n(a + r * lda + i, k - i);
      for (int j = 0; j < JR; ++j) {
        const P wv = L::pload_n(w + j * k + i, k - i);
        for (int r = 0; r < MR; ++r) acc[r][j] = L::padd_mul(acc[r][j], av[r], wv);
      }
    }
    if constexpr (MR * JR == 1) {
      out[0] = L::reduce_one(acc[0][0]);
    } else {
      // kReduceGroup accumulators per reduction; a last group of fewer is padded with zeros.
      constexpr int kGroup = L::kReduceGroup, kGroups = (MR * JR + kGroup - 1) / kGroup;
      alignas(64) float s[kGroups * kGroup];
      for (int g = 0; g < kGroups; ++g) {
        P v[kGroup];
        for (int n = 0; n < kGroup; ++n) {
          const int e = g * kGroup + n;
          v[n] = e < MR * JR ? acc[e / JR][e % JR] : L::pzero();
        }
        L::reduce_group(v, s + g * kGroup);
      }
      for (int r = 0; r < MR; ++r)
        for (int j = 0; j < JR; ++j) out[r * ldo + j] = s[r * JR + j];
    }
  }

  struct Tiles {
    // Four rows of a per tile where the registers hold 16 accumulators and more, else two.
    static constexpr int kMainRows = L::kPartialsBudget >= 16 ? 4 : 2;
    template <int MR, int JR>
    static void run(const float* a, int64_t lda, const float* w, int64_t k, float* out, int64_t ldo) {
      tile<MR, JR>(a, lda, w, k, out, ldo);
    }
    // Weight rows per tile for MR rows of a: the whole budget; a single row of a (the
    // recurrent product at batch 1) reads at most eight weight rows at a time, as many
    // memory streams as keep the loads flowing from L3 and DRAM (AVX-512: 1.4x faster than
    // sixteen at H = 1024, the same at H = 256).
    static constexpr int wide_jr(int mr) {
      return mr == 1 ? (L::kPartialsBudget < 8 ? L::kPartialsBudget : 8) : L::kPartialsBudget / mr;
    }
  };

  static void matmul_nt(const float* a, int64_t lda, int64_t m, const float* w, int64_t n, int64_t k, float* out,
                        int64_t ldo) {
    matmul_nt_blocked<Tiles>(a, lda, m, w, n, k, out, ldo);
  }

  // unit_update's operations (gru/float/math.h) on L's float lanes.
  struct Ops {
    using V = F;
    static V splat(float v) { return L::fsplat(v); }
    static V add(V a, V b) { return L::fadd(a, b); }
    static V sub(V a, V b) { return L::fsub(a, b); }
    static V mul(V a, V b) { return L::fmul(a, b); }
    static V div(V a, V b) { return L::fdiv(a, b); }
    static V neg(V a) { return L::from_bits(L::bit_xor(L::bits(a), L::splat(INT32_MIN))); }
    static V abs(V a) { return L::from_bits(L::bit_and(L::bits(a), L::splat(INT32_MAX))); }
    static V copy_sign(V a, V s) {
      return L::from_bits(L::bit_or(L::bit_and(L::bits(a), L::splat(INT32_MAX)), L::bit_and(L::bits(s), L::splat(INT32_MIN))));
    }
    static V max(V a, V b) { return L::fmax(a, b); }
    static V min(V a, V b) { return L::fmin(a, b); }
    static auto less(V a, V b) { return L::fless(a, b); }
    static auto is_nan(V a) { return L::fnan(a); }
    static V select(typename L::M m, V a, V b) { return L::fselect(m, a, b); }
    static V pow2(typename L::I e) { return L::from_bits(L::template slli<23>(L::add(e, L::splat(127)))); }
    static V pow2_half_floor(V n) { return pow2(L::template srai<1>(L::truncate(n))); }
    static V pow2_half_ceil(V n) {
      const auto i = L::truncate(n);
      return pow2(L::sub(i, L::template srai<1>(i)));
    }
  };

  static void gates(const GateArgs& g) {
    const Ops o;
    const int64_t H = g.H;
    for_each_gate_row(g, [&](const float* wx, const float* rh, float* h, int64_t b) {
      for (int64_t j = 0; j < H; j += L::kLanes) {
        // The last vector's lanes past H compute on zeros and are not stored.
        auto ld = [&](const float* p) { return L::fload_n(p + j, H - j); };
        auto st = [&](float* p, F v) { L::fstore_n(p + j, H - j, v); };
        const UnitValues<Ops> u = unit_update(o, ld(wx), ld(wx + H), ld(wx + 2 * H), ld(rh), ld(rh + H), ld(rh + 2 * H),
                                              ld(g.bx), ld(g.bx + H), ld(g.bx + 2 * H), ld(g.br), ld(g.br + H),
                                              ld(g.br + 2 * H), ld(h));
        st(h, u.h);
        if (g.all) each_gate_intermediate(u, [&](int op, F v) { st(g.all[op] + b * H, v); });
      }
    });
  }

};

}  // namespace fixq::gru_float
