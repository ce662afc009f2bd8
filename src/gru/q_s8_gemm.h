// Private: the int8 x int8 product of the fast GRU loop (int8 activations, int8 weights),
// exact and faster on AVX2 than the general GEMM's int16 pairs.
//
// vpmaddubsw multiplies unsigned by signed bytes and adds pairs into int16 with
// saturation. With a = |x| (at most 128) and w' = w * sign(x) in [-127, 127], a pair is at
// most 2 * 128 * 127 = 32512, so it never saturates and the sum is exact; vpmaddwd with
// ones then adds pairs of pairs into int32. Weights of -128 are stored as -127 plus a
// correction list (acc[n] -= x[k] for each (n, k) that held -128), so every int8 weight
// matrix qualifies.
#pragma once

#include <cstdint>
#include <vector>

namespace fixq::gru_detail {

// Weights [N, K] in panels of 8 rows; inside a panel, for each quad of k (K padded to a
// multiple of 4 with zeros), 8 rows x 4 bytes.
struct S8Weights {
  int64_t n = 0, k = 0, k4 = 0, panels = 0;
  std::vector<int8_t> data;
  std::vector<std::pair<int32_t, int32_t>> minus128;  // (n, k) of weights that were -128

  static S8Weights pack(const std::vector<int32_t>& q, int64_t n, int64_t k);
};

// acc[m * ldc + n] = sum_k x[m * ldx + k] * w[n, k] for m < rows, n < N (int32, exact for
// K < 2^16). x rows must be readable up to k4 (the caller pads with zeros).
void s8_gemm_scalar(const S8Weights& w, const int8_t* x, int64_t ldx, int64_t rows, int32_t* acc, int64_t ldc);
void s8_gemm_avx2(const S8Weights& w, const int8_t* x, int64_t ldx, int64_t rows, int32_t* acc, int64_t ldc);

}  // namespace fixq::gru_detail
