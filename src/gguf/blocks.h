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

static_assert(std::endian::native == std::endian::little, "GGUF blocks are little-endian");

namespace fixq::gguf::detail {

inline constexpr int kQK = 32;    // elements of a legacy (Q4_0 ... Q8_1), IQ4_NL or MXFP4 block
inline constexpr int kQK_K = 256;  // elements of a K-quant super-block

// value = (q - 8) * d; qs[j] holds element j (low nibble) and j + 16 (high nibble).
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_0) == 18);

// value = q * d + m.
struct BlockQ4_1 {
  uint16_t d, m;
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_1) == 20);

// value = (q - 16) * d; bit j of qh (little-endian u32) is the fifth bit of element j.
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_0) == 22);

struct BlockQ5_1 {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_1) == 24);

struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK];
};
static_assert(sizeof(BlockQ8_0) == 34);

// s = fp16(d * sum(qs)), used by the q4_1 / q5_1 dot products for the min term.
struct BlockQ8_1 {
  uint16_t d, s;
  int8_t qs[kQK];
};
static_assert(sizeof(BlockQ8_1) == 36);

// 16 sub-blocks of 16: scales[j] = 4-bit scale | 4-bit min << 4; value = d * sc * q - dmin * m.
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];
  uint8_t qs[kQK_K / 4];
  uint16_t d, dmin;
};
static_assert(sizeof(BlockQ2_K) == 84);

// 16 sub-blocks of 16 with signed 6-bit scales (packed into 12 bytes); 3-bit quants:
// 2 low bits in qs, the third in hmask (set means +0, clear means -4).
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];
  uint8_t qs[kQK_K / 4];
  uint8_t scales[12];
  uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110);

// 8 sub-blocks of 32 with 6-bit scales and mins packed into 12 bytes; value = d * sc * q - dmin * m.
struct BlockQ4_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ4_K) == 144);

struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ5_K) == 176);

// 16 sub-blocks of 16 with int8 scales; 6-bit quants: 4 low bits in ql, 2 high in qh; value = d * sc * (q - 32).
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210);

// The activation side of K-quant dot products: float scale, int8 quants, and the sum of
// every 16 quants.
struct BlockQ8_K {
  float d;
  int8_t qs[kQK_K];
  int16_t bsums[kQK_K / 16];
};
static_assert(sizeof(BlockQ8_K) == 292);

// value = d * kIq4nlValues[q], nibbles packed as Q4_0.
struct BlockIq4Nl {
  uint16_t d;
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockIq4Nl) == 18);

// value = kMxfp4Values[q] * 2^(e - 128) (an E2M1 value times the E8M0 scale 2^(e - 127)).
struct BlockMxfp4 {
  uint8_t e;
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockMxfp4) == 17);

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

}  // namespace fixq::gguf::detail
