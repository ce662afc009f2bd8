// fixq/weightonly.h — packed 2/4/8-bit integer weights and the weight-only matmul (GPTQ-style).
//
// Part 1: PackedWeights: a float weight W [K, N] (K inputs, N outputs, y = x · W) held as
//         b-bit unsigned codes q with one (scale, zero point) per group of `group_size`
//         consecutive inputs and per output column:
//           w[k, n] = float(q[k, n] - z[g(k), n]) * s[g(k), n]     (float32, one rounding)
//         q and z in [0, 2^b - 1], s finite and > 0, g(k) = k / group_size, or a permuted
//         group map (GPTQ act-order g_idx) where every group still has group_size rows.
// Part 2: the weight-only matmul y [M, N] = x [M, K] · W, dequantizing inside the kernel.
// Part 3: GPTQ v1 checkpoint tensors in and out, and loading / saving them as .npy.
//
// Canonical layout (what the kernels read; built once, at quantization or import):
//   rows are reordered so that each group's rows are consecutive (a no-op without
//   act-order; the kernel then gathers x's columns in the same order); 32 / b consecutive
//   codes of one column share a uint32 word, code j of the word at bits [b·j, b·j + b)
//   (GPTQ's qweight packing, along the input dimension); words are stored in panels of 32
//   columns: the word of canonical rows [r·32/b, (r+1)·32/b) and column c sits at index
//   ((c / 32) · R + r) · 32 + c % 32, R = K · b / 32, so the kernel streams each panel
//   contiguously. Scales and zero points are [G, N]
//   padded to whole panels; padding columns have code 0, zero 0 and scale 0.
// Requirements: b in {2, 4, 8}; group_size divides K and is a multiple of 32 / b (a word
// never straddles two groups).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fixq/quant.h"
#include "fixq/tensor.h"

namespace fixq {

namespace weightonly_detail {
struct Access;
}

// ---------------------------------------------------------------------------------------
// Part 1: packed weights
// ---------------------------------------------------------------------------------------

struct GroupQuantSpec {
  int bits = 4;               // 2, 4 or 8
  int64_t group_size = 128;   // along K
  Symmetry symmetry = Symmetry::Asymmetric;  // Symmetric: zero point 2^(b-1) (as GPTQ's sym)
};

class PackedWeights {
 public:
  // Quantizes W [k, n] (row-major) per group and column with fixq's rules (fixq/quant.h:
  // unsigned b-bit format, float scales, ranges never clipped, round half to even). A
  // group whose values are all 0 gets the parameters of the range [-1, 1] (its codes
  // dequantize to exactly 0). Throws fixq::Error for bad sizes or a non-finite weight.
  static PackedWeights quantize(const float* w, int64_t k, int64_t n, const GroupQuantSpec& spec);

  // From explicit parts: codes q [k, n] (row-major, original row order), scales and zero
  // points [G, n], and g_idx [k] (the group of each row; empty means k / (k / G)). Throws
  // fixq::Error naming the first bad entry or size.
  static PackedWeights from_parts(int bits, int64_t k, int64_t n, std::span<const uint8_t> q,
                                  std::span<const float> scales, std::span<const int32_t> zeros,
                                  std::span<const int32_t> g_idx);

  int bits() const { return bits_; }
  int64_t rows() const { return k_; }  // K
  int64_t cols() const { return n_; }  // N
  int64_t group_size() const { return group_size_; }
  int64_t groups() const { return k_ / group_size_; }
  bool act_order() const { return !perm_.empty(); }  // groups are not k / group_size

  // Element access in the original row order.
  uint32_t code(int64_t k, int64_t n) const;
  int32_t group_of_row(int64_t k) const;
  float scale(int64_t g, int64_t n) const;
  int32_t zero(int64_t g, int64_t n) const;

  // W [K, N] in the original row order, each element float(q - z) * s.
  void dequantize(float* w) const;
  // Bytes of codes, scales (float32) and zero points (int32) held.
  int64_t packed_bytes() const;

 private:
  friend struct weightonly_detail::Access;
  PackedWeights() = default;  // only the factories make one, always valid
  int bits_ = 4;
  int64_t k_ = 0, n_ = 0, group_size_ = 0;
  std::vector<int32_t> perm_;       // act-order: canonical row i is original row perm_[i]
  std::vector<int32_t> canonical_;  // act-order: original row k is canonical row canonical_[k]
  std::vector<uint32_t> words_;     // panel-major codes, see the layout above
  std::vector<float> scales_;       // [G, panels * 32]
  std::vector<int32_t> zeros_;      // [G, panels * 32]
};

// ---------------------------------------------------------------------------------------
// Part 2: weight-only matmul
// ---------------------------------------------------------------------------------------
//
// y [m, N] = x [m, K] · W, float32 activations, W dequantized on the fly: per group and
// column the kernel sums x[k] · float(q - z) over the group's rows (exact integers times
// x, accumulated in float32 in row order), then adds that sum times the scale to y,
// group after group. With a[k, n] = x[k] · (q - z) · s the exact terms and
// gamma(j) = j·u / (1 - j·u), u = 2^-24, every path satisfies
//   |y[n] - sum_k a[k, n]| <= gamma(group_size + G + 1) · sum_k |a[k, n]|,
// while dequantize-then-float-GEMM (w rounded once, K products summed in float32)
// satisfies |y_ref[n] - sum_k a[k, n]| <= gamma(K + 1) · sum_k |a[k, n]|, so the two
// agree within the sum of both bounds. Every instruction set's kernel gives the scalar
// kernel's bits (each product and sum rounded separately, in that order). NaN and
// infinities in x propagate as
// IEEE arithmetic does. Throws fixq::Error for m < 0 or null pointers.
void weight_only_matmul(const float* x, int64_t m, const PackedWeights& w, float* y);

// ---------------------------------------------------------------------------------------
// Part 3: GPTQ v1 tensors
// ---------------------------------------------------------------------------------------
//
// As GPTQ v1 checkpoints store a linear layer (in_features K, out_features N):
//   qweight [K·b/32, N] int32: row r packs q[r·(32/b) + j, n] at bits [b·j, b·j + b);
//   qzeros  [G, N·b/32] int32: column c packs (z[g, c·(32/b) + j] - 1) mod 2^b at bits
//           [b·j, b·j + b) (v1 stores zero - 1; a zero of 0 is stored as 2^b - 1 and read
//           back as 0: the original v1 kernels, which add 1 without wrapping, would use 2^b);
//   scales  [G, N] (float16 in checkpoints; float32 here);
//   g_idx   [K] int32, the group of each input row (act-order permutes it); optional.
// Import checks every shape, that scales are finite and > 0, that g_idx entries lie in
// [0, G) with exactly K / G rows per group, and this module's requirements above.
struct GptqTensors {
  int bits = 4;
  Shape qweight_shape;
  std::vector<int32_t> qweight;
  Shape qzeros_shape;
  std::vector<int32_t> qzeros;
  Shape scales_shape;
  std::vector<float> scales;
  std::vector<int32_t> g_idx;
};

PackedWeights import_gptq(const GptqTensors& t);
// The tensors that import back to w (g_idx always present).
GptqTensors export_gptq(const PackedWeights& w);

// prefix + "qweight.npy" (<i4), "qzeros.npy" (<i4), "scales.npy" (<f2 or <f4) and, if the
// file exists, "g_idx.npy" (<i4 or <i8). Throws fixq::Error naming the file at fault.
GptqTensors load_gptq_npy(const std::string& prefix, int bits);
// Writes the same files; scales as <f2 when every scale is exactly a float16 (as
// checkpoints hold them), else <f4.
void save_gptq_npy(const std::string& prefix, const GptqTensors& t);

}  // namespace fixq
