// Private, for the packed/matmul_<family>.cpp files only: the weight-only matmul kernel
// written once over a family's lane primitives L (src/simd/lanes_<family>.h), L::kLanes
// columns per vector, bit-identical to the scalar kernel (matmul_scalar.cpp): per lane the
// same IEEE operations on the same operands in the same order, acc = acc + x[k] *
// float(q - z) in row order, then out = out + acc * s group after group, a separate
// multiply and add each time (no FMA: it would skip a rounding the reference makes).
//
// float(q - z) without an integer subtract and a conversion: one L::and_or puts the code q,
// found at bit p of the (shifted) word, under the exponent of 2^(23 - p), which gives the
// float 2^(23 - p) + q exactly (the mantissa's lowest bit weighs 2^-p, so bit p weighs 1);
// subtracting the float 2^(23 - p) + z then gives q - z exactly (both lie in one binade with
// a spacing that divides 1, and |q - z| < 256), +0 when q == z as the conversion gives.
//
// Two schedules:
//   M < kUnpackRows: each packed word row is loaded once and unpacked in registers for
//           MR <= 4 rows of x against NV column vectors (the most the registers hold:
//           AVX-512 at M = 1, 128 columns, eight independent accumulators). Code j is read
//           at p = 0 after a shift by bits * j, which leaves the word intact and keeps the
//           loop over j short: one shift, and_or, subtract, multiply and add per vector of
//           weights at M = 1;
//   M >= kUnpackRows: each group of a panel is unpacked once into an L1 tile of floats
//           q - z (two positions p per shift, see Codes), which a register tile of
//           multiplies and adds reuses for every row of x.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "weightonly/layout.h"

namespace fixq::weightonly_detail {

// From this many rows of x on, unpacking each group once into a tile (second schedule)
// beats unpacking it again for every four rows.
inline constexpr int64_t kUnpackRows = 8;

// Where unpack_group reads code j of a word of Bits-bit codes: the word shifted right by
// shift(j), at bit pos(j) (0 or kHigh). kHigh + Bits <= 23 keeps the code inside the
// mantissa; 16 for 2- and 4-bit codes (so codes j and j + per/2 share a shift), 8 for
// 8-bit codes (codes 0, 1 from the word, 2, 3 from the word shifted by 16).
template <int Bits>
struct Codes {
  static constexpr int per = 32 / Bits;
  static constexpr int kHigh = Bits == 8 ? 8 : 16;
  static constexpr int shift(int j) { return (Bits * j) & ~kHigh; }
  static constexpr int pos(int j) { return (Bits * j) & kHigh; }
};

template <class L>
struct PackedLanes {
  using I = typename L::I;
  using F = typename L::F;
  static constexpr int kLanes = L::kLanes;
  static constexpr int kPanelVectors = static_cast<int>(kPanel) / kLanes;

  static I load_words(const uint32_t* p) { return L::load(reinterpret_cast<const int32_t*>(p)); }

  // The float 2^(23 - P) + q, q the Bits-bit field at bit P of `shifted`.
  template <int Bits, int P>
  static F biased_code(I shifted) {
    return L::from_bits(L::and_or(shifted, L::splat(((1 << Bits) - 1) << P), L::splat((127 + 23 - P) << 23)));
  }

  // The float 2^(23 - P) + z of a vector of zero points (exact: below 2^24).
  template <int P>
  static F biased_zero(I z) {
    return L::to_float(L::add(z, L::splat(1 << (23 - P))));
  }

  // float(q - z) of code j of a vector of words.
  template <int Bits, int J>
  static F code_minus_zero(I words, const F (&zc)[2]) {
    using C = Codes<Bits>;
    constexpr int s = C::shift(J), p = C::pos(J);
    const I shifted = s == 0 ? words : L::template srli<s>(words);
    return L::fsub(biased_code<Bits, p>(shifted), zc[p == 0 ? 0 : 1]);
  }

  // Words of column vector v of a tile starting at padded column c0: panel c / 32, column
  // c % 32 of it, word row 0.
  static const uint32_t* column_words(const View& w, int64_t c0, int v) {
    const int64_t c = c0 + kLanes * v;
    return w.words + (c / kPanel) * w.word_rows() * kPanel + c % kPanel;
  }

  // y[i, c0 .. c0 + kLanes NV) for i < MR, x rows at x + i * w.k (canonical order), columns
  // beyond w.n not stored. Registers: MR * NV accumulators and NV biased zero points.
  template <int Bits, int MR, int NV>
  static void small_tile(const float* x, const View& w, int64_t c0, float* y, int64_t ldy) {
    using C = Codes<Bits>;
    const int64_t rows_per_group = w.group_size / C::per;
    const uint32_t* words[NV];
    for (int v = 0; v < NV; ++v) words[v] = column_words(w, c0, v);
    F out[MR][NV];
    for (int i = 0; i < MR; ++i)
      for (int v = 0; v < NV; ++v) out[i][v] = L::fzero();
    for (int64_t g = 0; g < w.groups; ++g) {
      const int64_t param = g * w.padded_cols() + c0;
      F zc[NV];
      for (int v = 0; v < NV; ++v) zc[v] = biased_zero<0>(L::load(w.zeros + param + kLanes * v));
      F acc[MR][NV];
      for (int i = 0; i < MR; ++i)
        for (int v = 0; v < NV; ++v) acc[i][v] = L::fzero();
      const int64_t r0 = g * rows_per_group;
      for (int64_t r = r0; r < r0 + rows_per_group; ++r) {
        const float* xk = x + r * C::per;
        I wv[NV];
        for (int v = 0; v < NV; ++v) wv[v] = load_words(words[v] + r * kPanel);
        I count = L::zero();
#pragma GCC unroll 1
        for (int j = 0; j < C::per; ++j) {
          F xb[MR];
#pragma GCC unroll 4
          for (int i = 0; i < MR; ++i) xb[i] = L::fsplat(xk[i * w.k + j]);
#pragma GCC unroll 8
          for (int v = 0; v < NV; ++v) {
            const F d = L::fsub(biased_code<Bits, 0>(L::srlv(wv[v], count)), zc[v]);
#pragma GCC unroll 4
            for (int i = 0; i < MR; ++i) acc[i][v] = L::fadd(acc[i][v], L::fmul(xb[i], d));
          }
          count = L::add(count, L::splat(Bits));
        }
      }
      for (int v = 0; v < NV; ++v) {
        const F s = L::fload(w.scales + param + kLanes * v);
        for (int i = 0; i < MR; ++i) out[i][v] = L::fadd(out[i][v], L::fmul(acc[i][v], s));
      }
    }
    for (int i = 0; i < MR; ++i)
      for (int v = 0; v < NV; ++v)
        if (c0 + kLanes * v < w.n) L::fstore_n(y + i * ldy + c0 + kLanes * v, w.n - c0 - kLanes * v, out[i][v]);
  }

  // Column vectors per tile for MR rows: a quarter of the registers for one row, then half
  // as many for two rows, a quarter for three or four.
  static constexpr int columns_for(int mr) {
    const int nv = L::kRegisters / 4 / (mr == 1 ? 1 : mr == 2 ? 2 : 4);
    return nv > 1 ? nv : 1;
  }

  // Tiles of NV column vectors from padded column c0 on, then narrower ones for the rest.
  template <int Bits, int MR, int NV>
  static void small_columns(const float* x, const View& w, int64_t c0, float* y) {
    const int64_t cols = w.padded_cols();
    for (; c0 + NV * kLanes <= cols; c0 += NV * kLanes) small_tile<Bits, MR, NV>(x, w, c0, y, w.n);
    if constexpr (NV > 1) {
      if (c0 < cols) small_columns<Bits, MR, NV / 2>(x, w, c0, y);
    }
  }

  template <int Bits>
  static void matmul_small(const float* x, int64_t m, const View& w, float* y) {
    for (int64_t i = 0; i < m;) {
      const int64_t rows = std::min<int64_t>(4, m - i);
      const float* xi = x + i * w.k;
      float* yi = y + i * w.n;
      switch (rows) {
        case 4: small_columns<Bits, 4, columns_for(4)>(xi, w, 0, yi); break;
        case 3: small_columns<Bits, 3, columns_for(3)>(xi, w, 0, yi); break;
        case 2: small_columns<Bits, 2, columns_for(2)>(xi, w, 0, yi); break;
        default: small_columns<Bits, 1, columns_for(1)>(xi, w, 0, yi); break;
      }
      i += rows;
    }
  }

  // Code J of one word row of a panel, as floats q - z, into row J of the tile d.
  template <int Bits, int J>
  static void store_code(const I (&wv)[kPanelVectors], const F (&zc)[kPanelVectors][2], float* d) {
    for (int v = 0; v < kPanelVectors; ++v) L::fstore(d + J * kPanel + kLanes * v, code_minus_zero<Bits, J>(wv[v], zc[v]));
  }

  // The floats q - z of group g of panel p, row-major [group_size][32] (16 KB for groups of
  // 128: it stays in L1 while every row of x uses it).
  template <int Bits>
  static void unpack_group(const View& w, int64_t p, int64_t g, float* d) {
    using C = Codes<Bits>;
    const int64_t param = g * w.padded_cols() + p * kPanel;
    F zc[kPanelVectors][2];
    for (int v = 0; v < kPanelVectors; ++v) {
      const I z = L::load(w.zeros + param + kLanes * v);
      zc[v][0] = biased_zero<0>(z);
      zc[v][1] = biased_zero<C::kHigh>(z);
    }
    const int64_t rows_per_group = w.group_size / C::per;
    const uint32_t* words = w.words + (p * w.word_rows() + g * rows_per_group) * kPanel;
    for (int64_t r = 0; r < rows_per_group; ++r, words += kPanel, d += C::per * kPanel) {
      I wv[kPanelVectors];
      for (int v = 0; v < kPanelVectors; ++v) wv[v] = load_words(words + kLanes * v);
      [&]<int... J>(std::integer_sequence<int, J...>) { (store_code<Bits, J>(wv, zc, d), ...); }(
          std::make_integer_sequence<int, C::per>{});
    }
  }

  // Rows of x per unpacked tile, and with two column vectors each, 2 * kTileRows
  // accumulators: sixteen multiplies and sixteen adds per two tile loads and eight
  // broadcasts with 32 registers.
  static constexpr int kTileRows = L::kRegisters >= 32 ? 8 : 6;

  // MR rows of x (from the group's first column, row stride ldx) against two column vectors
  // (from c0) of an unpacked group tile d [rows][32]: per lane acc = acc + x * d in row
  // order, then out = out + acc * s.
  template <int MR>
  static void tile_from_unpacked(const float* x, int64_t ldx, const float* d, int64_t rows, const float* scales, int c0,
                                 float* out) {
    F acc[MR][2];
    for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = L::fzero();
    d += c0;
    for (int64_t k = 0; k < rows; ++k, d += kPanel) {
      const F d0 = L::fload(d), d1 = L::fload(d + kLanes);
      for (int i = 0; i < MR; ++i) {
        const F xb = L::fsplat(x[i * ldx + k]);
        acc[i][0] = L::fadd(acc[i][0], L::fmul(xb, d0));
        acc[i][1] = L::fadd(acc[i][1], L::fmul(xb, d1));
      }
    }
    for (int v = 0; v < 2; ++v) {
      const F s = L::fload(scales + c0 + kLanes * v);
      for (int i = 0; i < MR; ++i) {
        float* o = out + i * kPanel + c0 + kLanes * v;
        L::fstore(o, L::fadd(L::fload(o), L::fmul(acc[i][v], s)));
      }
    }
  }

  template <int... R>
  static void rows_from_unpacked(std::integer_sequence<int, R...>, const float* x, int64_t ldx, int64_t rows,
                                 const float* d, int64_t k, const float* scales, float* out) {
    for (int c0 = 0; c0 < kPanel; c0 += 2 * kLanes)
      ((rows == R + 1 ? tile_from_unpacked<R + 1>(x, ldx, d, k, scales, c0, out) : void()), ...);
  }

  template <int Bits>
  static void matmul_unpacked(const float* x, int64_t m, const View& w, float* y) {
    std::vector<float> d(static_cast<size_t>(w.group_size * kPanel));
    std::vector<float> out(static_cast<size_t>(m * kPanel));
    for (int64_t p = 0; p < w.panels; ++p) {
      std::fill(out.begin(), out.end(), 0.0f);
      for (int64_t g = 0; g < w.groups; ++g) {
        unpack_group<Bits>(w, p, g, d.data());
        const float* scales = w.scales + g * w.padded_cols() + p * kPanel;
        for (int64_t i = 0; i < m; i += kTileRows)
          rows_from_unpacked(std::make_integer_sequence<int, kTileRows>{}, x + i * w.k + g * w.group_size, w.k,
                             std::min<int64_t>(kTileRows, m - i), d.data(), w.group_size, scales,
                             out.data() + i * kPanel);
      }
      const int64_t cols = std::min(kPanel, w.n - p * kPanel);
      for (int64_t i = 0; i < m; ++i)
        std::copy(out.data() + i * kPanel, out.data() + i * kPanel + cols, y + i * w.n + p * kPanel);
    }
  }

  template <int Bits>
  static void matmul(const float* x, int64_t m, const View& w, float* y) {
    if (m >= kUnpackRows) matmul_unpacked<Bits>(x, m, w, y);
    else matmul_small<Bits>(x, m, w, y);
  }

  static void dispatch(const float* x, int64_t m, const View& w, float* y) {
    switch (w.bits) {
      case 2: matmul<2>(x, m, w, y); break;
      case 4: matmul<4>(x, m, w, y); break;
      default: matmul<8>(x, m, w, y); break;
    }
  }
};

}  // namespace fixq::weightonly_detail
