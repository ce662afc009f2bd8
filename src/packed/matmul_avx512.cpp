// The AVX-512 weight-only matmul kernel, 16 columns per vector, bit-identical to the scalar
// kernel (matmul_scalar.cpp): per lane the same IEEE operations on the same operands in
// the same order, acc = acc + x[k] * float(q - z) in row order, then out = out + acc * s
// group after group, a separate multiply and add each time (no FMA: it would skip a
// rounding the reference makes).
//
// float(q - z) without an integer subtract and a conversion: one vpternlogd puts the code
// q, found at bit p of the (shifted) word, under the exponent of 2^(23 - p), which gives
// the float 2^(23 - p) + q exactly (the mantissa's lowest bit weighs 2^-p, so bit p weighs
// 1); subtracting the float 2^(23 - p) + z then gives q - z exactly (both lie in one
// binade with a spacing that divides 1, and |q - z| < 256), +0 when q == z as the
// conversion gives.
//
// Two schedules, as in the AVX2 kernel:
//   M < kUnpackRows: each packed word row is loaded once and unpacked in registers for
//           MR <= 4 rows of x against NV column vectors (8 at M = 1: 128 columns, eight
//           independent accumulators). Code j is read at p = 0 after a vpsrlvd by
//           bits * j, which leaves the word intact (no register copy for the destructive
//           vpternlogd) and keeps the loop over j short: one shift, vpternlogd, subtract,
//           multiply and add per 16 weights at M = 1;
//   M >= kUnpackRows: each group of a panel is unpacked once into an L1 tile of floats
//           q - z (two positions p per shift, see Codes), which an 8 x 32 register tile
//           of multiplies and adds reuses for every row of x.
#include "cpu/x86.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "packed/layout.h"

namespace fixq::packed_detail::FIXQ_KERNEL_NS(avx512) {

namespace {

constexpr int kLanes = 16;
constexpr int64_t kUnpackRows = 8;

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

__m512i load_words(const uint32_t* p) { return _mm512_loadu_si512(static_cast<const void*>(p)); }

// The float 2^(23 - P) + q, q the Bits-bit field at bit P of `shifted`: (shifted & mask) | exponent.
template <int Bits, int P>
__m512 biased_code(__m512i shifted) {
  const __m512i field = _mm512_set1_epi32(((1 << Bits) - 1) << P);
  const __m512i exponent = _mm512_set1_epi32((127 + 23 - P) << 23);
  return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(shifted, field, exponent, 0xEA));  // (a & b) | c
}

// The float 2^(23 - P) + z of 16 zero points (exact: below 2^24).
template <int P>
__m512 biased_zero(__m512i z) {
  return _mm512_cvtepi32_ps(_mm512_add_epi32(z, _mm512_set1_epi32(1 << (23 - P))));
}

// float(q - z) of code j of 16 words.
template <int Bits, int J>
__m512 code_minus_zero(__m512i words, const __m512 (&zc)[2]) {
  using C = Codes<Bits>;
  constexpr int s = C::shift(J), p = C::pos(J);
  const __m512i shifted = s == 0 ? words : _mm512_srli_epi32(words, s);
  const __m512 biased = biased_code<Bits, p>(shifted);
  return _mm512_sub_ps(biased, zc[p == 0 ? 0 : 1]);
}

// Stores 16 lanes, the first `count` of them (all when count >= 16).
void store_lanes(float* p, __m512 v, int64_t count) {
  if (count >= kLanes) {
    _mm512_storeu_ps(p, v);
  } else if (count > 0) {
    _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << count) - 1u), v);
  }
}

// Words of column vector v (16 columns) of a tile starting at padded column c0: panel
// (c0 + 16 v) / 32, half (c0 + 16 v) % 32, word row 0.
const uint32_t* column_words(const View& w, int64_t c0, int v) {
  const int64_t c = c0 + kLanes * v;
  return w.words + (c / kPanel) * w.word_rows() * kPanel + c % kPanel;
}

// y[i, c0 .. c0 + 16 NV) for i < MR, x rows at x + i * w.k (canonical order), columns
// beyond w.n not stored. Registers: MR * NV accumulators and NV biased zero points.
template <int Bits, int MR, int NV>
void small_tile(const float* x, const View& w, int64_t c0, float* y, int64_t ldy) {
  using C = Codes<Bits>;
  const int64_t rows_per_group = w.group_size / C::per;
  const uint32_t* words[NV];
  for (int v = 0; v < NV; ++v) words[v] = column_words(w, c0, v);
  __m512 out[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) out[i][v] = _mm512_setzero_ps();
  for (int64_t g = 0; g < w.groups; ++g) {
    const int64_t param = g * w.padded_cols() + c0;
    __m512 zc[NV];
    for (int v = 0; v < NV; ++v)
      zc[v] = biased_zero<0>(_mm512_loadu_si512(static_cast<const void*>(w.zeros + param + kLanes * v)));
    __m512 acc[MR][NV];
    for (int i = 0; i < MR; ++i)
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
    const int64_t r0 = g * rows_per_group;
    for (int64_t r = r0; r < r0 + rows_per_group; ++r) {
      const float* xk = x + r * C::per;
      __m512i wv[NV];
      for (int v = 0; v < NV; ++v) wv[v] = load_words(words[v] + r * kPanel);
      __m512i count = _mm512_setzero_si512();
#pragma GCC unroll 1
      for (int j = 0; j < C::per; ++j) {
        __m512 xb[MR];
#pragma GCC unroll 4
        for (int i = 0; i < MR; ++i) xb[i] = _mm512_set1_ps(xk[i * w.k + j]);
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) {
          const __m512 biased = biased_code<Bits, 0>(_mm512_srlv_epi32(wv[v], count));
          const __m512 d = _mm512_sub_ps(biased, zc[v]);
#pragma GCC unroll 4
          for (int i = 0; i < MR; ++i) acc[i][v] = _mm512_add_ps(acc[i][v], _mm512_mul_ps(xb[i], d));
        }
        count = _mm512_add_epi32(count, _mm512_set1_epi32(Bits));
      }
    }
    for (int v = 0; v < NV; ++v) {
      const __m512 s = _mm512_loadu_ps(w.scales + param + kLanes * v);
      for (int i = 0; i < MR; ++i) out[i][v] = _mm512_add_ps(out[i][v], _mm512_mul_ps(acc[i][v], s));
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) store_lanes(y + i * ldy + c0 + kLanes * v, out[i][v], w.n - c0 - kLanes * v);
}

// MR rows of x against every column, NV column vectors per tile (fewer at the end).
template <int Bits, int MR>
void small_rows(const float* x, const View& w, float* y) {
  constexpr int NV = MR == 1 ? 8 : (MR == 2 ? 4 : 2);
  const int64_t cols = w.padded_cols();
  int64_t c0 = 0;
  for (; c0 + NV * kLanes <= cols; c0 += NV * kLanes) small_tile<Bits, MR, NV>(x, w, c0, y, w.n);
  if constexpr (NV > 4) {
    if (c0 + 4 * kLanes <= cols) {
      small_tile<Bits, MR, 4>(x, w, c0, y, w.n);
      c0 += 4 * kLanes;
    }
  }
  if constexpr (NV > 2) {
    if (c0 < cols) small_tile<Bits, MR, 2>(x, w, c0, y, w.n);
  }
}

template <int Bits>
void matmul_small(const float* x, int64_t m, const View& w, float* y) {
  for (int64_t i = 0; i < m;) {
    const int64_t rows = std::min<int64_t>(4, m - i);
    const float* xi = x + i * w.k;
    float* yi = y + i * w.n;
    switch (rows) {
      case 4: small_rows<Bits, 4>(xi, w, yi); break;
      case 3: small_rows<Bits, 3>(xi, w, yi); break;
      case 2: small_rows<Bits, 2>(xi, w, yi); break;
      default: small_rows<Bits, 1>(xi, w, yi); break;
    }
    i += rows;
  }
}

// Code J of one word row of a panel, as floats q - z, into row J of the tile d.
template <int Bits, int J>
void store_code(const __m512i (&wv)[2], const __m512 (&zc)[2][2], float* d) {
  const __m512 lo = code_minus_zero<Bits, J>(wv[0], zc[0]), hi = code_minus_zero<Bits, J>(wv[1], zc[1]);
  _mm512_storeu_ps(d + J * kPanel, lo);
  _mm512_storeu_ps(d + J * kPanel + kLanes, hi);
}

// The floats q - z of group g of panel p, row-major [group_size][32] (16 KB for groups of
// 128: it stays in L1 while every row of x uses it).
template <int Bits>
void unpack_group(const View& w, int64_t p, int64_t g, float* d) {
  using C = Codes<Bits>;
  const int64_t param = g * w.padded_cols() + p * kPanel;
  __m512 zc[2][2];
  for (int v = 0; v < 2; ++v) {
    const __m512i z = _mm512_loadu_si512(static_cast<const void*>(w.zeros + param + kLanes * v));
    zc[v][0] = biased_zero<0>(z);
    zc[v][1] = biased_zero<C::kHigh>(z);
  }
  const int64_t rows_per_group = w.group_size / C::per;
  const uint32_t* words = w.words + (p * w.word_rows() + g * rows_per_group) * kPanel;
  for (int64_t r = 0; r < rows_per_group; ++r, words += kPanel, d += C::per * kPanel) {
    const __m512i wv[2] = {load_words(words), load_words(words + kLanes)};
    [&]<int... J>(std::integer_sequence<int, J...>) { (store_code<Bits, J>(wv, zc, d), ...); }(
        std::make_integer_sequence<int, C::per>{});
  }
}

// MR rows of x (from the group's first column, row stride ldx) against an unpacked group
// tile d [rows][32]: per lane acc = acc + x * d in row order, then out = out + acc * s.
// 2 * MR accumulators: at MR = 8, sixteen multiplies and sixteen adds per two tile loads
// and eight broadcasts.
template <int MR>
void tile_from_unpacked(const float* x, int64_t ldx, const float* d, int64_t rows, const float* scales, float* out) {
  __m512 acc[MR][2];
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < rows; ++k, d += kPanel) {
    const __m512 d0 = _mm512_loadu_ps(d), d1 = _mm512_loadu_ps(d + kLanes);
    for (int i = 0; i < MR; ++i) {
      const __m512 xb = _mm512_set1_ps(x[i * ldx + k]);
      acc[i][0] = _mm512_add_ps(acc[i][0], _mm512_mul_ps(xb, d0));
      acc[i][1] = _mm512_add_ps(acc[i][1], _mm512_mul_ps(xb, d1));
    }
  }
  for (int v = 0; v < 2; ++v) {
    const __m512 s = _mm512_loadu_ps(scales + kLanes * v);
    for (int i = 0; i < MR; ++i) {
      float* o = out + i * kPanel + kLanes * v;
      _mm512_storeu_ps(o, _mm512_add_ps(_mm512_loadu_ps(o), _mm512_mul_ps(acc[i][v], s)));
    }
  }
}

template <int... R>
void rows_from_unpacked_impl(std::integer_sequence<int, R...>, const float* x, int64_t ldx, int64_t rows,
                             const float* d, int64_t k, const float* scales, float* out) {
  ((rows == R + 1 ? tile_from_unpacked<R + 1>(x, ldx, d, k, scales, out) : void()), ...);
}

template <int Bits>
void matmul_unpacked(const float* x, int64_t m, const View& w, float* y) {
  constexpr int kRows = 8;
  std::vector<float> d(static_cast<size_t>(w.group_size * kPanel));
  std::vector<float> out(static_cast<size_t>(m * kPanel));
  for (int64_t p = 0; p < w.panels; ++p) {
    std::fill(out.begin(), out.end(), 0.0f);
    for (int64_t g = 0; g < w.groups; ++g) {
      unpack_group<Bits>(w, p, g, d.data());
      const float* scales = w.scales + g * w.padded_cols() + p * kPanel;
      for (int64_t i = 0; i < m; i += kRows)
        rows_from_unpacked_impl(std::make_integer_sequence<int, kRows>{}, x + i * w.k + g * w.group_size, w.k,
                                std::min<int64_t>(kRows, m - i), d.data(), w.group_size, scales,
                                out.data() + i * kPanel);
    }
    const int64_t cols = std::min(kPanel, w.n - p * kPanel);
    for (int64_t i = 0; i < m; ++i)
      std::copy(out.data() + i * kPanel, out.data() + i * kPanel + cols, y + i * w.n + p * kPanel);
  }
}

template <int Bits>
void matmul(const float* x, int64_t m, const View& w, float* y) {
  if (m >= kUnpackRows) {
    matmul_unpacked<Bits>(x, m, w, y);
  } else {
    matmul_small<Bits>(x, m, w, y);
  }
}

void dispatch(const float* x, int64_t m, const View& w, float* y) {
  switch (w.bits) {
    case 2: matmul<2>(x, m, w, y); break;
    case 4: matmul<4>(x, m, w, y); break;
    default: matmul<8>(x, m, w, y); break;
  }
}

}  // namespace

extern const PackedKernels kPacked;
const PackedKernels kPacked{dispatch};

}  // namespace fixq::packed_detail::FIXQ_KERNEL_NS(avx512)
