// The GPU reference of the GRU's time loop, the CPU's reference loop (gru/int/step_intonly.cpp)
// step for step: the recurrent product by the plain GEMM kernel (gemm_reference.cu, called
// from the host), then this pointwise kernel: the unit update of every real (b, j), which
// writes y and the state in place (each thread reads only its own unit's old state, and the
// product that read every unit's ran before it).
#include <cuda_runtime.h>

#include "cuda/gemm_epilogue.cuh"
#include "cuda/gru_kernels.h"
#include "cuda/runtime.h"
#include "gru/int/unit_constants.h"

namespace fixq::cuda::detail {

namespace {

__global__ void reference_update_kernel(const __grid_constant__ RecurrenceArgs a, int64_t step) {
  const DeviceCell& c = a.cell;
  const int64_t H = c.hidden_size, H3 = 3 * H, hs = state_stride(H);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < a.batch * H; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t b = i / H, j = i % H;
    const int64_t len = a.lengths != nullptr ? a.lengths[b] : a.T;
    if (step >= len) continue;  // padding: not computed, state and output untouched
    const int64_t t = a.reverse ? len - 1 - step : step;
    const int64_t wx = (t * a.batch + b) * H3, rh = b * H3;
    const IntType wt = c.wx.storage, rt = c.rh.storage;
    const int32_t h = gru_detail::update_unit_exact(c.unit, j, load_int(a.wx, wt, wx + j), load_int(a.wx, wt, wx + H + j),
                                                    load_int(a.wx, wt, wx + 2 * H + j), load_int(a.rh, rt, rh + j),
                                                    load_int(a.rh, rt, rh + H + j), load_int(a.rh, rt, rh + 2 * H + j),
                                                    load_int(a.h[0], c.h.storage, b * hs + j));
    store_int(a.y, c.h.storage, (t * a.batch + b) * H + j, h);
    store_int(a.h[0], c.h.storage, b * hs + j, h);
  }
}

}  // namespace

void launch_reference_update(const RecurrenceArgs& a, int64_t step, Stream stream) {
  const int64_t n = a.batch * a.cell.hidden_size;
  if (n == 0) return;
  constexpr int kThreads = 256;
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  reference_update_kernel<<<static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8), kThreads, 0, stream>>>(a, step);
  check_launch("reference_update_kernel");
}

}  // namespace fixq::cuda::detail
