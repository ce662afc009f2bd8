// Private: the blocked GEMM loops shared by every output kind.
#pragma once

#include <cstdint>
#include <string>

#include "fixq/gemm.h"

namespace fixq::gemm_detail {

// Throws fixq::Error unless A and B form a supported, well-formed product.
void validate(const MatrixView& a, const PackedB& b);

// Exact accumulators A * B^T into c [M, N] (row stride ldc), Acc = int32_t or int64_t.
// For int32_t the caller has checked fits_int32.
template <class Acc>
void accumulate(const MatrixView& a, const PackedB& b, Acc* c, int64_t ldc);

// The micro-kernel the active features select for these operand types, by name.
std::string kernel_name(IntType a, IntType b);

}  // namespace fixq::gemm_detail
