// AVX-512 VNNI dot products and matrix-vector products of the formats with a term per
// block or sub-block of at most 32 elements against Q8_0 / Q8_1: Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0, IQ4_NL, MXFP4 and NVFP4. Bit-identical (bound 0) to dot_*_ref: the integer sum of
// each block is exact, and each term is the reference's float expression on the same
// operands, added to the row's sum in block order (matvec_avx512.h).
//
// Exact sums with vpdpbusd (unsigned bytes times signed bytes, four products per int32 lane,
// no saturation): x's values v are fed as unsigned codes u = v + off (off = 8 for Q4_0, 16
// for Q5_0, 128 for Q8_0 and the tables), so sum(v * y) = sum(u * y) - off * sum(y), where
// sum(y) of each activation block is computed once per call.
//
// Two blocks share a vector: 128-bit lanes [block b low 16, block b high 16, block b + 1
// low 16, block b + 1 high 16], which is Q8_0's element order, so the activation side is the
// blocks' quants as they are.
#include "gguf/util_avx512.h"
#include "gguf/blocks.h"
#include "gguf/ggml_arith.h"
#include "gguf/kernels_avx512.h"
#include "gguf/matvec_avx512.h"

namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512) {

namespace {

// 16 activation blocks of 32 quants (Q8_0 or Q8_1) as one terms() call reads them.
struct Q8Blocks {
  alignas(64) int8_t qs[16][32];
  alignas(64) float d[16];
  alignas(64) float s[16];        // Q8_1's s (d * sum of qs)
  alignas(64) int32_t sum[16];    // sum of qs
};

// The int32 sums of 16 blocks' quants (pairs of blocks per vector).
FIXQ_GGUF_INLINE __m512i block_sums(const int8_t (*qs)[32]) {
  __m512i s[8];
  const __m512i ones = _mm512_set1_epi8(1);
  for (int k = 0; k < 8; ++k) s[k] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, _mm512_load_si512(qs[2 * k]));
  return sum_lanes_8x2(s);
}

// Activation blocks [chunk * 16, + blocks) of Q8_0 (d, qs) or Q8_1 (d, s, qs).
template <bool kQ8_1>
void prepare_q8(const std::byte* y, int64_t chunk, int64_t blocks, Q8Blocks* p) {
  constexpr std::size_t kBytes = kQ8_1 ? sizeof(BlockQ8_1) : sizeof(BlockQ8_0);
  constexpr std::size_t kD = kQ8_1 ? offsetof(BlockQ8_1, d) : offsetof(BlockQ8_0, d);
  constexpr std::size_t kQs = kQ8_1 ? offsetof(BlockQ8_1, qs) : offsetof(BlockQ8_0, qs);
  y += static_cast<std::size_t>(chunk) * 16 * kBytes;
  for (int b = 0; b < 16; ++b, y += kBytes) {
    if (b < blocks) {
      std::memcpy(p->qs[b], y + kQs, kQK);
      p->d[b] = load_fp16(y + kD);
      p->s[b] = kQ8_1 ? load_fp16(y + offsetof(BlockQ8_1, s)) : 0.0f;
    } else {
      std::memset(p->qs[b], 0, 32);
      p->d[b] = p->s[b] = 0.0f;
    }
  }
  _mm512_store_si512(p->sum, block_sums(p->qs));
}

// sum(u * y) per block for 16 x blocks whose codes codes(k) gives, two blocks at a time.
template <class Codes>
FIXQ_GGUF_INLINE __m512i dot_codes(const Q8Blocks& p, Codes codes) {
  __m512i s[8];
  for (int k = 0; k < 8; ++k) s[k] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), codes(k), _mm512_load_si512(p.qs[2 * k]));
  return sum_lanes_8x2(s);
}

// The fifth bits of two Q5 blocks as a byte mask of their 64 codes (qh bit j = element j).
FIXQ_GGUF_INLINE __mmask64 q5_high_bits(const std::byte* qh0, const std::byte* qh1) {
  return static_cast<__mmask64>(load_as<uint32_t>(qh0) | (uint64_t{load_as<uint32_t>(qh1)} << 32));
}

// Two adjacent fp16 fields (the first at x, the second at x + 2) of 16 blocks, stride
// bytes apart: Q4_1's and Q5_1's d and m.
static_assert(offsetof(BlockQ4_1, m) == offsetof(BlockQ4_1, d) + 2 && offsetof(BlockQ5_1, m) == offsetof(BlockQ5_1, d) + 2);
FIXQ_GGUF_INLINE void fp16_pairs(const std::byte* x, int stride, __m512* d, __m512* m) {
  const __m512i w = gather_dwords(x, stride);
  *d = fp16_lanes_to_ps(w);
  *m = fp16_lanes_to_ps(_mm512_srli_epi32(w, 16));
}

FIXQ_GGUF_INLINE __m512i minus_offset(__m512i sums, const Q8Blocks& p, int log2_off) {
  return _mm512_sub_epi32(sums, _mm512_sll_epi32(_mm512_load_si512(p.sum), _mm_cvtsi32_si128(log2_off)));
}

// A format of 32-element blocks with one term each, against Q8_0 (or Q8_1 for the formats
// with a min): 16 blocks per terms() call.
template <class Block, bool kQ8_1>
struct Q8Format : TermsFormat<Block, 16, 1, Q8Blocks> {
  static void prepare(const std::byte* y, int64_t c, int64_t n, Q8Blocks* p) { prepare_q8<kQ8_1>(y, c, n, p); }
  // The fp16 d of 16 blocks.
  FIXQ_GGUF_INLINE __m512 d_lanes(const std::byte* x) {
    return fp16_lanes_to_ps(gather_dwords(x + offsetof(Block, d), sizeof(Block)));
  }
  // The 64 nibble codes of blocks 2k and 2k + 1.
  FIXQ_GGUF_INLINE __m512i nibbles(const std::byte* x, int k) {
    const std::byte* b = x + 2 * k * sizeof(Block) + offsetof(Block, qs);
    return nibbles_2x16(b, b + sizeof(Block));
  }
  // The 64 5-bit codes of Q5 blocks 2k and 2k + 1: the nibbles plus their fifth bits.
  FIXQ_GGUF_INLINE __m512i five_bits(const std::byte* x, int k) {
    const std::byte* qh = x + 2 * k * sizeof(Block) + offsetof(Block, qh);
    const __m512i u = nibbles(x, k);
    return _mm512_mask_add_epi8(u, q5_high_bits(qh, qh + sizeof(Block)), u, _mm512_set1_epi8(16));
  }
};

struct Q4_0 : Q8Format<BlockQ4_0, false> {
  // sumf += (float(sumi) * dx) * dy
  FIXQ_GGUF_INLINE __m512 terms(const std::byte* x, const Prepared& p) {
    const __m512i sumi = minus_offset(dot_codes(p, [x](int k) { return nibbles(x, k); }), p, 3);
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(sumi), d_lanes(x)), _mm512_load_ps(p.d));
  }
};

// sumf += (dx * dy) * float(sumi) + mx * sy
template <class Block>
FIXQ_GGUF_INLINE __m512 terms_with_min(const std::byte* x, const Q8Blocks& p, __m512i sumi) {
  __m512 dx, mx;
  fp16_pairs(x + offsetof(Block, d), sizeof(Block), &dx, &mx);
  return _mm512_add_ps(_mm512_mul_ps(_mm512_mul_ps(dx, _mm512_load_ps(p.d)), _mm512_cvtepi32_ps(sumi)),
                       _mm512_mul_ps(mx, _mm512_load_ps(p.s)));
}

struct Q4_1 : Q8Format<BlockQ4_1, true> {
  FIXQ_GGUF_INLINE __m512 terms(const std::byte* x, const Prepared& p) {
    return terms_with_min<BlockQ4_1>(x, p, dot_codes(p, [x](int k) { return nibbles(x, k); }));
  }
};

struct Q5_0 : Q8Format<BlockQ5_0, false> {
  // sumf += (dx * dy) * float(sumi)
  FIXQ_GGUF_INLINE __m512 terms(const std::byte* x, const Prepared& p) {
    const __m512i sumi = minus_offset(dot_codes(p, [x](int k) { return five_bits(x, k); }), p, 4);
    return _mm512_mul_ps(_mm512_mul_ps(d_lanes(x), _mm512_load_ps(p.d)), _mm512_cvtepi32_ps(sumi));
  }
};

struct Q5_1 : Q8Format<BlockQ5_1, true> {
  FIXQ_GGUF_INLINE __m512 terms(const std::byte* x, const Prepared& p) {
    return terms_with_min<BlockQ5_1>(x, p, dot_codes(p, [x](int k) { return five_bits(x, k); }));
  }
};

struct Q8_0 : Q8Format<BlockQ8_0, false> {
  // sumf += float(sumi) * (dx * dy)
  FIXQ_GGUF_INLINE __m512 terms(const std::byte* x, const Prepared& p) {
    const __m512i sumi = minus_offset(dot_codes(p, [x](int k) {
                                        const std::byte* b = x + 2 * k * kBlockBytes + offsetof(BlockQ8_0, qs);
                                        const __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(load32(b)),
                                                                             load32(b + kBlockBytes), 1);
                                        return _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80)));
                                      }),
                                      p, 7);
    return _mm512_mul_ps(_mm512_cvtepi32_ps(sumi), _mm512_mul_ps(d_lanes(x), _mm512_load_ps(p.d)));
  }
};

// IQ4_NL and MXFP4: 4-bit indices into a 16-value table (plus 128, so that vpdpbusd
// takes them unsigned), q4_0's nibble layout; sumf += (dy * dx) * float(sumi).
template <class Block>
struct TableFormat : Q8Format<Block, false> {
  FIXQ_GGUF_INLINE __m512 table_terms(const std::byte* x, const Q8Blocks& p, const int8_t* plus128, __m512 dx) {
    const __m512i sumi = minus_offset(
        dot_codes(p, [x, plus128](int k) { return lookup16(plus128, Q8Format<Block, false>::nibbles(x, k)); }), p, 7);
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_load_ps(p.d), dx), _mm512_cvtepi32_ps(sumi));
  }
};

struct Iq4Nl : TableFormat<BlockIq4Nl> {
  FIXQ_GGUF_INLINE __m512 terms(const std::byte* x, const Prepared& p) {
    return table_terms(x, p, kIq4nlPlus128.b, d_lanes(x));
  }
};

struct Mxfp4 : TableFormat<BlockMxfp4> {
  // dx = 2^(e - 128)
  FIXQ_GGUF_INLINE __m512 terms(const std::byte* x, const Prepared& p) {
    const __m512i e = _mm512_and_si512(gather_dwords(x + offsetof(BlockMxfp4, e), kBlockBytes), _mm512_set1_epi32(0xFF));
    return table_terms(x, p, kMxfp4Plus128.b, e8m0_half_lanes(e));
  }
};

// NVFP4 against pairs of Q8_0 blocks: four 64-element blocks per call, four 16-element
// sub-blocks each (128-bit lane s: sub-block s's 8 low nibbles, then its 8 high ones).
struct Nvfp4Blocks {
  alignas(64) int8_t qs[4][64];
  alignas(64) float d[16];      // the Q8_0 d of each sub-block
  alignas(64) int32_t sum[16];  // sum of each sub-block's 16 quants
};

struct Nvfp4 : TermsFormat<BlockNvfp4, 4, 4, Nvfp4Blocks> {
  static void prepare(const std::byte* y, int64_t chunk, int64_t blocks, Prepared* p) {
    y += static_cast<std::size_t>(chunk) * 8 * sizeof(BlockQ8_0);
    for (int b = 0; b < 8; ++b, y += sizeof(BlockQ8_0)) {
      const bool real = b < 2 * blocks;
      if (real) {
        std::memcpy(p->qs[b / 2] + kQK * (b % 2), y + offsetof(BlockQ8_0, qs), kQK);
      } else {
        std::memset(p->qs[b / 2] + kQK * (b % 2), 0, kQK);
      }
      p->d[2 * b] = p->d[2 * b + 1] = real ? load_fp16(y + offsetof(BlockQ8_0, d)) : 0.0f;
    }
    __m512i s[4];
    for (int k = 0; k < 4; ++k)
      s[k] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(1), _mm512_load_si512(p->qs[k]));
    _mm512_store_si512(p->sum, sum_lanes_4x4(s));
  }
  // per sub-block: sumf += (dy * d_sub) * float(sumi)
  FIXQ_GGUF_INLINE __m512 terms(const std::byte* x, const Prepared& p) {
    __m512i s[4];
    for (int k = 0; k < 4; ++k) {
      const __m512i z = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3),
                                                 _mm512_castsi256_si512(load32(x + k * kBlockBytes + offsetof(BlockNvfp4, qs))));
      const __m512i codes = _mm512_and_si512(_mm512_mask_srli_epi16(z, 0xF0F0F0F0u, z, 4), _mm512_set1_epi8(0x0F));
      s[k] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lookup16(kMxfp4Plus128.b, codes), _mm512_load_si512(p.qs[k]));
    }
    const __m512i sumi = _mm512_sub_epi32(sum_lanes_4x4(s), _mm512_slli_epi32(_mm512_load_si512(p.sum), 7));
    // The four d bytes of each block, one int32 lane per block.
    static_assert(sizeof(BlockNvfp4::d) == 4);
    const std::byte* d = x + offsetof(BlockNvfp4, d);
    const __m128i codes = _mm_setr_epi32(load_as<int>(d), load_as<int>(d + kBlockBytes), load_as<int>(d + 2 * kBlockBytes),
                                         load_as<int>(d + 3 * kBlockBytes));
    const __m512 dsub = ue4m3_half_lanes(_mm512_cvtepu8_epi32(codes));
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_load_ps(p.d), dsub), _mm512_cvtepi32_ps(sumi));
  }
};

}  // namespace

FIXQ_GGUF_DRIVER_KERNELS(q4_0, q8_0, TermsDriver<Q4_0>)
FIXQ_GGUF_DRIVER_KERNELS(q4_1, q8_1, TermsDriver<Q4_1>)
FIXQ_GGUF_DRIVER_KERNELS(q5_0, q8_0, TermsDriver<Q5_0>)
FIXQ_GGUF_DRIVER_KERNELS(q5_1, q8_1, TermsDriver<Q5_1>)
FIXQ_GGUF_DRIVER_KERNELS(q8_0, q8_0, TermsDriver<Q8_0>)
FIXQ_GGUF_DRIVER_KERNELS(iq4_nl, q8_0, TermsDriver<Iq4Nl>)
FIXQ_GGUF_DRIVER_KERNELS(mxfp4, q8_0, TermsDriver<Mxfp4>)
FIXQ_GGUF_DRIVER_KERNELS(nvfp4, q8_0, TermsDriver<Nvfp4>)

}  // namespace fixq::gguf::detail::FIXQ_KERNEL_NS(avx512)
