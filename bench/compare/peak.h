// Private to fixq_compare: instruction throughput microbenchmarks, as the ceiling kernels are
// compared with. Each returns integer operations per second (a multiply-add counts 2).
#pragma once

namespace fixq::bench {

// vpmaddwd ymm (AVX2): 16 int16 products summed in pairs per instruction.
double vpmaddwd_peak_ops();
// vpdpbusd zmm (AVX-512 VNNI): 64 u8*s8 products summed in fours per instruction.
double vpdpbusd_peak_ops();
// vdpbf16ps zmm (AVX512_BF16): 32 bf16 products summed in pairs per instruction (flops).
double vdpbf16ps_peak_flops();

}  // namespace fixq::bench
