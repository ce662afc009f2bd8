// Private: the per-format kernels behind fixq/gguf.h, one set per instruction set.
//
// Kernels work on whole blocks and trust their arguments (the front end in api.cpp has
// checked sizes and values). Every kernel of every instruction set produces exactly the
// bytes / bits of its scalar reference (`_ref`), which in turn reproduces ggml.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "cpu/registry.h"
#include "fixq/gguf.h"

namespace fixq::gguf::detail {

// n_blocks blocks of the format: floats <-> packed bytes; dot of x (this format) with y
// (its dot type), both n_blocks blocks of 32 or 256 elements.
using QuantizeFn = void (*)(const float* x, int64_t n_blocks, std::byte* out);
using DequantizeFn = void (*)(const std::byte* in, int64_t n_blocks, float* out);
using DotFn = float (*)(const std::byte* x, const std::byte* y, int64_t n_blocks);
// out[r] = dot(row r of x, y) for `rows` rows of n_blocks blocks each, packed one after the
// other: the same bits as `rows` calls of the family's dot.
using MatvecFn = void (*)(const std::byte* x, int64_t rows, int64_t n_blocks, const std::byte* y, float* out);

struct FormatKernels {
  QuantizeFn quantize;
  DequantizeFn dequantize;
  DotFn dot;        // null for formats without a dot product (Q8_1, Q8_K)
  MatvecFn matvec;  // null where a family has none: matvec() then calls dot row by row
};

inline constexpr std::size_t kTypeCount = 18;  // every Type (type_table.cpp checks it)

// One instruction-set family's kernels: per format (indexed by Type), and the finiteness
// scan of quantize's input. A null kernel is inherited from the next family (registry.h).
struct GgufKernels {
  std::array<FormatKernels, kTypeCount> format;
  int64_t (*first_nonfinite)(const float* x, int64_t n);
};

// Each family's table, in its own file (table_<family>.cpp).
namespace scalar { extern const GgufKernels kGguf; }
namespace avx2 { extern const GgufKernels kGguf; }
namespace avx512 { extern const GgufKernels kGguf; }
namespace avx512_emulated { extern const GgufKernels kGguf; }  // the tests' SIMDe build
namespace avx512vbmi { extern const GgufKernels kGguf; }
namespace avx512vbmi_emulated { extern const GgufKernels kGguf; }

// Best first, one entry per family (registry.cpp).
cpu_detail::KernelRegistry<GgufKernels>& registry();

// The active kernels for one format, each operation picked on its own (matvec may be null).
FormatKernels active_kernels(Type type);

// The floating-point fields of a block: byte offsets of its n_f16 fp16 fields (d, m,
// dmin, s) and of its float32 field (Q8_K's d; -1 if none).
struct ScaleFields {
  int n_f16;
  int f16[2];
  int f32;
};
const ScaleFields& scale_fields(Type type);

// Index of the first NaN or infinity among x[0..n), or -1.
int64_t first_nonfinite_ref(const float* x, int64_t n);
int64_t first_nonfinite_avx2(const float* x, int64_t n);

// ---- scalar references (ggml's algorithms)
void quantize_q4_0_ref(const float* x, int64_t n_blocks, std::byte* out);
void quantize_q4_1_ref(const float* x, int64_t n_blocks, std::byte* out);
void quantize_q5_0_ref(const float* x, int64_t n_blocks, std::byte* out);
void quantize_q5_1_ref(const float* x, int64_t n_blocks, std::byte* out);
void quantize_q8_0_ref(const float* x, int64_t n_blocks, std::byte* out);
void quantize_q8_1_ref(const float* x, int64_t n_blocks, std::byte* out);
void quantize_q2_k_ref(const float* x, int64_t n_blocks, std::byte* out);
void quantize_q3_k_ref(const float* x, int64_t n_blocks, std::byte* out);
void quantize_q4_k_ref(const float* x, int64_t n_blocks, std::byte* out);
void quantize_q5_k_ref(const float* x, int64_t n_blocks, std::byte* out);
void quantize_q6_k_ref(const float* x, int64_t n_blocks, std::byte* out);
void quantize_q8_k_ref(const float* x, int64_t n_blocks, std::byte* out);
void quantize_iq4_nl_ref(const float* x, int64_t n_blocks, std::byte* out);
void quantize_iq4_xs_ref(const float* x, int64_t n_blocks, std::byte* out);
void quantize_tq1_0_ref(const float* x, int64_t n_blocks, std::byte* out);
void quantize_tq2_0_ref(const float* x, int64_t n_blocks, std::byte* out);
void quantize_mxfp4_ref(const float* x, int64_t n_blocks, std::byte* out);
void quantize_nvfp4_ref(const float* x, int64_t n_blocks, std::byte* out);

void dequantize_q4_0_ref(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q4_1_ref(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q5_0_ref(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q5_1_ref(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q8_0_ref(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q8_1_ref(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q2_k_ref(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q3_k_ref(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q4_k_ref(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q5_k_ref(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q6_k_ref(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q8_k_ref(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_iq4_nl_ref(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_iq4_xs_ref(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_tq1_0_ref(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_tq2_0_ref(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_mxfp4_ref(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_nvfp4_ref(const std::byte* in, int64_t n_blocks, float* out);

float dot_q4_0_q8_0_ref(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_q4_1_q8_1_ref(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_q5_0_q8_0_ref(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_q5_1_q8_1_ref(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_q8_0_q8_0_ref(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_q2_k_q8_k_ref(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_q3_k_q8_k_ref(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_q4_k_q8_k_ref(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_q5_k_q8_k_ref(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_q6_k_q8_k_ref(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_iq4_nl_q8_0_ref(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_iq4_xs_q8_k_ref(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_tq1_0_q8_k_ref(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_tq2_0_q8_k_ref(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_mxfp4_q8_0_ref(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_nvfp4_q8_0_ref(const std::byte* x, const std::byte* y, int64_t n_blocks);

// ---- AVX2 (+FMA, F16C, BMI2) kernels, bit-identical to the references
void quantize_q8_0_avx2(const float* x, int64_t n_blocks, std::byte* out);
void quantize_q8_1_avx2(const float* x, int64_t n_blocks, std::byte* out);
void quantize_q8_k_avx2(const float* x, int64_t n_blocks, std::byte* out);

void dequantize_q4_0_avx2(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q4_1_avx2(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q5_0_avx2(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q5_1_avx2(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q8_0_avx2(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q8_1_avx2(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q2_k_avx2(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q3_k_avx2(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q4_k_avx2(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q5_k_avx2(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q6_k_avx2(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_q8_k_avx2(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_iq4_nl_avx2(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_iq4_xs_avx2(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_tq1_0_avx2(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_tq2_0_avx2(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_mxfp4_avx2(const std::byte* in, int64_t n_blocks, float* out);
void dequantize_nvfp4_avx2(const std::byte* in, int64_t n_blocks, float* out);

float dot_q4_0_q8_0_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_q4_1_q8_1_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_q5_0_q8_0_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_q5_1_q8_1_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_q8_0_q8_0_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_q2_k_q8_k_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_q3_k_q8_k_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_q4_k_q8_k_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_q5_k_q8_k_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_q6_k_q8_k_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_iq4_nl_q8_0_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_iq4_xs_q8_k_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_tq1_0_q8_k_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_tq2_0_q8_k_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_mxfp4_q8_0_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks);
float dot_nvfp4_q8_0_avx2(const std::byte* x, const std::byte* y, int64_t n_blocks);

}  // namespace fixq::gguf::detail
