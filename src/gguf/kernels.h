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

// Each family's table, defined in its own file with FIXQ_KERNEL_TABLE (src/cpu/registry.h).
FIXQ_DECLARE_KERNEL_TABLES(GgufKernels, kGguf)

// The tables of the families that bring kernels (registry.cpp).
cpu_detail::KernelRegistry<GgufKernels>& registry();
// This module's rows of fixq::active_kernels(): the kernel each operation runs now, picked
// as the operations pick it (registry.cpp).
std::vector<KernelChoice> report_kernels();


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

// Every format by its kernels' name (Type order), and every dot product's pair of formats.
#define FIXQ_GGUF_EACH_FORMAT(X) \
  X(q4_0) X(q4_1) X(q5_0) X(q5_1) X(q8_0) X(q8_1) X(q2_k) X(q3_k) X(q4_k) X(q5_k) X(q6_k) X(q8_k) X(iq4_nl) \
  X(iq4_xs) X(tq1_0) X(tq2_0) X(mxfp4) X(nvfp4)
#define FIXQ_GGUF_EACH_DOT(X)                                                                                   \
  X(q4_0, q8_0) X(q4_1, q8_1) X(q5_0, q8_0) X(q5_1, q8_1) X(q8_0, q8_0) X(q2_k, q8_k) X(q3_k, q8_k) X(q4_k, q8_k) \
  X(q5_k, q8_k) X(q6_k, q8_k) X(iq4_nl, q8_0) X(iq4_xs, q8_k) X(tq1_0, q8_k) X(tq2_0, q8_k) X(mxfp4, q8_0)        \
  X(nvfp4, q8_0)

// The kernels of one family, named <operation>_<format>[_<activation format>]<suffix>.
#define FIXQ_GGUF_DECLARE_QUANTIZE(name, suffix) \
  void quantize_##name##suffix(const float* x, int64_t n_blocks, std::byte* out);
#define FIXQ_GGUF_DECLARE_DEQUANTIZE(name, suffix) \
  void dequantize_##name##suffix(const std::byte* in, int64_t n_blocks, float* out);
#define FIXQ_GGUF_DECLARE_DOT(x, y, suffix) \
  float dot_##x##_##y##suffix(const std::byte* a, const std::byte* b, int64_t n_blocks);
#define FIXQ_GGUF_DECLARE_MATVEC(x, y, suffix) \
  void matvec_##x##_##y##suffix(const std::byte* a, int64_t rows, int64_t n_blocks, const std::byte* b, float* out);

// ---- scalar references (ggml's algorithms), suffix _ref
#define FIXQ_GGUF_REF_QUANTIZE(name) FIXQ_GGUF_DECLARE_QUANTIZE(name, _ref)
#define FIXQ_GGUF_REF_DEQUANTIZE(name) FIXQ_GGUF_DECLARE_DEQUANTIZE(name, _ref)
#define FIXQ_GGUF_REF_DOT(x, y) FIXQ_GGUF_DECLARE_DOT(x, y, _ref)
FIXQ_GGUF_EACH_FORMAT(FIXQ_GGUF_REF_QUANTIZE)
FIXQ_GGUF_EACH_FORMAT(FIXQ_GGUF_REF_DEQUANTIZE)
FIXQ_GGUF_EACH_DOT(FIXQ_GGUF_REF_DOT)

// ---- AVX2 (+FMA, F16C, BMI2) kernels, bit-identical to the references, suffix _avx2: the
// quantizers of the 8-bit activation formats, every dequantizer and dot product
#define FIXQ_GGUF_AVX2_DEQUANTIZE(name) FIXQ_GGUF_DECLARE_DEQUANTIZE(name, _avx2)
#define FIXQ_GGUF_AVX2_DOT(x, y) FIXQ_GGUF_DECLARE_DOT(x, y, _avx2)
FIXQ_GGUF_DECLARE_QUANTIZE(q8_0, _avx2)
FIXQ_GGUF_DECLARE_QUANTIZE(q8_1, _avx2)
FIXQ_GGUF_DECLARE_QUANTIZE(q8_k, _avx2)
FIXQ_GGUF_EACH_FORMAT(FIXQ_GGUF_AVX2_DEQUANTIZE)
FIXQ_GGUF_EACH_DOT(FIXQ_GGUF_AVX2_DOT)

}  // namespace fixq::gguf::detail
