// Private to fixq_compare: instruction throughput and L2 bandwidth microbenchmarks, the
// ceilings kernels are compared with. The peaks return operations per second (a
// multiply-add counts 2).
#pragma once

#include <cstddef>
#include <cstdint>

namespace fixq::bench {

// vpmaddwd ymm (AVX2): 16 int16 products summed in pairs per instruction.
double vpmaddwd_peak_ops();
// vpdpbusd zmm (AVX-512 VNNI): 64 u8*s8 products summed in fours per instruction, over
// `iterations` loops of 12 (the default: one run of ~0.1 s).
double vpdpbusd_peak_ops(long iterations = 20'000'000);
// vdpbf16ps zmm (AVX512_BF16): 32 bf16 products summed in pairs per instruction (flops).
double vdpbf16ps_peak_flops();

// `passes` passes over buf[0, bytes) (bytes a multiple of 512, buf 64-byte aligned), its
// int8 summed with wrap-around into eight independent zmm accumulators, the checksum
// returned so that no load can be dropped: the read side of a weight stream.
int64_t sum_bytes_avx512(const int8_t* buf, size_t bytes, long passes);

// The L2 read bandwidth of the calling core: sum_bytes_avx512 over a buffer of half its L2
// (which stays there after the first pass), in samples of many passes; the median sample's
// bytes per second. The CPU must have AVX-512 (the only user, the bound of a vpdpbusd
// step, needs it anyway).
struct L2Bandwidth {
  double bytes_per_s = 0;
  size_t buffer_bytes = 0;
  size_t l2_bytes = 0;       // this core's L2, as the OS reports it (sysconf)
  bool l2_reported = false;  // false: the OS did not say, and 2 MiB was assumed
  int samples = 0;           // timed samples, each of `passes` passes
  int passes = 0;
};
L2Bandwidth l2_read_bandwidth();

}  // namespace fixq::bench
