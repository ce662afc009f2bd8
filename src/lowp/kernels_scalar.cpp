// The scalar reference kernels: loops over the element and block definitions.
#include "lowp/kernels.h"
#include "lowp/mx_block.h"

namespace fixq::lowp_detail::scalar {

namespace {

// One element, one block at a time: the definition.
struct ElementKernels {
  template <LowpType T, Overflow O>
  static int64_t encode(const float* x, int64_t n, void* codes) {
    return encode_run<T, O>(x, n, static_cast<CodeOf<T>*>(codes));
  }
  template <LowpType T>
  static int64_t decode(const void* codes, int64_t n, float* x) {
    return decode_run<T>(static_cast<const CodeOf<T>*>(codes), n, x);
  }
  template <MxType M>
  static void mx_quantize(const float* x, int64_t blocks, uint8_t* out) {
    for (int64_t b = 0; b < blocks; ++b) mx_quantize_block<M>(x + b * kMxBlockSize, out + b * MxTraits<M>::block_bytes);
  }
  template <MxType M>
  static void mx_dequantize(const uint8_t* in, int64_t blocks, float* x) {
    for (int64_t b = 0; b < blocks; ++b) mx_dequantize_block<M>(in + b * MxTraits<M>::block_bytes, x + b * kMxBlockSize);
  }
};

}  // namespace

FIXQ_KERNEL_TABLE(LowpKernels, kLowp, Isa::Scalar){make_lowp_kernels<ElementKernels>()};

}  // namespace fixq::lowp_detail::scalar
