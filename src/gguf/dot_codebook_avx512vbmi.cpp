// AVX512_VBMI dot products and matrix-vector products of the 4-bit codebook formats: IQ4_NL,
// MXFP4 and NVFP4 against Q8_0, IQ4_XS against Q8_K. Bit-identical (bound 0) to dot_*_ref:
// the integer sum of each block (or sub-block) is exact, and each term is the reference's
// float expression on the same operands, added to the row's sum in block order by the
// interleaved-rows driver (matvec_avx512.h), as in the AVX-512 kernels.
//
// What VBMI changes (the AVX-512 kernels of dot_legacy_avx512.cpp and dot_kquants_avx512.cpp
// are the comparison):
// - vpermb looks 64 codes up at once in the 16-entry table written four times (CodeTable,
//   util_avx512.h). It reads only the low 6 bits of each index byte, so a byte's low nibble
//   needs no mask, and its high nibble needs only a 16-bit shift by 4 (the bits shifted in
//   from the next byte land in bits 4-7, which select an identical copy or are ignored).
// - vpermi2b picks the code bytes of four IQ4_NL / MXFP4 blocks (or two NVFP4 blocks) out of
//   one 64-byte load and a short one, skipping their scale fields, where AVX-512BW loads
//   each block's 16 bytes into its own 128-bit lane.
// - A merge-masked vpermb collects the blocks' scale bytes from the same loads, where the
//   AVX-512 kernels gather them (vpgatherdd, one load per block).
//
// Exact sums: the codes become unsigned values u = v + 128 (the tables hold v + 128), and
// vpdpbusd adds four products u * y per int32 lane without saturation, so sum(v * y) =
// sum(u * y) - 128 * sum(y), where 128 * sum(y) of each activation block (or sub-block) is
// computed once per call. Each 128-bit lane of the code vectors holds one block's (or sub-
// block's) codes: the low nibbles in `lo`, the high ones in `hi`. The activation quants are
// copied once per call into the same order (prepare), so that the lane's four int32 sums of
// vpdpbusd(lo) + vpdpbusd(hi) belong to that block alone.
#include <bit>

#include "gguf/util_avx512.h"
#include "gguf/blocks.h"
#include "gguf/ggml_arith.h"
#include "gguf/kernels_avx512vbmi.h"
#include "gguf/matvec_avx512.h"

namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512vbmi) {

namespace {

// 64 byte indexes for vpermb / vpermi2b, or a byte mask's bit pattern.
struct ByteIndex {
  alignas(64) uint8_t b[64];
};

template <class F>
constexpr ByteIndex byte_index(F f) {
  ByteIndex t{};
  for (int i = 0; i < 64; ++i) t.b[i] = static_cast<uint8_t>(f(i));
  return t;
}

FIXQ_GGUF_INLINE __m512i load_index(const ByteIndex& t) { return _mm512_load_si512(t.b); }

// Table values (+ 128) of the low and of the high nibbles of 64 bytes.
FIXQ_GGUF_INLINE __m512i low_values(__m512i bytes, __m512i table) { return _mm512_permutexvar_epi8(bytes, table); }
FIXQ_GGUF_INLINE __m512i high_values(__m512i bytes, __m512i table) {
  return _mm512_permutexvar_epi8(_mm512_srli_epi16(bytes, 4), table);
}

// sum(u * y) in each int32 lane for the 64 low-nibble values lo and 64 high-nibble values hi
// against the prepared activations (exact: at most 8 products of 255 * 128 per lane).
FIXQ_GGUF_INLINE __m512i dot_halves(__m512i lo, __m512i hi, const int8_t* y_lo, const int8_t* y_hi) {
  const __m512i s = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, _mm512_load_si512(y_lo));
  return _mm512_dpbusd_epi32(s, hi, _mm512_load_si512(y_hi));
}

// 128 * the sums of groups of 32 int8: group 4k + L is lane L (16 bytes) of lo[k] and of
// hi[k]; lane j of the result for group j: the offset term of the unsigned codes.
FIXQ_GGUF_INLINE __m512i sums_times_128(const __m512i* lo, const __m512i* hi) {
  __m512i s[4];
  const __m512i ones = _mm512_set1_epi8(1);
  for (int k = 0; k < 4; ++k) s[k] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, lo[k]), ones, hi[k]);
  return _mm512_slli_epi32(sum_lanes_4x4(s), 7);
}
FIXQ_GGUF_INLINE __m512i sums_times_128(const int8_t (*lo)[64], const int8_t (*hi)[64]) {
  __m512i l[4], h[4];
  for (int k = 0; k < 4; ++k) {
    l[k] = _mm512_load_si512(lo[k]);
    h[k] = _mm512_load_si512(hi[k]);
  }
  return sums_times_128(l, h);
}

// ---- IQ4_NL and MXFP4: 16 blocks of 32 per terms() call, against 16 Q8_0 blocks.

// Q8_0 quants in the code vectors' order: lo[g] lane k holds quants 0..15 of block 4g + k
// (they meet its low nibbles), hi[g] lane k its quants 16..31.
struct Q8Halves {
  alignas(64) int8_t lo[4][64];
  alignas(64) int8_t hi[4][64];
  alignas(64) float d[16];
  alignas(64) int32_t sum128[16];  // 128 * the sum of each block's quants
};

// 128 bytes at p as the two tables of vpermi2b.
struct Window {
  __m512i a, b;
  [[gnu::always_inline]] explicit Window(const std::byte* p) : a(load64(p)), b(load64(p + 64)) {}
  [[gnu::always_inline]] __m512i pick(const ByteIndex& index) const { return _mm512_permutex2var_epi8(a, load_index(index), b); }
  [[gnu::always_inline]] __m512i pick(__mmask64 k, const ByteIndex& index) const {
    return _mm512_maskz_permutex2var_epi8(k, a, load_index(index), b);
  }
};

// Four Q8_0 blocks (136 bytes) seen through two windows: [0, 128) and [8, 136).
constexpr int kQ8_0 = static_cast<int>(sizeof(BlockQ8_0)), kQ8_0Qs = static_cast<int>(offsetof(BlockQ8_0, qs));
static_assert(4 * kQ8_0 == 136 && offsetof(BlockQ8_0, d) == 0);

// Quants 0..15 of block k (of four) into lane k (window [0, 128)), quants 16..31 (window [8, 136)).
constexpr ByteIndex kQ8LowHalves = byte_index([](int i) { return (i / 16) * kQ8_0 + kQ8_0Qs + i % 16; });
constexpr ByteIndex kQ8HighHalves = byte_index([](int i) { return (i / 16) * kQ8_0 + kQ8_0Qs + 16 + i % 16 - 8; });
// Byte 8g + 2k + i: byte i of block k's d (window [0, 128) of group g), for the fp16 of block 4g + k.
constexpr ByteIndex kQ8Scales = byte_index([](int i) { return (i % 8) / 2 * kQ8_0 + i % 2; });

// Groups of four Q8_0 blocks read whole (activations of 16 or 8 blocks): each group's quants
// picked from its window into lo[g] (by lo_index) and from the window 8 bytes on into hi[g]
// (by hi_index), its blocks' fp16 d into scale_bytes bytes of a vector (by scale_index),
// and all of it stored into p (lo, hi, d).
template <int Groups, class Halves>
FIXQ_GGUF_INLINE void pick_q8_quants(const std::byte* y, const ByteIndex& lo_index, const ByteIndex& hi_index,
                                     const ByteIndex& scale_index, int scale_bytes, Halves* p, __m512i* lo, __m512i* hi) {
  const __mmask64 scale_mask = (__mmask64{1} << scale_bytes) - 1;
  __m512i d16 = _mm512_setzero_si512();
  for (int g = 0; g < Groups; ++g) {
    const Window w(y + 4 * g * kQ8_0), w8(y + 4 * g * kQ8_0 + 8);
    lo[g] = w.pick(lo_index);
    hi[g] = w8.pick(hi_index);
    d16 = _mm512_or_si512(d16, w.pick(scale_mask << (scale_bytes * g), scale_index));
    _mm512_store_si512(p->lo[g], lo[g]);
    _mm512_store_si512(p->hi[g], hi[g]);
  }
  _mm512_store_ps(p->d, _mm512_cvtph_ps(_mm512_castsi512_si256(d16)));
}

void prepare_q8_0(const std::byte* y, int64_t chunk, int64_t blocks, Q8Halves* p) {
  y += static_cast<std::size_t>(chunk) * 16 * sizeof(BlockQ8_0);
  if (blocks == 16) {  // 544 bytes, read whole
    __m512i lo[4], hi[4];
    pick_q8_quants<4>(y, kQ8LowHalves, kQ8HighHalves, kQ8Scales, 8, p, lo, hi);
    _mm512_store_si512(p->sum128, sums_times_128(lo, hi));
    return;
  }
  for (int b = 0; b < 16; ++b, y += sizeof(BlockQ8_0)) {
    int8_t* lo = p->lo[b / 4] + 16 * (b % 4);
    int8_t* hi = p->hi[b / 4] + 16 * (b % 4);
    if (b < blocks) {
      std::memcpy(lo, y + offsetof(BlockQ8_0, qs), kQK / 2);
      std::memcpy(hi, y + offsetof(BlockQ8_0, qs) + kQK / 2, kQK / 2);
      p->d[b] = load_fp16(y + offsetof(BlockQ8_0, d));
    } else {
      std::memset(lo, 0, kQK / 2);
      std::memset(hi, 0, kQK / 2);
      p->d[b] = 0.0f;
    }
  }
  _mm512_store_si512(p->sum128, sums_times_128(p->lo, p->hi));
}

// A format of 32-element blocks with one scale field and 16 bytes of codes (Q4_0's nibble
// order: element j in the low nibble of byte j, j + 16 in the high one), read four blocks
// (4 * Block bytes, 65 to 72) per vpermi2b: a 64-byte load and one of the rest, no further.
template <class Block>
struct FourBlocks {
  static constexpr int kBytes = 4 * static_cast<int>(sizeof(Block));
  static_assert(kBytes > 64 && kBytes <= 72 && sizeof(Block::qs) == 16);

  // Byte 16k + j: qs[j] of block k.
  static constexpr ByteIndex kQsIndex =
      byte_index([](int i) { return (i / 16) * static_cast<int>(sizeof(Block)) + static_cast<int>(offsetof(Block, qs)) + i % 16; });

  // The 64 code bytes of the four blocks at p; *first64 gets the 64 bytes at p (where the
  // scale fields are).
  FIXQ_GGUF_INLINE __m512i codes(const std::byte* p, __m512i* first64) {
    *first64 = load64(p);
    long long tail = 0;  // bytes 64 .. kBytes - 1
    std::memcpy(&tail, p + 64, kBytes - 64);
    return _mm512_permutex2var_epi8(*first64, load_index(kQsIndex), _mm512_zextsi128_si512(_mm_cvtsi64_si128(tail)));
  }
};

// The int32 sums of 16 blocks (four groups of four) against the activations, less 128 *
// their quant sums (the table values carry +128), the 64 first bytes of each group handed to
// scales(g, first64), where the blocks' scale fields lie.
template <class Block, class Scales>
FIXQ_GGUF_INLINE __m512i group_sums(const std::byte* x, const Q8Halves& p, const int8_t* plus128, Scales scales) {
  using Four = FourBlocks<Block>;
  const __m512i table = _mm512_load_si512(plus128);
  __m512i acc[4];
  for (int g = 0; g < 4; ++g) {
    __m512i first64;
    const __m512i q = Four::codes(x + g * Four::kBytes, &first64);
    acc[g] = dot_halves(low_values(q, table), high_values(q, table), p.lo[g], p.hi[g]);
    scales(g, first64);
  }
  return _mm512_sub_epi32(sum_lanes_4x4(acc), _mm512_load_si512(p.sum128));
}

struct Iq4Nl : TermsFormat<BlockIq4Nl, 16, 1, Q8Halves> {
  static_assert(3 * sizeof(BlockIq4Nl) + offsetof(BlockIq4Nl, d) + 2 <= 64, "the four d fields lie in the first 64 bytes");
  // Byte 8g + 2k + i (i < 2) of the scale vector: byte i of block k's d, for group g.
  static constexpr ByteIndex kDIndex = byte_index([](int i) {
    return (i % 8) / 2 * static_cast<int>(sizeof(BlockIq4Nl)) + static_cast<int>(offsetof(BlockIq4Nl, d)) + i % 2;
  });
  static void prepare(const std::byte* y, int64_t c, int64_t n, Prepared* p) { prepare_q8_0(y, c, n, p); }
  // sumf += (dy * dx) * float(sumi)
  FIXQ_GGUF_INLINE __m512 terms(const std::byte* x, const Prepared& p) {
    const __m512i d_index = load_index(kDIndex);
    __m512i d16 = _mm512_setzero_si512();
    const __m512i sumi = group_sums<BlockIq4Nl>(x, p, kIq4nlPlus128.b, [&](int g, __m512i first64) {
      d16 = _mm512_mask_permutexvar_epi8(d16, __mmask64{0xFF} << (8 * g), d_index, first64);
    });
    const __m512 dx = _mm512_cvtph_ps(_mm512_castsi512_si256(d16));
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_load_ps(p.d), dx), _mm512_cvtepi32_ps(sumi));
  }
};

struct Mxfp4 : TermsFormat<BlockMxfp4, 16, 1, Q8Halves> {
  static_assert(3 * sizeof(BlockMxfp4) + offsetof(BlockMxfp4, e) + 1 <= 64, "the four e fields lie in the first 64 bytes");
  // Byte 16g + 4k of the scale vector (byte 0 of int32 lane 4g + k): block k's e, for group g.
  static constexpr ByteIndex kEIndex = byte_index(
      [](int i) { return (i % 16) / 4 * static_cast<int>(sizeof(BlockMxfp4)) + static_cast<int>(offsetof(BlockMxfp4, e)); });
  static void prepare(const std::byte* y, int64_t c, int64_t n, Prepared* p) { prepare_q8_0(y, c, n, p); }
  // sumf += (dy * dx) * float(sumi), dx = 2^(e - 128)
  FIXQ_GGUF_INLINE __m512 terms(const std::byte* x, const Prepared& p) {
    const __m512i e_index = load_index(kEIndex);
    __m512i e = _mm512_setzero_si512();
    const __m512i sumi = group_sums<BlockMxfp4>(x, p, kMxfp4Plus128.b, [&](int g, __m512i first64) {
      e = _mm512_mask_permutexvar_epi8(e, __mmask64{0x1111} << (16 * g), e_index, first64);
    });
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_load_ps(p.d), e8m0_half_lanes(e)), _mm512_cvtepi32_ps(sumi));
  }
};

// ---- NVFP4: four 64-element blocks (16 sub-blocks of 16) per terms() call, against pairs
// of Q8_0 blocks.

// lo[h] byte 32k + 8s + j (j < 8): the Q8_0 quant that meets the low nibble of qs[8s + j] of
// NVFP4 block 2h + k (element 16s + j: quant 16 (s % 2) + j of Q8_0 block 2 (2h + k) + s / 2);
// hi[h] the one that meets its high nibble (element 16s + 8 + j).
struct Nvfp4Halves {
  alignas(64) int8_t lo[2][64];
  alignas(64) int8_t hi[2][64];
  alignas(64) float d[16];         // the Q8_0 d of each sub-block
  alignas(64) int32_t sum128[16];  // 128 * the sum of each sub-block's 16 quants
};

// ue4m3_half (ggml_arith.h) by vpermi2b: every value is a bfloat16 (at most 3 mantissa
// bits), so byte 2 and byte 3 of its float come from two 128-entry tables indexed by the
// code's low 7 bits. ue4m3_half ignores bit 7 except that 0x7F is 0 and 0xFF is 240: entry
// 0x7F holds 240, and the code 0x7F is zeroed by a compare.
struct Ue4m3Tables {
  alignas(64) uint8_t byte2[128];
  alignas(64) uint8_t byte3[128];
};
constexpr Ue4m3Tables kUe4m3Bf16 = [] {
  Ue4m3Tables t{};
  for (int c = 0; c < 128; ++c) {
    const auto bits = std::bit_cast<uint32_t>(kUe4m3Half[static_cast<std::size_t>(c == 0x7F ? 0xFF : c)]);
    if ((bits & 0xFFFF) != 0) throw "not a bfloat16";  // compile-time check
    t.byte2[c] = static_cast<uint8_t>(bits >> 16);
    t.byte3[c] = static_cast<uint8_t>(bits >> 24);
  }
  return t;
}();

// ue4m3_half of the codes in bytes 2 and 3 of each int32 lane (both bytes the same code).
FIXQ_GGUF_INLINE __m512 ue4m3_half_bf16(__m512i codes) {
  const __mmask64 valid = ~_mm512_cmpeq_epi8_mask(codes, _mm512_set1_epi8(0x7F));  // SIMDe 0.7: no cmpneq_epi8
  const __m512i lo = _mm512_maskz_permutex2var_epi8(valid & 0x4444444444444444ull, _mm512_load_si512(kUe4m3Bf16.byte2),
                                                    codes, _mm512_load_si512(kUe4m3Bf16.byte2 + 64));
  const __m512i hi = _mm512_maskz_permutex2var_epi8(valid & 0x8888888888888888ull, _mm512_load_si512(kUe4m3Bf16.byte3),
                                                    codes, _mm512_load_si512(kUe4m3Bf16.byte3 + 64));
  return _mm512_castsi512_ps(_mm512_or_si512(lo, hi));
}

// The 16 sub-block sums of two vectors of two blocks each: sub-block s of a block has the
// int32 lanes 2s and 2s + 1 of its 256-bit half.
FIXQ_GGUF_INLINE __m512i sum_lane_pairs(__m512i a, __m512i b) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  return _mm512_add_epi32(_mm512_permutex2var_epi32(a, even, b), _mm512_permutex2var_epi32(a, odd, b));
}

struct Nvfp4 : TermsFormat<BlockNvfp4, 4, 4, Nvfp4Halves> {
  static_assert(2 * sizeof(BlockNvfp4) == 72 && sizeof(BlockNvfp4::qs) == 32);
  static_assert(sizeof(BlockNvfp4) + offsetof(BlockNvfp4, d) + 4 <= 64, "both blocks' d lie in the first 64 bytes");
  // Byte 32k + i of the code vector of two blocks: qs[i] of block k.
  static constexpr ByteIndex kQsIndex = byte_index(
      [](int i) { return (i / 32) * static_cast<int>(sizeof(BlockNvfp4)) + static_cast<int>(offsetof(BlockNvfp4, qs)) + i % 32; });
  // Bytes 4l + 2, 4l + 3 of the scale vector (int32 lane l = 4 (2h + k) + s): d[s] of block
  // k of pair h (the index of the UE4M3 tables below).
  static constexpr ByteIndex kDIndex = byte_index(
      [](int i) { return (i / 16) % 2 * static_cast<int>(sizeof(BlockNvfp4)) + static_cast<int>(offsetof(BlockNvfp4, d)) + (i / 4) % 4; });

  // lo[h] byte 32k + 8s + j from the four Q8_0 blocks of NVFP4 blocks 2h, 2h + 1 (window
  // [0, 128)); hi[h] from the window [8, 136) with the same index, 8 quants further on.
  static constexpr ByteIndex kQ8Index = byte_index([](int i) {
    const int k = i / 32, s = (i / 8) % 4, j = i % 8;
    return (2 * k + s / 2) * kQ8_0 + kQ8_0Qs + 16 * (s % 2) + j;
  });
  // Bytes 2w, 2w + 1 (word w = 4k + s, k < 2): the d of the Q8_0 block of sub-block s of
  // NVFP4 block k of a pair (window [0, 128)).
  static constexpr ByteIndex kQ8Scales = byte_index([](int i) {
    const int w = (i / 2) % 8, k = w / 4, s = w % 4;
    return (2 * k + s / 2) * kQ8_0 + i % 2;
  });

  static void prepare(const std::byte* y, int64_t chunk, int64_t blocks, Prepared* p) {
    y += static_cast<std::size_t>(chunk) * 8 * sizeof(BlockQ8_0);
    if (blocks == kChunk) {  // 272 bytes, read whole
      __m512i lo[2], hi[2];
      pick_q8_quants<2>(y, kQ8Index, kQ8Index, kQ8Scales, 16, p, lo, hi);
      const __m512i ones = _mm512_set1_epi8(1), zero = _mm512_setzero_si512();
      const __m512i sums = sum_lane_pairs(_mm512_dpbusd_epi32(_mm512_dpbusd_epi32(zero, ones, lo[0]), ones, hi[0]),
                                          _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(zero, ones, lo[1]), ones, hi[1]));
      _mm512_store_si512(p->sum128, _mm512_slli_epi32(sums, 7));
      return;
    }
    for (int b = 0; b < 8; ++b, y += sizeof(BlockQ8_0)) {  // Q8_0 block b: sub-blocks 2b, 2b + 1
      const bool real = b < 2 * blocks;
      const int k = b / 2;  // the NVFP4 block of the chunk
      for (int t = 0; t < 2; ++t) {
        const int s = 2 * (b % 2) + t;  // sub-block of NVFP4 block k
        int8_t* lo = p->lo[k / 2] + 32 * (k % 2) + 8 * s;
        int8_t* hi = p->hi[k / 2] + 32 * (k % 2) + 8 * s;
        if (real) {
          std::memcpy(lo, y + offsetof(BlockQ8_0, qs) + 16 * t, 8);
          std::memcpy(hi, y + offsetof(BlockQ8_0, qs) + 16 * t + 8, 8);
        } else {
          std::memset(lo, 0, 8);
          std::memset(hi, 0, 8);
        }
        p->d[4 * k + s] = real ? load_fp16(y + offsetof(BlockQ8_0, d)) : 0.0f;
      }
    }
    const __m512i ones = _mm512_set1_epi8(1);
    const __m512i sums = sum_lane_pairs(dot_halves(ones, ones, p->lo[0], p->hi[0]), dot_halves(ones, ones, p->lo[1], p->hi[1]));
    _mm512_store_si512(p->sum128, _mm512_slli_epi32(sums, 7));
  }

  // per sub-block: sumf += (dy * d_sub) * float(sumi)
  FIXQ_GGUF_INLINE __m512 terms(const std::byte* x, const Prepared& p) {
    const __m512i table = _mm512_load_si512(kMxfp4Plus128.b), qs_index = load_index(kQsIndex);
    __m512i acc[2], first64[2];
    for (int h = 0; h < 2; ++h) {
      const std::byte* b = x + 2 * h * kBlockBytes;
      first64[h] = load64(b);
      const __m512i rest = _mm512_zextsi128_si512(_mm_cvtsi64_si128(load_as<long long>(b + 64)));  // bytes 64..71
      const __m512i q = _mm512_permutex2var_epi8(first64[h], qs_index, rest);
      acc[h] = dot_halves(low_values(q, table), high_values(q, table), p.lo[h], p.hi[h]);
    }
    const __m512i sumi = _mm512_sub_epi32(sum_lane_pairs(acc[0], acc[1]), _mm512_load_si512(p.sum128));
    const __m512i d_index = load_index(kDIndex);
    constexpr __mmask64 kHigh16 = 0xCCCCCCCCCCCCCCCCull;  // bytes 2, 3 of each int32 lane
    const __m512i codes = _mm512_mask_permutexvar_epi8(_mm512_maskz_permutexvar_epi8(kHigh16 & 0xFFFFFFFFull, d_index, first64[0]),
                                                       kHigh16 & ~0xFFFFFFFFull, d_index, first64[1]);
    const __m512 dsub = ue4m3_half_bf16(codes);
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_load_ps(p.d), dsub), _mm512_cvtepi32_ps(sumi));
  }
};

// ---- IQ4_XS: two super-blocks (16 sub-blocks of 32) per terms() call, against Q8_K.

// lo[2b + h] lane L: quants 0..15 of sub-block 4h + L of super-block b (they meet the low
// nibbles of its 16 qs bytes), hi[2b + h] lane L its quants 16..31.
struct Q8KHalves {
  alignas(64) int8_t lo[4][64];
  alignas(64) int8_t hi[4][64];
  alignas(64) int32_t sum128[16];  // 128 * the sum of each sub-block's 32 quants
  float d[2];
};

struct Iq4Xs : TermsFormat<BlockIq4Xs, 2, 8, Q8KHalves> {
  static_assert(sizeof(BlockIq4Xs::qs) == 128);

  // Lane L of lo: quants 32L .. 32L + 15 of 128 (lane L of hi: the next 16).
  static constexpr ByteIndex kLow16 = byte_index([](int i) { return 32 * (i / 16) + i % 16; });
  static constexpr ByteIndex kHigh16 = byte_index([](int i) { return 32 * (i / 16) + 16 + i % 16; });

  static void prepare(const std::byte* y, int64_t chunk, int64_t blocks, Prepared* p) {
    y += static_cast<std::size_t>(chunk) * 2 * sizeof(BlockQ8_K);
    if (blocks == kChunk) {
      __m512i lo[4], hi[4];
      for (int b = 0; b < 2; ++b) {
        const std::byte* qs = y + b * sizeof(BlockQ8_K) + offsetof(BlockQ8_K, qs);
        for (int h = 0; h < 2; ++h) {
          const Window w(qs + 128 * h);
          lo[2 * b + h] = w.pick(kLow16);
          hi[2 * b + h] = w.pick(kHigh16);
          _mm512_store_si512(p->lo[2 * b + h], lo[2 * b + h]);
          _mm512_store_si512(p->hi[2 * b + h], hi[2 * b + h]);
        }
        p->d[b] = load_as<float>(y + b * sizeof(BlockQ8_K) + offsetof(BlockQ8_K, d));
      }
      _mm512_store_si512(p->sum128, sums_times_128(lo, hi));
      return;
    }
    for (int b = 0; b < 2; ++b, y += sizeof(BlockQ8_K)) {
      for (int sb = 0; sb < 8; ++sb) {
        int8_t* lo = p->lo[2 * b + sb / 4] + 16 * (sb % 4);
        int8_t* hi = p->hi[2 * b + sb / 4] + 16 * (sb % 4);
        if (b < blocks) {
          std::memcpy(lo, y + offsetof(BlockQ8_K, qs) + 32 * sb, 16);
          std::memcpy(hi, y + offsetof(BlockQ8_K, qs) + 32 * sb + 16, 16);
        } else {
          std::memset(lo, 0, 16);
          std::memset(hi, 0, 16);
        }
      }
      p->d[b] = b < blocks ? load_as<float>(y + offsetof(BlockQ8_K, d)) : 0.0f;
    }
    _mm512_store_si512(p->sum128, sums_times_128(p->lo, p->hi));
  }

  // per sub-block: sumf += (d4d8 * float(ls - 32)) * float(sumi), d4d8 = dx * dy
  FIXQ_GGUF_INLINE __m512 terms(const std::byte* x, const Prepared& p) {
    const __m512i table = _mm512_load_si512(kIq4nlPlus128.b);
    __m512i acc[4];
    for (int b = 0; b < 2; ++b)
      for (int h = 0; h < 2; ++h) {  // qs: 64 bytes (128-bit lane L: sub-block 4h + L) per half
        const __m512i q = load64(x + b * kBlockBytes + offsetof(BlockIq4Xs, qs) + 64 * h);
        acc[2 * b + h] = dot_halves(low_values(q, table), high_values(q, table), p.lo[2 * b + h], p.hi[2 * b + h]);
      }
    const __m512i sumi = _mm512_sub_epi32(sum_lanes_4x4(acc), _mm512_load_si512(p.sum128));
    return iq4_xs_pair_terms(x, kBlockBytes, sumi, p.d[0], p.d[1]);
  }
};

}  // namespace

FIXQ_GGUF_DRIVER_KERNELS(iq4_nl, q8_0, TermsDriver<Iq4Nl>)
FIXQ_GGUF_DRIVER_KERNELS(mxfp4, q8_0, TermsDriver<Mxfp4>)
FIXQ_GGUF_DRIVER_KERNELS(nvfp4, q8_0, TermsDriver<Nvfp4>)
// IQ4_XS: the matrix-vector product only (its dot stays the AVX-512 family's).
void matvec_iq4_xs_q8_k(const std::byte* x, int64_t rows, int64_t n, const std::byte* y, float* out) {
  TermsDriver<Iq4Xs>::matvec(x, rows, n, y, out);
}

}  // namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512vbmi)
