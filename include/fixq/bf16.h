// fixq/bf16.h — bfloat16 dot products and GEMM with float32 results, as AVX512_BF16's
// VDPBF16PS computes them.
//
// The one arithmetic step (Intel SDM, VDPBF16PS, "FP32 FMA with DAZ in, FTZ out and RNE
// rounding; MXCSR neither consulted nor updated"): a pair (a0, a1) times a pair (b0, b1)
// enters a float32 accumulator c as
//     c = ftz(fma(daz(a1), daz(b1), daz(c)))      the odd (upper) elements first,
//     c = ftz(fma(daz(a0), daz(b0), daz(c)))      then the even ones,
// where fma rounds once, to nearest even, daz() reads a subnormal as zero of the same sign
// and ftz() turns a result that is subnormal after rounding into zero of the same sign (x86
// detects tininess after rounding). bf16 values widen exactly (bits << 16); their products
// are exact, so every step rounds once. NaN results are NaN on every path; their payload
// and sign are not part of the contract (the instruction's own rules for them are x86's).
//
// A sequence of K elements forms ceil(K / 2) pairs (element 2p even, 2p + 1 odd); an odd K
// pads its last pair with +0 in both operands.
//
//   dot(a, b): 64 accumulators, starting at +0; pair p steps accumulator p mod 64, the pairs
//     in increasing order, padded with (+0, +0) pairs up to a multiple of 64 (so each
//     accumulator sees ceil(K / 128) steps). The sum: c[l] += c[l + 32] for l < 32 (with
//     a plain float32 addition, no DAZ / FTZ), then c[l] += c[l + 16], then l + 8, l + 4,
//     l + 2, l + 1 in that order: an AVX-512 kernel's four vectors of 16 lanes folded in
//     halves.
//   gemm: C[m][n] = one accumulator per output, starting at +0, stepping through the pairs
//     of row m of A and row n of B (weights stored as rows: B is N x K) in increasing order.
//
// Every path (scalar reference, AVX2 with FMA under DAZ/FTZ, AVX512_BF16 with vdpbf16ps)
// gives these bits; fixq/cpu.h picks the path.
//
// float32 inputs are converted to bf16 first, round to nearest even (fixq/lowp.h's bf16
// encoding: NaN becomes the quiet NaN 0x7FC0 with its sign, overflow +-inf).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace fixq::bf16 {

// float32 -> bf16, round to nearest even; bf16 -> float32 exactly.
uint16_t from_float(float x);
float to_float(uint16_t b);
std::vector<uint16_t> from_float(std::span<const float> x);
void from_float(std::span<const float> x, std::span<uint16_t> out);  // sizes must match

// The dot product of two bf16 vectors of the same length (fixq::Error otherwise).
float dot(std::span<const uint16_t> a, std::span<const uint16_t> b);

// The weights B (N rows of K bf16, row stride ldb >= K) repacked for the GEMM kernels:
// panels of 32 rows with the pairs of K interleaved (as vdpbf16ps reads them), zero-padded
// to whole panels and pairs. Every family reads the same layout.
class PackedB {
 public:
  static PackedB pack(const uint16_t* b, int64_t n, int64_t k, int64_t ldb);
  static PackedB pack(std::span<const uint16_t> b, int64_t n, int64_t k);  // b.size() == n * k
  int64_t n() const { return n_; }
  int64_t k() const { return k_; }
  int64_t k_pairs() const { return (k_ + 1) / 2; }
  // Panel j's pair p: 32 dwords (rows 32j .. 32j + 31), each (even element | odd << 16).
  const uint32_t* panel(int64_t j) const { return data_.data() + static_cast<std::size_t>(j * k_pairs() * kPanel); }
  static constexpr int64_t kPanel = 32;

 private:
  int64_t n_ = 0, k_ = 0;
  std::vector<uint32_t> data_;
};

// C (M x N, row stride ldc >= N) = A (M x K bf16, row stride lda >= K) times B^T.
void gemm(const uint16_t* a, int64_t m, int64_t lda, const PackedB& b, float* c, int64_t ldc);
// The same with float32 activations, converted to bf16 first (round to nearest even).
void gemm(const float* a, int64_t m, int64_t lda, const PackedB& b, float* c, int64_t ldc);

}  // namespace fixq::bf16
