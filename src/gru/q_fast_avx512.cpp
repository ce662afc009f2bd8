// The AVX-512 family's fast GRU step (q_fast_avx512_step.h): activation tables read with
// vpgatherdd.
#include "gru/q_fast_avx512_step.h"

namespace fixq::gru_detail::FIXQ_KERNEL_NS(avx512) {

namespace {
constexpr GruLaneKernels kLanesTable{"avx512, 16 int32 lanes", kLanes, sizeof(State), prepare,
                                     requant_wx<int32_t>,    requant_wx<int64_t>, step<int32_t>, step<int64_t>};
}  // namespace

extern const GruKernels kGru;
const GruKernels kGru{&kLanesTable};

}  // namespace fixq::gru_detail::FIXQ_KERNEL_NS(avx512)
