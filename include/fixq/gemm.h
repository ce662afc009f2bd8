// fixq/gemm.h — integer GEMM with zero-point compensation and fused epilogues.
//
// Computes, for activations A [M, K] and weights B [N, K] (both row-major, "B transposed"
// as in a Linear layer),
//   acc[m, n] = sum_k A[m, k] * B[n, k]                        exact, in int32 or int64
// and then one of:
//   raw       acc                                                   (gemm_s32 / gemm_s64)
//   float     D = (float(acc - azp[m] * colsum[n]) * s_b[n]) * s_a[m] + bias[n]
//             vLLM's Scaled / ScaledBias / Azp / AzpPerToken epilogues  (gemm_f32)
//   requant   y = clamp(R_n(acc - azp[m] * colsum[n] + bias[n]) + zp_out)
//             R_n a FixedPointScale (docs/spec.md 2.3), y stored as u8 / s8 / s16  (gemm_requant)
// where colsum[n] = sum_k B[n, k] is computed once when B is packed (the zero-point
// compensation Z_x * colsum of docs/spec.md 5.1, vLLM's azp_adj).
//
// Operand types: A u8, s8 or s16 (asymmetric, zero point per tensor or per row); B s8 or
// s16 (symmetric). Accumulator bound: |acc| <= max|A| * max_n sum_k |B[n, k]| (max|A| of
// the type: 255, 128 or 32768); gemm_s32 requires that to stay below 2^31 (8-bit A with
// s8 B: always for K <= 65793; s16 A: for K <= 511, or longer rows of smaller weights)
// and throws otherwise; gemm_s64 and the epilogues accumulate safely for any K below 2^31
// (internally in blocks whose int32 partial sums cannot overflow, added in int64).
//
// Every kernel (scalar reference, AVX2, ...) computes the same integers; the float
// epilogue evaluates the same float operations in the same order, so every path returns
// the same bits. Runtime dispatch picks the kernel (fixq/cpu.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fixq/arith.h"

namespace fixq {

enum class IntType { U8, S8, S16 };

// Threads the GEMM may use for large products (M * N * K >= 2^25), and for mid-size ones
// (>= 3 * 2^20, a product of fewer than 4 rows counting 4 / M times) while the workers are
// awake, having finished a product less than ~200 us ago: a GRU's per-step products after
// its input projection, for instance. Smaller ones run on the calling thread. 0 (the
// default) means FIXQ_NUM_THREADS if set, else every hardware thread. Results do not
// depend on the thread count: threads take disjoint column panels and each output is
// summed in the same order.
void set_gemm_threads(int n);
int gemm_threads();

// Bytes per element of each type (the one definition every module uses).
constexpr int int_type_bytes(IntType t) { return t == IntType::S16 ? 2 : 1; }
// The value range of each type.
IntRange int_type_range(IntType t);
// "uint8", "int8", "int16" (numpy's names); the inverse throws fixq::Error naming them.
std::string to_string(IntType t);
IntType parse_int_type(std::string_view name);

// A read-only row-major matrix of `rows` x `cols` with a row stride (in elements) >= cols.
struct MatrixView {
  IntType type = IntType::U8;
  const void* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t stride = 0;
};

// Weights B [N, K], packed once, with their column sums. The kernels of each instruction
// set read B in a layout of their own (src/gemm/kernels.h); PackedB keeps the weights and
// packs them for a kernel's layout the first time that kernel runs, so a product never pairs a kernel with panels packed for
// another, whatever instruction set is forced later. Copies share the packed layouts;
// a PackedB may be used by several threads at once.
class PackedB {
 public:
  // Throws fixq::Error for a null pointer, N or K < 1, a stride below K, or a type other
  // than S8 / S16.
  static PackedB pack(const MatrixView& b);

  int64_t n() const { return n_; }
  int64_t k() const { return k_; }
  IntType type() const { return type_; }
  // colsum[n] = sum_k B[n, k] (exact: |colsum| <= K * 32768 < 2^47).
  std::span<const int64_t> colsum() const;
  // max_n sum_k |B[n, k]|: times max|A|, the bound of every accumulator (and of every
  // running sum the kernels form).
  int64_t max_abs_row_sum() const;

  // Private to the GEMM (src/gemm/panels.cpp): the weights and their packed layouts.
  struct Store;
  const Store& store() const { return *store_; }

 private:
  IntType type_ = IntType::S8;
  int64_t n_ = 0;
  int64_t k_ = 0;
  std::shared_ptr<const Store> store_;
};

// acc = A * B^T into C [M, N] (row stride ldc >= N). Throws fixq::Error for mismatched K,
// null pointers, strides below a row, or weights whose sums with A's type could overflow
// int32 (the bound above).
void gemm_s32(const MatrixView& a, const PackedB& b, int32_t* c, int64_t ldc);
void gemm_s64(const MatrixView& a, const PackedB& b, int64_t* c, int64_t ldc);

// The epilogues of vLLM's CUTLASS scaled_mm (its ScaledEpilogue family). scale_a has 1
// (per-tensor) or M (per-token) entries, scale_b 1 or N (per-channel), bias 0 or N, azp 0
// (symmetric activations: Scaled / ScaledBias), 1 (ScaledEpilogueAzp: per-tensor zero
// point) or M (ScaledEpilogueAzpPerToken).
// D = (float(acc - azp[m] * colsum[n]) * scale_b[n]) * scale_a[m] + bias[n], each
// operation in float32 (no FMA). Error against exact arithmetic:
//   |D - D_exact| <= 4 * 2^-24 * |s_a * s_b * (acc - azp * colsum)| + 2^-24 * |D|
// (the int -> float conversion, two products, one sum, each rounded to nearest).
struct DequantEpilogue {
  std::span<const float> scale_a;
  std::span<const float> scale_b;
  std::span<const float> bias;
  std::span<const int32_t> azp;
};
void gemm_f32(const MatrixView& a, const PackedB& b, const DequantEpilogue& e, float* d, int64_t ldd);

// Requantization to an integer output (docs/spec.md 2.4): for each element
//   v = acc - azp[m] * colsum[n] + bias[n]              (int64, exact)
//   y = clamp(scale[n].apply(v) + zp_out, out_min, out_max)
// scale has 1 or N entries (per-channel multipliers allowed: sigma_n = s_a s_b[n] / s_out),
// bias 0 or N entries in accumulator units (s_a * s_b[n]), azp 0, 1 or M entries.
// [out_min, out_max] must lie inside out_type's range (narrower = fused ReLU-style clamp).
struct RequantEpilogue {
  std::span<const int32_t> azp;
  std::span<const int32_t> bias;
  std::span<const FixedPointScale> scale;
  int32_t zp_out = 0;
  IntType out_type = IntType::S8;
  int32_t out_min = -128;
  int32_t out_max = 127;
};
// out points to M rows of out_type elements with row stride ldo (elements).
void gemm_requant(const MatrixView& a, const PackedB& b, const RequantEpilogue& e, void* out, int64_t ldo);

}  // namespace fixq
