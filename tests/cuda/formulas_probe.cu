// The formula headers compiled as CUDA device code: the probe of formulas_probe.h in a
// __global__ kernel. Built by tests/cuda/nvcc_compile_test.sh, not run (no GPU needed):
// it proves that the headers a GPU backend shares with the CPU compile for the device.
#include "cuda/formulas_probe.h"

__global__ void fixq_formulas_probe(uint64_t first, int count, fixq::probe::Tables tables, int64_t* out) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) fixq::probe::run_case(first + static_cast<uint64_t>(i), tables, out + int64_t{i} * fixq::probe::kOutputs);
}
