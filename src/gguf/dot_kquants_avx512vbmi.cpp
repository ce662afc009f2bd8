// The AVX512_VBMI family's dots and matrix-vector products of Q3_K ... Q6_K: the kernels
// of dot_kquants_avx512.inc with their byte reorders as single vpermb instructions, and Q4_K in
// its own layout, the nibble planes below. Measured on Zen 5 against the AVX-512
// family's (alternated runs, 128 x 4096 GEMV): see the README.
// The other 256-element formats keep the AVX-512 family's kernels (kernels_avx512vbmi.cpp).
#define FIXQ_GGUF_VBMI 1
#include <type_traits>

#include "gguf/dot_kquants_avx512.inc"
#include "gguf/kernels_avx512vbmi.h"

// The nibble planes: the AVX512_VBMI family's layout of Q4_K and Q5_K for ScaleMinDriver
// (dot_kquants_avx512.inc), with vpdpbusd on whole nibble planes.
//
// The class layouts spend two multiplies per 64 codes: vpmaddubsw for the products and
// vpdpwssd for the scales. Here one vpermb puts 64 bytes of qs (chunks 2h and 2h + 1: 128
// codes) so that each dword holds four bytes of one chunk and one class: qs bytes c, c + 8,
// c + 16, c + 24 of the chunk. A byte's two nibbles are elements j and 32 + j of its chunk
// (j = its index there), both of class j mod 8, so the low nibbles (sub-blocks 4h and 4h +
// 2) and the high ones (4h + 1 and 4h + 3) are two planes of such dwords, and vpdpbusd
// sums each dword's four products against activations in the same order: |sum| <= 4 * 15 *
// 128 = 7680, exact as int16. vpackssdw packs the two planes' sums into words and one
// vpdpwssd multiplies them by their sub-blocks' scales and adds pairs of the same class:
// three multiplies per 128 codes instead of four, with one reorder instead of two.
//
// 128-bit lane L, dword d = 0..3, byte t = 0..3: qs byte 32 (d & 1) + c + 8t of the 64,
// class c = 2L + (d >> 1). After the pack, dwords 0, 1 of lane L pair the low planes of
// chunks 2h, 2h + 1 for classes 2L, 2L + 1 (scale words sc[4h], sc[4h + 2]) and dwords 2,
// 3 their high planes (sc[4h + 1], sc[4h + 3]). Adding each lane's two dword pairs leaves
// classes 2L, 2L + 1 in dwords 0, 1; a second row's go to dwords 2, 3 of the same vector.
//
// Q5_K: element j of sub-block s has its fifth bit at bit s of qh[j]. One vpermb puts qh
// byte c + 8t (the chunk index of both nibbles of the qs byte at p) at every p; a per-dword
// rotate brings the plane's bit (4h + 2 (d & 1), plus 1 for the high plane) to bit 4 of
// the same byte, and 16 joins the code: u <= 31, |sum| <= 4 * 31 * 128 = 15872, still exact
// as int16.


namespace fixq::gguf::detail {

namespace {

// Byte p = 16L + 4d + t of the reorder: qs byte 32 (d & 1) + c + 8t; of the activations
// (from 128 q8 bytes): 64 (d & 1) + 32 (high plane) + c + 8t.
constexpr int nibble_plane_qs_byte(int p) { return 32 * ((p / 4) & 1) + 2 * (p / 16) + (p / 4) % 4 / 2 + 8 * (p % 4); }
alignas(64) constexpr auto kNibblePlaneIndex = [] {
  struct {
    int8_t qs[64], qh[64], lo[64], hi[64];
  } t{};
  for (int p = 0; p < 64; ++p) {
    const int b = nibble_plane_qs_byte(p);
    t.qs[p] = static_cast<int8_t>(b);
    t.qh[p] = static_cast<int8_t>(b % 32);
    t.lo[p] = static_cast<int8_t>(64 * (b / 32) + b % 32);
    t.hi[p] = static_cast<int8_t>(64 * (b / 32) + 32 + b % 32);
  }
  return t;
}();

template <class B>
struct NibblePlanesLayout {
  using Block = B;
  static constexpr bool kFifthBit = std::is_same_v<B, BlockQ5_K>;
  // Per super-block: for h = 0, 1 the activations facing the low and the high plane of qs
  // bytes 64h .. 64h + 63.
  struct Acts {
    alignas(64) int8_t lo[2][64];
    alignas(64) int8_t hi[2][64];
  };

  static void prepare_acts(const std::byte* qs, Acts* a) {
    const __m512i lo = _mm512_load_si512(kNibblePlaneIndex.lo), hi = _mm512_load_si512(kNibblePlaneIndex.hi);
    for (int h = 0; h < 2; ++h) {
      const __m512i y0 = load64(qs + 128 * h), y1 = load64(qs + 128 * h + 64);
      _mm512_store_si512(a->lo[h], _mm512_permutex2var_epi8(y0, lo, y1));
      _mm512_store_si512(a->hi[h], _mm512_permutex2var_epi8(y0, hi, y1));
    }
  }

  // Super-block i's four dwords at 4i: (sc[0], sc[2]), (sc[1], sc[3]), (sc[4], sc[6]),
  // (sc[5], sc[7]) as word pairs; the dot broadcasts each qword [a, b] and spreads it to [a,
  // a, b, b] per lane with vpunpckldq, which any vector pipe of Zen 5 runs (4 per cycle).
  FIXQ_GGUF_INLINE_MEMBER static __m512i scale_words(__m512i v) {
    return _mm512_shuffle_epi8(v, _mm512_broadcast_i32x4(_mm_setr_epi8(0, -1, 2, -1, 1, -1, 3, -1, 4, -1, 6, -1, 5, -1, 7, -1)));
  }

  // R (1 or 2) rows at once; row r's classes in dwords 2r, 2r + 1 of each lane of one float
  // vector (R = 1: dwords 2, 3 unused). Each row's eight sums and sumf take their terms in
  // super-block order, as in the class layout.
  template <int R>
  static void dot_rows(const std::byte* const* xs, int64_t n, const Acts* a, const ScaleMinRow* const* rows, float* out) {
    const __m512i index = _mm512_load_si512(kNibblePlaneIndex.qs), qh_index = _mm512_load_si512(kNibblePlaneIndex.qh);
    const __m512i low4 = _mm512_set1_epi8(0x0F), zero = _mm512_setzero_si512();
    // Rotations of plane (h, high) bringing bit 4h + 2 (d & 1) + high to bit 4 (mod 32).
    const auto rotation = [](int h, int high) {
      const auto r = [&](int odd) { return (4 - (4 * h + 2 * odd + high)) & 31; };
      return _mm512_setr_epi32(r(0), r(1), r(0), r(1), r(0), r(1), r(0), r(1), r(0), r(1), r(0), r(1), r(0), r(1), r(0), r(1));
    };
    [[maybe_unused]] __m512i rot[2][2];
    if constexpr (kFifthBit)
      for (int h = 0; h < 2; ++h) rot[h][0] = rotation(h, 0), rot[h][1] = rotation(h, 1);
    ScaleMinCursor<R, Block> row(xs, rows, 0);
    __m512 sums = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; ++i) {
      __m512i acc[R];
      [[maybe_unused]] __m512i qh[R];
      for (int r = 0; r < R; ++r) {
        acc[r] = zero;
        if constexpr (kFifthBit)
          qh[r] = _mm512_permutexvar_epi8(qh_index, _mm512_castsi256_si512(load32(row.x[r] + offsetof(Block, qh))));
      }
      for (int h = 0; h < 2; ++h) {
        const __m512i ylo = _mm512_load_si512(a[i].lo[h]), yhi = _mm512_load_si512(a[i].hi[h]);
        for (int r = 0; r < R; ++r) {
          const __m512i z = _mm512_permutexvar_epi8(index, load64(row.x[r] + offsetof(Block, qs) + 64 * h));
          __m512i lo = _mm512_and_si512(z, low4), hi = _mm512_and_si512(_mm512_srli_epi16(z, 4), low4);
          if constexpr (kFifthBit) {  // | (bit & 16)
            const __m512i sixteen = _mm512_set1_epi8(16);
            lo = _mm512_ternarylogic_epi32(lo, _mm512_rolv_epi32(qh[r], rot[h][0]), sixteen, 0xF8);
            hi = _mm512_ternarylogic_epi32(hi, _mm512_rolv_epi32(qh[r], rot[h][1]), sixteen, 0xF8);
          }
          const __m512i sums16 = _mm512_packs_epi32(_mm512_dpbusd_epi32(zero, lo, ylo), _mm512_dpbusd_epi32(zero, hi, yhi));
          const __m512i ab = _mm512_set1_epi64(load_as<long long>(row.sw[r] + 2 * h));
          const __m512i scales = _mm512_unpacklo_epi32(ab, ab);  // [a, a, b, b] per lane
          acc[r] = _mm512_dpwssd_epi32(acc[r], sums16, scales);
        }
      }
      // Each lane's dword pairs added: row 0's into dwords 0, 1, row 1's into 2, 3.
      __m512i lanes = _mm512_add_epi32(acc[0], _mm512_unpackhi_epi64(acc[0], acc[0]));
      __m512 dd = _mm512_set1_ps(*row.d[0]);
      if constexpr (R == 2) {
        lanes = _mm512_mask_blend_epi32(0xCCCC, lanes, _mm512_add_epi32(acc[1], _mm512_unpacklo_epi64(acc[1], acc[1])));
        dd = _mm512_mask_blend_ps(0xCCCC, dd, _mm512_set1_ps(*row.d[1]));
      }
      sums = _mm512_add_ps(sums, _mm512_mul_ps(dd, _mm512_cvtepi32_ps(lanes)));
      row.next();
    }
    alignas(64) float s[16];
    _mm512_store_ps(s, sums);
    row.finish(s, [](int r, int c) { return 4 * (c / 2) + 2 * r + c % 2; }, out);
  }
};

}  // namespace

}  // namespace fixq::gguf::detail

namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512vbmi) {

FIXQ_GGUF_KQUANT_KERNELS(q3_k, RowDriver<Q3K>)
FIXQ_GGUF_KQUANT_KERNELS(q4_k, ScaleMinDriver<NibblePlanesLayout<BlockQ4_K>>)
FIXQ_GGUF_KQUANT_KERNELS(q5_k, ScaleMinDriver<NibblePlanesLayout<BlockQ5_K>>)
FIXQ_GGUF_KQUANT_KERNELS(q6_k, RowDriver<Q6K>)

}  // namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512vbmi)
