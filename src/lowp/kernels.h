// Private: the kernel tables behind fixq/lowp.h, one per instruction set. The scalar table
// is the definition (built on lowp/element.h and lowp/mx_block.h); the AVX2 one must give
// the same bits for every input. There are no AVX-512 kernels: the AVX2 ones serve there.
#pragma once

#include <cstdint>

#include "fixq/cpu.h"
#include "fixq/lowp.h"

namespace fixq::lowp_detail {

struct ConvertKernels {
  // n floats -> n codes (uint8_t for types of <= 8 bits, uint16_t for bf16/fp16). A NaN
  // into a type without NaN gets kNoNanMarker; the first one's index is returned, else -1.
  using Encode = int64_t (*)(const float* x, int64_t n, void* codes);
  // n codes -> n floats. A code >= 2^bits decodes to NaN; the first one's index is
  // returned, else -1.
  using Decode = int64_t (*)(const void* codes, int64_t n, float* x);
  Encode encode[kLowpTypeCount][2];  // [type][Overflow]
  Decode decode[kLowpTypeCount];
};

struct MxKernels {
  using Quantize = void (*)(const float* x, int64_t blocks, uint8_t* out);
  using Dequantize = void (*)(const uint8_t* in, int64_t blocks, float* x);
  Quantize quantize[kMxTypeCount];
  Dequantize dequantize[kMxTypeCount];
};

const ConvertKernels& scalar_convert_kernels();
const ConvertKernels& avx2_convert_kernels();
const MxKernels& scalar_mx_kernels();
const MxKernels& avx2_mx_kernels();

inline const ConvertKernels& convert_kernels_for(Isa isa) {
  return isa == Isa::Scalar ? scalar_convert_kernels() : avx2_convert_kernels();
}

inline const MxKernels& mx_kernels_for(Isa isa) {
  return isa == Isa::Scalar ? scalar_mx_kernels() : avx2_mx_kernels();
}

}  // namespace fixq::lowp_detail
