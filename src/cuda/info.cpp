// kernel_table: what `fixq info` says of a GPU, from the same plans the kernels follow.
#include "cuda/gemm_args.h"
#include "cuda/recurrence_plan.h"
#include "fixq/cuda.h"

namespace fixq::cuda {

namespace {

// The largest hidden size (a multiple of 64, up to 16384) whose recurrence at batch 1 takes
// the persistent form on d, with R and h of `bytes` bytes a value; 0 if none.
int64_t largest_persistent(const DeviceInfo& d, int bytes) {
  const detail::DeviceLimits limits{d.multiprocessors, d.shared_memory_per_block, d.cooperative_launch};
  int64_t best = 0;
  for (int64_t H = 64; H <= 16384; H += 64) {
    const detail::RecurrenceShape s{H, 1, bytes, bytes, detail::padded_b_stride(H), bytes == 1};
    if (detail::plan_recurrence(s, limits, true).layout.persistent) best = H;
  }
  return best;
}

}  // namespace

std::vector<KernelChoice> kernel_table(const DeviceInfo& d) {
  const std::string tiles = "16x16, 64x32 or 128x128 output tiles by M; k in 64-byte tiles through a cp.async ring";
  std::vector<KernelChoice> rows;
  rows.push_back({"cuda gemm u8/s8 x s8", "tensor cores: mma.sync m16n8k32, int32 sums, epilogue fused (" + tiles + ")"});
  rows.push_back({"cuda gemm reference", "one thread per output, int64 sums (the GPU reference; int32 overflow risk)"});
  rows.push_back({"cuda gru input projection",
                  "the tensor-core GEMM with the requantization fused (8-bit W; a 16-bit x as its two bytes), "
                  "else the plain kernel"});
  rows.push_back({"cuda gru recurrence",
                  fixq::detail::cat("persistent kernel with R in shared memory and a grid barrier per step up to H = ",
                                    largest_persistent(d, 1), " (8-bit) / ", largest_persistent(d, 2),
                                    " (16-bit) at batch 1; beyond, per-step kernels replayed as a CUDA graph")});
  rows.push_back({"cuda gru unit update", "the CPU's unit_update<D> in its exact int64 domain (gru/int/unit_constants.h)"});
  return rows;
}

}  // namespace fixq::cuda
