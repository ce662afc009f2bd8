// The AVX512_VBMI family's fast GRU step (gru/int/fast/step.h): the direct activation
// tables of 8-bit operators (256 entries of one byte each) sit in four registers and are
// read with vpermi2b, without vpgatherdd's per-element loads; other tables are gathered.
// Cells whose every intermediate fits int16 run on 32 int16 lanes (gru/int/fast/lanes16_avx512.h).
#include "gru/int/fast/lanes16_avx512.h"

namespace fixq::gru_detail::FIXQ_KERNEL_NS(avx512vbmi) {

namespace {
constexpr GruLaneKernels kLanesTable{"avx512vbmi, 16 int32 or 32 int16 lanes, vpermi2b byte tables",
                                     L16::kLanes,
                                     sizeof(State16),
                                     prepare16,
                                     requant_wx16<int32_t>,
                                     requant_wx16<int64_t>,
                                     step16<int32_t>,
                                     step16<int64_t>};
}  // namespace

FIXQ_KERNEL_TABLE(GruKernels, kGru, Isa::Avx512Vbmi){&kLanesTable};

}  // namespace fixq::gru_detail::FIXQ_KERNEL_NS(avx512vbmi)
