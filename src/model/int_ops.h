// Private: the integer kernels of whole models (docs/spec.md part 10). Linear is the
// Conv1d of kernel 1: both are
//   acc[o] = q_b[o] + sum_{i in group(o), j < kernel} q_w[o, i, j] (x_{t-(kernel-1-j)d}[i] - Z_x)
//   y[o]   = sat(requant[o].apply(acc) + Z_y)
// exactly (int64 accumulation), with the frames before the first read from a history (the
// zero point Z_x, real 0, at the start of a sequence). Two implementations, one result:
// the scalar reference loops and the fast path, the im2col of every frame's kernel window
// (tap-major: per tap the frame's channels in a row, so each is one contiguous narrowing
// copy; for kernel 1, the input narrowed to the GEMM's storage) through the GEMM's exact
// accumulation per group, then the epilogue: its lane form in the family's vector kernel
// (model/kernels.h) where prepare_conv found one, else gemm_requant's own formula
// (gemm/epilogue_formulas.h), written straight into y; the tests hold them equal bit for
// bit on every ISA path.
#pragma once

#include <cstdint>
#include <vector>

#include "fixq/model.h"
#include "model/quantized.h"

namespace fixq::model_detail {

struct ConvIo {
  int32_t zp_x = 0;
  int32_t zp_y = 0;
  IntRange out;  // the output's integer range
  int bits = 8;  // of input and output (storage of the GEMM: s8 or s16)
};

// Fills q.packed and q.lanes from q.q_w, q.q_b and q.requant, for an input zero point zp_x
// and activations of `bits` bits: the one place that lays out a Linear / Conv1d's GEMM
// (assemble, and the tests' hand-made nodes).
void prepare_conv(const ModelNode& node, QNode& q, int32_t zp_x, int bits);

// x [B, T, Cin] and hist [B, P, Cin] (P = (kernel - 1) * dilation; unused when 0) to
// y [B, T, Cout]; every x value in its bits' range.
void conv_int_reference(const ModelNode& node, const QNode& q, const ConvIo& io, const int32_t* x, int64_t B, int64_t T,
                        const int32_t* hist, int32_t* y);
// The fast path's buffers, kept by a caller that runs many calls (a stream, a forward's
// chunks): fresh ones on every call cost page faults and memsets at batch 16.
struct ConvScratch {
  std::vector<int8_t> a8;
  std::vector<int16_t> a16;
  std::vector<int32_t> acc32;
  std::vector<int64_t> acc64;
};
void conv_int_fast(const ModelNode& node, const QNode& q, const ConvIo& io, const int32_t* x, int64_t B, int64_t T,
                   const int32_t* hist, int32_t* y, ConvScratch& scratch);
void conv_int_fast(const ModelNode& node, const QNode& q, const ConvIo& io, const int32_t* x, int64_t B, int64_t T,
                   const int32_t* hist, int32_t* y);

// Per row of C: y_c = sat(floor((E_c 2^(f+1) + sum) / (2 sum)) + Z_y), E_c = table[max - q_c]
// (0 past the table), sum = sum_c E_c >= 2^30; f = q.out_frac. Integer only.
void softmax_int(const QNode& q, const int32_t* x, int64_t rows, int64_t C, int32_t zp_y, IntRange out, int32_t* y);

// The exp table of a softmax whose input has scale s_in: round_half_even(2^30 exp(-d s_in))
// for d = 0, 1, ... while it is not 0 and d < 2^bits.
std::vector<int32_t> softmax_exp_table(double s_in, int bits);

}  // namespace fixq::model_detail
