// Private: the vector kernels of whole models' operators (docs/spec.md part 10), one table
// per instruction-set family (src/cpu/registry.h). A family without a table (scalar) runs
// the element loops of int_ops.cpp, which are these kernels' definition.
//
// requant: Linear / Conv1d's epilogue where it has a lane form (QNode::Lanes, model/quantized.h,
// chosen at assemble): per row r and output o,
//   y[r, o] = clamp(apply(acc[r, o] + offset[o]), qmin - zp_y, qmax - zp_y) + zp_y
// with apply the output's lane scale (arith/lane_scale.h: equal to FixedPointScale::apply on
// the interval the offset and the accumulator bound allow), every step in int32 lanes. That
// is sat(requant[o].apply(acc - zp_x colsum + bias) + zp_y), the requantize of the reference.
//
// map8: an 8-bit value's per-element map read from its table (model/quantized.h, Table8),
// one gather per vector, or where the family holds byte tables in registers and the table
// has its bytes, vpermi2b lookups.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu/registry.h"

namespace fixq::model_detail {

// One group's outputs of one Linear / Conv1d call.
struct RequantRows {
  const int32_t* acc;  // [rows, n], row stride n: the GEMM's exact sums
  int64_t rows, n;
  // Per output: offset = bias - zp_x colsum, and the lane scale's m, left, right.
  const int32_t *offset, *m, *left, *right;
  int32_t lo, hi, zp;  // lo = qmin - zp_y, hi = qmax - zp_y, zp = zp_y
  int32_t* y;          // [rows, ldy], the group's first output column
  int64_t ldy;
};

struct ModelKernels {
  const char* name;
  void (*requant_pow2)(const RequantRows&);        // every scale a power of two
  void (*requant_multiplier)(const RequantRows&);  // every scale m 2^-right, m >= 0
  // A Table8 (quantized.h) applied: y[i] = table[x[i] - qmin] for i < n, every x[i] in the
  // table's range; into int8, every entry in int8's range (a GRU's int8 input). bytes: the
  // table's Table8::bytes, or null.
  void (*map8)(const int32_t* x, int64_t n, const int32_t* table, const int8_t* bytes, int32_t qmin, int32_t* y);
  void (*map8_s8)(const int32_t* x, int64_t n, const int32_t* table, const int8_t* bytes, int32_t qmin, int8_t* y);
};

// Each family's table, defined in its own file with FIXQ_KERNEL_TABLE (src/cpu/registry.h).
FIXQ_DECLARE_KERNEL_TABLES(ModelKernels, kModel)
// The tables of the families that bring kernels (registry.cpp).
cpu_detail::KernelRegistry<ModelKernels>& registry();
// The table the active features select, or null (the element loops).
const ModelKernels* active_model_kernels();
// This module's rows of fixq::active_kernels() (registry.cpp).
std::vector<KernelChoice> report_kernels();

}  // namespace fixq::model_detail
