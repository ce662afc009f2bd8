// The scalar reference kernels: loops over the element and block definitions.
#include <utility>

#include "lowp/kernels.h"
#include "lowp/mx_block.h"

namespace fixq::lowp_detail {

namespace {

template <LowpType T, Overflow O>
int64_t encode(const float* x, int64_t n, void* codes) {
  return encode_run<T, O>(x, n, static_cast<CodeOf<T>*>(codes));
}

template <LowpType T>
int64_t decode(const void* codes, int64_t n, float* x) {
  return decode_run<T>(static_cast<const CodeOf<T>*>(codes), n, x);
}

template <MxType M>
void mx_quantize(const float* x, int64_t blocks, uint8_t* out) {
  for (int64_t b = 0; b < blocks; ++b) mx_quantize_block<M>(x + b * kMxBlockSize, out + b * MxTraits<M>::block_bytes);
}

template <MxType M>
void mx_dequantize(const uint8_t* in, int64_t blocks, float* x) {
  for (int64_t b = 0; b < blocks; ++b) mx_dequantize_block<M>(in + b * MxTraits<M>::block_bytes, x + b * kMxBlockSize);
}

template <size_t... I>
constexpr ConvertKernels make_convert(std::index_sequence<I...>) {
  ConvertKernels k{};
  ((k.encode[I][0] = encode<static_cast<LowpType>(I), Overflow::Default>,
    k.encode[I][1] = encode<static_cast<LowpType>(I), Overflow::Saturate>,
    k.decode[I] = decode<static_cast<LowpType>(I)>),
   ...);
  return k;
}

template <size_t... I>
constexpr MxKernels make_mx(std::index_sequence<I...>) {
  MxKernels k{};
  ((k.quantize[I] = mx_quantize<static_cast<MxType>(I)>, k.dequantize[I] = mx_dequantize<static_cast<MxType>(I)>),
   ...);
  return k;
}

}  // namespace

namespace scalar {
extern const LowpKernels kLowp;
const LowpKernels kLowp{make_convert(std::make_index_sequence<kLowpTypeCount>{}),
                        make_mx(std::make_index_sequence<kMxTypeCount>{})};
}  // namespace scalar

}  // namespace fixq::lowp_detail
