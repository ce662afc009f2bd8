// Private: ggml's block layouts, byte for byte (ggml-common.h), each with a static size
// check. Half-precision fields hold IEEE binary16 bits; everything is little-endian.
//
// Packed data arrive as std::byte buffers of any alignment, so kernels never cast a
// pointer to a block type: load_block / store_block copy a block with memcpy (which the
// compiler turns into plain moves), and the SIMD kernels read bytes with unaligned loads.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

static_assert(std::endian::native == std::endian::little, "GGUF blocks are little-endian");

namespace fixq::gguf::detail {

inline constexpr int kQK = 32;    // elements of a legacy (Q4_0 ... Q8_1), IQ4_NL or MXFP4 block
inline constexpr int kQK_K = 256;  // elements of a K-quant super-block (and of IQ4_XS, TQ1_0, TQ2_0)
inline constexpr int kQKNvfp4 = 64;     // elements of an NVFP4 block
inline constexpr int kQKNvfp4Sub = 16;  // elements per UE4M3 scale of an NVFP4 block

// Each size check states ggml-common.h's formula (in its terms: ggml_half is 2 bytes,
// K_SCALE_SIZE 12), then the byte count. The formula holding means the struct has no
// padding, so every field's offsetof is its byte offset in the file; the kernels address
// packed blocks only through offsetof on these structs.
inline constexpr std::size_t kGgmlHalf = sizeof(uint16_t);  // sizeof(ggml_half)
inline constexpr std::size_t kKScaleSize = 12;              // K_SCALE_SIZE: Q4_K / Q5_K scales

// value = (q - 8) * d; qs[j] holds element j (low nibble) and j + 16 (high nibble).
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_0) == kGgmlHalf + kQK / 2 && sizeof(BlockQ4_0) == 18);

// value = q * d + m.
struct BlockQ4_1 {
  uint16_t d, m;
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_1) == 2 * kGgmlHalf + kQK / 2 && sizeof(BlockQ4_1) == 20);

// value = (q - 16) * d; bit j of qh (little-endian u32) is the fifth bit of element j.
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_0) == kGgmlHalf + sizeof(uint32_t) + kQK / 2 && sizeof(BlockQ5_0) == 22);

struct BlockQ5_1 {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_1) == 2 * kGgmlHalf + sizeof(uint32_t) + kQK / 2 && sizeof(BlockQ5_1) == 24);

struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK];
};
static_assert(sizeof(BlockQ8_0) == kGgmlHalf + kQK && sizeof(BlockQ8_0) == 34);

// s = fp16(d * sum(qs)), used by the q4_1 / q5_1 dot products for the min term.
struct BlockQ8_1 {
  uint16_t d, s;
  int8_t qs[kQK];
};
static_assert(sizeof(BlockQ8_1) == 2 * kGgmlHalf + kQK && sizeof(BlockQ8_1) == 36);

// 16 sub-blocks of 16: scales[j] = 4-bit scale | 4-bit min << 4; value = d * sc * q - dmin * m.
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];
  uint8_t qs[kQK_K / 4];
  uint16_t d, dmin;
};
static_assert(sizeof(BlockQ2_K) == 2 * kGgmlHalf + kQK_K / 16 + kQK_K / 4 && sizeof(BlockQ2_K) == 84);

// 16 sub-blocks of 16 with signed 6-bit scales (packed into 12 bytes); 3-bit quants:
// 2 low bits in qs, the third in hmask (set means +0, clear means -4).
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];
  uint8_t qs[kQK_K / 4];
  uint8_t scales[12];
  uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == kGgmlHalf + kQK_K / 4 + kQK_K / 8 + 12 && sizeof(BlockQ3_K) == 110);

// 8 sub-blocks of 32 with 6-bit scales and mins packed into 12 bytes; value = d * sc * q - dmin * m.
struct BlockQ4_K {
  uint16_t d, dmin;
  uint8_t scales[kKScaleSize];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ4_K) == 2 * kGgmlHalf + kKScaleSize + kQK_K / 2 && sizeof(BlockQ4_K) == 144);

struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[kKScaleSize];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ5_K) == 2 * kGgmlHalf + kKScaleSize + kQK_K / 2 + kQK_K / 8 && sizeof(BlockQ5_K) == 176);

// 16 sub-blocks of 16 with int8 scales; 6-bit quants: 4 low bits in ql, 2 high in qh; value = d * sc * (q - 32).
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == kGgmlHalf + kQK_K / 16 + 3 * kQK_K / 4 && sizeof(BlockQ6_K) == 210);

// The activation side of K-quant dot products: float scale, int8 quants, and the sum of
// every 16 quants.
struct BlockQ8_K {
  float d;
  int8_t qs[kQK_K];
  int16_t bsums[kQK_K / 16];
};
static_assert(sizeof(BlockQ8_K) == sizeof(float) + kQK_K + kQK_K / 16 * sizeof(int16_t) && sizeof(BlockQ8_K) == 292);

// value = d * kIq4nlValues[q], nibbles packed as Q4_0.
struct BlockIq4Nl {
  uint16_t d;
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockIq4Nl) == kGgmlHalf + kQK / 2 && sizeof(BlockIq4Nl) == 18);

// value = kMxfp4Values[q] * 2^(e - 128) (an E2M1 value times the E8M0 scale 2^(e - 127)).
struct BlockMxfp4 {
  uint8_t e;
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockMxfp4) == sizeof(uint8_t) + kQK / 2 && sizeof(BlockMxfp4) == 17);

// 8 sub-blocks of 32, each with a 6-bit scale code ls: value = d * (ls - 32) * kIq4nlValues[q].
// ls of sub-block i: low 4 bits in scales_l[i / 2] (low nibble for even i, high for odd),
// high 2 bits at bits 2i of scales_h; qs: 16 bytes per sub-block, nibbles packed as Q4_0.
struct BlockIq4Xs {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[kQK_K / 64];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockIq4Xs) == kGgmlHalf + sizeof(uint16_t) + kQK_K / 64 + kQK_K / 2 && sizeof(BlockIq4Xs) == 136);
static_assert(offsetof(BlockIq4Xs, scales_h) == 2 && offsetof(BlockIq4Xs, scales_l) == 4 &&
              offsetof(BlockIq4Xs, qs) == 8);

// Ternary values t in {-1, 0, 1} as codes t + 1, value = (code - 1) * d. Five codes per qs
// byte (base 3, first most significant, scaled to ceil(v * 256 / 243)) and four per qh byte
// (followed by a zero digit): qs[m] (m < 32) holds elements m + 32n, qs[32 + m] holds
// 160 + m + 16n, qh[j] holds 240 + j + 4n.
struct BlockTq1_0 {
  uint8_t qs[(kQK_K - 4 * kQK_K / 64) / 5];
  uint8_t qh[kQK_K / 64];
  uint16_t d;
};
static_assert(sizeof(BlockTq1_0) == kGgmlHalf + kQK_K / 64 + (kQK_K - 4 * kQK_K / 64) / 5 && sizeof(BlockTq1_0) == 54);
static_assert(offsetof(BlockTq1_0, qh) == 48 && offsetof(BlockTq1_0, d) == 52);

// Ternary codes t + 1 in 2 bits: byte 32c + m holds element 128c + 32n + m at bits 2n.
struct BlockTq2_0 {
  uint8_t qs[kQK_K / 4];
  uint16_t d;
};
static_assert(sizeof(BlockTq2_0) == kGgmlHalf + kQK_K / 4 && sizeof(BlockTq2_0) == 66);
static_assert(offsetof(BlockTq2_0, d) == 64);

// Four sub-blocks of 16, each with a UE4M3 scale d[s]: value = kMxfp4Values[q] * ue4m3_half(d[s]).
// Sub-block s has 8 qs bytes at 8s: element j in the low nibble of byte j, j + 8 in its high one.
struct BlockNvfp4 {
  uint8_t d[kQKNvfp4 / kQKNvfp4Sub];
  uint8_t qs[kQKNvfp4 / 2];
};
static_assert(sizeof(BlockNvfp4) == sizeof(uint8_t) * (kQKNvfp4 / kQKNvfp4Sub) + kQKNvfp4 / 2 && sizeof(BlockNvfp4) == 36);
static_assert(offsetof(BlockNvfp4, qs) == 4);

template <class Block>
static inline Block load_block(const std::byte* p) {
  Block b;
  std::memcpy(&b, p, sizeof b);
  return b;
}

template <class Block>
static inline void store_block(std::byte* p, const Block& b) {
  std::memcpy(p, &b, sizeof b);
}

// The reference kernels' loops over whole blocks of Elements values: quantize(x, block)
// fills each block from its values, dequantize(block, y) writes each block's values.
template <class Block, int Elements, class F>
static inline void quantize_blocks(const float* x, int64_t n_blocks, std::byte* out, F quantize) {
  for (int64_t i = 0; i < n_blocks; ++i, x += Elements, out += sizeof(Block)) {
    Block b;
    quantize(x, b);
    store_block(out, b);
  }
}
template <class Block, int Elements, class F>
static inline void dequantize_blocks(const std::byte* in, int64_t n_blocks, float* y, F dequantize) {
  for (int64_t i = 0; i < n_blocks; ++i, in += sizeof(Block), y += Elements) dequantize(load_block<Block>(in), y);
}

// sumf += term(x block, y block), block after block: ggml's dot loop of the formats whose
// float part is one term per block (the term states its own association). term takes the
// loaded blocks, or their bytes where it reads them itself.
template <class BX, class BY, class Term>
static inline float sum_block_terms(const std::byte* x, const std::byte* y, int64_t n_blocks, Term term) {
  float sumf = 0.0f;
  for (int64_t i = 0; i < n_blocks; ++i, x += sizeof(BX), y += sizeof(BY)) {
    if constexpr (std::is_invocable_v<Term, const BX&, const BY&>) sumf += term(load_block<BX>(x), load_block<BY>(y));
    else sumf += term(x, y);
  }
  return sumf;
}

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K / Q5_K block (ggml's
// get_scale_min_k4): j < 4 in the low 6 bits of bytes j and j + 4; j >= 4 as 4 low bits in
// byte j + 4 and 2 high bits in the top of bytes j - 4 and j.
static inline void scale_min_k4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// The 6-bit scale (0..63, still offset by 32) of sub-block j (0..15) of a Q3_K block:
// 4 low bits in the low (j < 8) or high (j >= 8) nibble of byte j % 8, 2 high bits at bit
// 2 * (j / 4) of byte 8 + j % 4.
static inline int q3_k_scale(const uint8_t* scales, int j) {
  const int low = j < 8 ? scales[j] & 0xF : scales[j - 8] >> 4;
  return low | (((scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4);
}

// The 6-bit scale code ls (0..63, value ls - 32) of sub-block ib (0..7) of an IQ4_XS
// block: 4 low bits in nibble ib % 2 of scales_l[ib / 2], 2 high bits at 2 ib of scales_h.
static inline int iq4_xs_scale(const BlockIq4Xs& b, int ib) {
  return ((b.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((b.scales_h >> (2 * ib)) & 3) << 4);
}

// Q2_K's scale (low nibble) and min (high nibble) of sub-block j (0..15).
static inline int q2_k_scale(const BlockQ2_K& b, int j) { return b.scales[j] & 0xF; }
static inline int q2_k_min(const BlockQ2_K& b, int j) { return b.scales[j] >> 4; }

// Digit n (0 = most significant, n <= 4) of a TQ1_0 byte b: ggml's
// ((uint8_t)(b * 3^n) * 3) >> 8, which is in {0, 1, 2} for every byte.
static inline int tq1_digit(uint8_t b, int n) {
  constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
  const auto q = static_cast<uint8_t>(b * kPow3[n]);
  return (q * 3) >> 8;
}

}  // namespace fixq::gguf::detail
