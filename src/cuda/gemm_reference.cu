// The plain GEMM kernel: one thread per output, the sum over k in int64, then the epilogue.
// The GPU reference the tensor-core kernel is tested against, and the kernel of products
// with a 16-bit operand (the GRU's 16-bit inputs and weights).
#include <cuda_runtime.h>

#include "cuda/gemm_args.h"
#include "cuda/gemm_epilogue.cuh"
#include "cuda/runtime.h"

namespace fixq::cuda::detail {

namespace {

template <class A, class B, EpilogueKind kKind>
__global__ void gemm_reference_kernel(GemmArgs g) {
  const auto* a = static_cast<const A*>(g.a);
  const auto* b = static_cast<const B*>(g.b);
  const int64_t total = g.m * g.n;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t row = i / g.n, col = i % g.n;
    const A* ar = a + row * g.lda;
    const B* br = b + col * g.ldb;
    int64_t acc = 0;
    for (int64_t k = 0; k < g.k; ++k) acc += int64_t{ar[k]} * int64_t{br[k]};
    epilogue_store<kKind>(g.e, row, col, acc);
  }
}

template <class A, class B>
void launch_typed(const GemmArgs& g, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const int64_t blocks = (g.m * g.n + kThreads - 1) / kThreads;
  const auto grid = static_cast<unsigned>(blocks < 65535 * 16 ? blocks : 65535 * 16);
  switch (g.e.kind) {
    case EpilogueKind::S32: gemm_reference_kernel<A, B, EpilogueKind::S32><<<grid, kThreads, 0, stream>>>(g); break;
    case EpilogueKind::F32: gemm_reference_kernel<A, B, EpilogueKind::F32><<<grid, kThreads, 0, stream>>>(g); break;
    case EpilogueKind::Requant:
      gemm_reference_kernel<A, B, EpilogueKind::Requant><<<grid, kThreads, 0, stream>>>(g);
      break;
  }
  check_launch("gemm_reference_kernel");
}

template <class A>
void launch_a(const GemmArgs& g, cudaStream_t stream) {
  if (g.b_type == IntType::S16) launch_typed<A, int16_t>(g, stream);
  else launch_typed<A, int8_t>(g, stream);
}

}  // namespace

void launch_gemm_reference(const GemmArgs& g, Stream stream) {
  if (g.m <= 0 || g.n <= 0) return;
  switch (g.a_type) {
    case IntType::U8: launch_a<uint8_t>(g, stream); break;
    case IntType::S8: launch_a<int8_t>(g, stream); break;
    case IntType::S16: launch_a<int16_t>(g, stream); break;
  }
}

}  // namespace fixq::cuda::detail
