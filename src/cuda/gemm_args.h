// Private: one product and its epilogue as the GEMM kernels read them, plain values and
// device pointers (included by the kernels and by the host code that fills it).
//
// A product is C = A [m, k] x B [n, k]^T with exact integer sums, each output handed to the
// epilogue with its row and column: the formulas of gemm/epilogue_formulas.h, shared with
// the CPU. A per-row or per-column constant is either a device array or, where the array
// pointer is null, the one value beside it (a per-tensor constant needs no device memory).
#pragma once

#include <cstdint>

#include "fixq/arith.h"
#include "fixq/cuda.h"
#include "fixq/gemm.h"

namespace fixq::cuda::detail {

enum class EpilogueKind : int { S32, F32, Requant };

struct EpilogueArgs {
  EpilogueKind kind = EpilogueKind::S32;
  const int64_t* colsum = nullptr;          // [n]: sum_k B[n, k]
  const int32_t* azp_rows = nullptr;        // [m], else azp
  int32_t azp = 0;
  const float* scale_a_rows = nullptr;      // F32: [m], else scale_a
  float scale_a = 1.0f;
  const float* scale_b_cols = nullptr;      // F32: [n], else scale_b
  float scale_b = 1.0f;
  const float* bias_f = nullptr;            // F32: [n] or none
  const int32_t* bias_i = nullptr;          // Requant: [n] or none
  const FixedPointScale* scale_cols = nullptr;  // Requant: [n], else scale
  FixedPointScale scale;
  int32_t zp_out = 0;
  IntRange clamp;                           // Requant: the output range
  IntType out_type = IntType::S8;           // Requant: u8, s8 or s16
  void* out = nullptr;                      // [m, ldo] of int32 (S32), float (F32) or out_type
  int64_t ldo = 0;
  // F32 and Requant: a 16-bit A split as 256 * high byte (s8) + low byte (u8), multiplied as
  // two products: this one of the low bytes, acc_hi [m, ld_hi] the high bytes' (int32), so
  // that the epilogue's sum is 256 * acc_hi + acc, the 16-bit product exactly.
  const int32_t* acc_hi = nullptr;
  int64_t ld_hi = 0;
};

struct GemmArgs {
  IntType a_type = IntType::S8;  // U8, S8 or S16 (S16 only for the reference kernel)
  const void* a = nullptr;
  int64_t m = 0, k = 0, lda = 0;
  IntType b_type = IntType::S8;  // S8 or S16 (S16 only for the reference kernel)
  const void* b = nullptr;       // [n, ldb], zero in columns k..ldb-1
  int64_t n = 0, ldb = 0;
  EpilogueArgs e;
};

// B's row stride in device memory: K rounded up to whole 64-byte tiles of the tensor-core
// kernel (zeros beyond K), so that its tiles are always full and 16-byte aligned.
constexpr int64_t kBTileK = 64;
FIXQ_HOST_DEVICE constexpr int64_t padded_b_stride(int64_t k) { return (k + kBTileK - 1) / kBTileK * kBTileK; }

// Whether the tensor-core kernel loads A's tiles by 16-byte cp.async (A's base address and
// row stride in bytes both 16-byte aligned) rather than byte by byte (any other layout).
inline bool a_rows_take_cp_async(const void* a, int64_t lda_bytes) {
  return reinterpret_cast<std::uintptr_t>(a) % 16 == 0 && lda_bytes % 16 == 0;
}

// Whether the tensor-core kernel takes this product: 8-bit A, s8 B with the padded stride,
// and int32 sums that cannot overflow (max|A| * max_n sum_k |B[n, k]| < 2^31, which the
// caller has checked with the weights' bound).
inline bool tensor_core_operands(const GemmArgs& g) {
  return (g.a_type == IntType::U8 || g.a_type == IntType::S8) && g.b_type == IntType::S8 &&
         g.ldb == padded_b_stride(g.k);
}

// The two kernels (gemm_reference.cu, gemm_mma.cu), enqueued on `stream`; m, n >= 1.
void launch_gemm_reference(const GemmArgs& g, Stream stream);
void launch_gemm_tensor_core(const GemmArgs& g, Stream stream);

}  // namespace fixq::cuda::detail
