// Reference quantizers of the 32-element formats Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q8_1: ggml's
// quantize_row_*_ref, operation for operation (float32 throughout, no contraction).
//
// ggml converts x * id + 8.5f and friends to int8_t with a C cast; gcc on x86-64 does that
// with cvttss2si and keeps the low byte, which x86_float_to_i8 reproduces (it matters only
// when 1/d overflows for blocks of subnormal-sized values).
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "gguf/blocks.h"
#include "gguf/ggml_arith.h"
#include "gguf/kernels.h"

namespace fixq::gguf::detail {

namespace {

// The element of largest magnitude, the first one on ties (keeping its sign).
float block_signed_absmax(const float* x) {
  float amax;
  return signed_absmax(x, kQK, &amax);
}

float absmax(const float* x) {
  float amax = 0.0f;
  for (int j = 0; j < kQK; ++j) amax = amax > std::fabs(x[j]) ? amax : std::fabs(x[j]);
  return amax;
}

void min_max(const float* x, float* min, float* max) {
  *min = FLT_MAX;
  *max = -FLT_MAX;
  for (int j = 0; j < kQK; ++j) {
    if (x[j] < *min) *min = x[j];
    if (x[j] > *max) *max = x[j];
  }
}

// The block's scale d (stored as fp16 in *field) and its inverse, 0 for d = 0.
float scale_and_inverse(float d, uint16_t* field) {
  *field = fp32_to_fp16(d);
  return d != 0.0f ? 1.0f / d : 0.0f;
}

// Q4_1 / Q5_1: the block's min (stored in b.m) and the inverse of d = (max - min) / levels.
template <class Block>
float min_and_inverse(const float* x, float levels, Block& b, float* min) {
  float max;
  min_max(x, min, &max);
  b.m = fp32_to_fp16(*min);
  return scale_and_inverse((max - *min) / levels, &b.d);
}

// ggml's MIN(limit, (int8_t)v) stored in a uint8_t.
uint8_t capped_code(float v, int limit) {
  return static_cast<uint8_t>(std::min(limit, static_cast<int>(x86_float_to_i8(v))));
}

}  // namespace

void quantize_q4_0_ref(const float* x, int64_t n_blocks, std::byte* out) {
  quantize_blocks<BlockQ4_0, kQK>(x, n_blocks, out, [](const float* x, BlockQ4_0& b) {
    const float id = scale_and_inverse(block_signed_absmax(x) / -8.0f, &b.d);
    for (int j = 0; j < kQK / 2; ++j) {
      const uint8_t lo = capped_code(x[j] * id + 8.5f, 15);
      const uint8_t hi = capped_code(x[j + kQK / 2] * id + 8.5f, 15);
      b.qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  });
}

void quantize_q4_1_ref(const float* x, int64_t n_blocks, std::byte* out) {
  quantize_blocks<BlockQ4_1, kQK>(x, n_blocks, out, [](const float* x, BlockQ4_1& b) {
    float min;
    const float id = min_and_inverse(x, 15.0f, b, &min);
    for (int j = 0; j < kQK / 2; ++j) {
      const uint8_t lo = capped_code((x[j] - min) * id + 0.5f, 15);
      const uint8_t hi = capped_code((x[j + kQK / 2] - min) * id + 0.5f, 15);
      b.qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  });
}

namespace {

// Q5 codes: 4 low bits into qs (element j low nibble, j + 16 high), the fifth into qh.
void pack_q5(const uint8_t* codes, uint8_t* qs, uint8_t* qh_bytes) {
  uint32_t qh = 0;
  for (int j = 0; j < kQK / 2; ++j) {
    const uint8_t lo = codes[j], hi = codes[j + kQK / 2];
    qs[j] = static_cast<uint8_t>((lo & 0x0F) | ((hi & 0x0F) << 4));
    qh |= ((lo & 0x10u) >> 4) << j;
    qh |= ((hi & 0x10u) >> 4) << (j + kQK / 2);
  }
  std::memcpy(qh_bytes, &qh, sizeof qh);
}

}  // namespace

void quantize_q5_0_ref(const float* x, int64_t n_blocks, std::byte* out) {
  quantize_blocks<BlockQ5_0, kQK>(x, n_blocks, out, [](const float* x, BlockQ5_0& b) {
    const float id = scale_and_inverse(block_signed_absmax(x) / -16.0f, &b.d);
    uint8_t codes[kQK];
    for (int j = 0; j < kQK; ++j) codes[j] = capped_code(x[j] * id + 16.5f, 31);
    pack_q5(codes, b.qs, b.qh);
  });
}

void quantize_q5_1_ref(const float* x, int64_t n_blocks, std::byte* out) {
  quantize_blocks<BlockQ5_1, kQK>(x, n_blocks, out, [](const float* x, BlockQ5_1& b) {
    float min;
    const float id = min_and_inverse(x, 31.0f, b, &min);
    uint8_t codes[kQK];
    // ggml casts straight to uint8_t here, without a cap.
    for (int j = 0; j < kQK; ++j) codes[j] = x86_float_to_u8((x[j] - min) * id + 0.5f);
    pack_q5(codes, b.qs, b.qh);
  });
}

void quantize_q8_0_ref(const float* x, int64_t n_blocks, std::byte* out) {
  quantize_blocks<BlockQ8_0, kQK>(x, n_blocks, out, [](const float* x, BlockQ8_0& b) {
    const float id = scale_and_inverse(absmax(x) / 127.0f, &b.d);
    // roundf: ties away from zero.
    for (int j = 0; j < kQK; ++j) b.qs[j] = x86_float_to_i8(std::round(x[j] * id));
  });
}

void quantize_q8_1_ref(const float* x, int64_t n_blocks, std::byte* out) {
  quantize_blocks<BlockQ8_1, kQK>(x, n_blocks, out, [](const float* x, BlockQ8_1& b) {
    const float d = absmax(x) / 127.0f;
    const float id = scale_and_inverse(d, &b.d);
    int sum = 0;
    for (int j = 0; j < kQK; ++j) {
      b.qs[j] = x86_float_to_i8(std::round(x[j] * id));
      sum += b.qs[j];
    }
    b.s = fp32_to_fp16(static_cast<float>(sum) * d);
  });
}

}  // namespace fixq::gguf::detail
