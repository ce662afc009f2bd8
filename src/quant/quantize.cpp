// quantize / dequantize front ends: validate once, then hand contiguous runs to the
// kernels of the active instruction set (src/quant/kernels_*.cpp).
#include <limits>

#include "fixq/cpu.h"
#include "fixq/error.h"
#include "fixq/quant.h"
#include "quant/kernels.h"
#include "quant/runs.h"

namespace fixq {

namespace {

template <class Q>
void check_storage(const QuantParams& p, const Shape& shape) {
  p.validate();
  const IntFormat f = p.scheme.format;
  require(f.qmin() >= std::numeric_limits<Q>::min() && f.qmax() <= std::numeric_limits<Q>::max(),
          "a ", f.name(), " tensor does not fit in a ", sizeof(Q) * 8, "-bit ",
          std::numeric_limits<Q>::is_signed ? "signed" : "unsigned", " array");
  const Shape expected = p.scheme.param_shape(shape);
  if (expected != p.shape)
    fail("parameters of shape ", shape_str(p.shape), " do not fit a ", to_string(p.scheme.granularity),
         " tensor of shape ", shape_str(shape), " (needs ", shape_str(expected), ")");
}

}  // namespace

namespace {

// The kernel of every run of the tensor (for_each_run): per_channel where each element has
// its own parameters, else per_tensor; bad(i) for the first element a kernel reports.
template <class In, class Out, class PerTensor, class PerChannel, class Bad>
void run_kernels(const QuantParams& params, const Shape& shape, const In* in, Out* out, PerTensor per_tensor,
                 PerChannel per_channel, Bad bad) {
  const int32_t qmin = params.scheme.format.qmin(), qmax = params.scheme.format.qmax();
  quant_detail::for_each_run(params.scheme, shape, [&](int64_t off, int64_t len, int64_t poff, bool per_elem) {
    const int64_t i = per_elem ? per_channel(in + off, len, params.scale.data() + poff, params.zero_point.data() + poff,
                                             qmin, qmax, out + off)
                               : per_tensor(in + off, len, params.scale[poff], params.zero_point[poff], qmin, qmax, out + off);
    if (i >= 0) bad(off + i);
  });
}

}  // namespace

template <class Q>
void quantize(const float* x, const Shape& shape, const QuantParams& params, Q* out, NanPolicy nan) {
  check_storage<Q>(params, shape);
  require(x != nullptr && out != nullptr, "quantize: null data pointer");
  const auto k = quant_detail::active_kernels<Q>();
  run_kernels(params, shape, x, out, k.quantize, k.quantize_pc, [&](int64_t i) {
    if (nan == NanPolicy::Error)
      fail("element ", i, " of the tensor to quantize is NaN (pass NanPolicy::ToZeroPoint to map NaN to the zero point)");
  });
}

template <class Q>
void dequantize(const Q* q, const Shape& shape, const QuantParams& params, float* out) {
  check_storage<Q>(params, shape);
  require(q != nullptr && out != nullptr, "dequantize: null data pointer");
  const auto k = quant_detail::active_kernels<Q>();
  run_kernels(params, shape, q, out, k.dequantize, k.dequantize_pc, [&](int64_t i) {
    fail("element ", i, " = ", int64_t{q[i]}, " is outside the ", params.scheme.format.name(), " range [",
         params.scheme.format.qmin(), ", ", params.scheme.format.qmax(), "]");
  });
}

int32_t quantize_value(float x, float scale, int32_t zero_point, IntRange range) {
  return quant_detail::quantize_element(x, scale, zero_point, range.qmin, range.qmax);
}

#define FIXQ_INSTANTIATE(Q)                                                                     \
  template void quantize<Q>(const float*, const Shape&, const QuantParams&, Q*, NanPolicy);  \
  template void dequantize<Q>(const Q*, const Shape&, const QuantParams&, float*);
FIXQ_INSTANTIATE(int8_t)
FIXQ_INSTANTIATE(uint8_t)
FIXQ_INSTANTIATE(int16_t)
FIXQ_INSTANTIATE(uint16_t)
FIXQ_INSTANTIATE(int32_t)
#undef FIXQ_INSTANTIATE

}  // namespace fixq
