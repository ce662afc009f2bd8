// Private: the kernel tables behind fixq/lowp.h, one per instruction-set family. The scalar
// table is the definition (built on lowp/element.h and lowp/mx_block.h); every other
// family's kernels must give the same bits for every input.
#pragma once

#include <cstdint>
#include <utility>

#include "cpu/registry.h"
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

// One instruction-set family's kernels. A null kernel is inherited from the next family.
struct LowpKernels {
  ConvertKernels convert;
  MxKernels mx;
};

// The table of a family whose kernels are K::encode<T, O>, K::decode<T>,
// K::mx_quantize<M> and K::mx_dequantize<M>.
template <class K, size_t... T, size_t... M>
constexpr LowpKernels make_lowp_kernels(std::index_sequence<T...>, std::index_sequence<M...>) {
  LowpKernels k{};
  ((k.convert.encode[T][0] = &K::template encode<static_cast<LowpType>(T), Overflow::Default>,
    k.convert.encode[T][1] = &K::template encode<static_cast<LowpType>(T), Overflow::Saturate>,
    k.convert.decode[T] = &K::template decode<static_cast<LowpType>(T)>),
   ...);
  ((k.mx.quantize[M] = &K::template mx_quantize<static_cast<MxType>(M)>,
    k.mx.dequantize[M] = &K::template mx_dequantize<static_cast<MxType>(M)>),
   ...);
  return k;
}
template <class K>
constexpr LowpKernels make_lowp_kernels() {
  return make_lowp_kernels<K>(std::make_index_sequence<kLowpTypeCount>{}, std::make_index_sequence<kMxTypeCount>{});
}

// Each family's table, defined in its own file with FIXQ_KERNEL_TABLE (src/cpu/registry.h).
FIXQ_DECLARE_KERNEL_TABLES(LowpKernels, kLowp)

// The tables of the families that bring kernels (registry.cpp).
cpu_detail::KernelRegistry<LowpKernels>& registry();
// This module's rows of fixq::active_kernels(): the kernel each operation runs now, picked
// as the operations pick it (registry.cpp).
std::vector<KernelChoice> report_kernels();


}  // namespace fixq::lowp_detail
