// The formula headers compiled as CUDA device code: the probe of formulas_probe.h in a
// __global__ kernel. Built by tests/cuda/nvcc_compile_test.sh (no GPU needed): it proves
// that the headers a GPU backend shares with the CPU compile for the device; where the CUDA
// part is built, test_cuda also runs it on a GPU against the host.
#include "cuda/formulas_probe.h"

__global__ void fixq_formulas_probe(uint64_t first, int count, fixq::probe::Tables tables, int64_t* out) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) fixq::probe::run_case(first + static_cast<uint64_t>(i), tables, out + int64_t{i} * fixq::probe::kOutputs);
}

// Cases [first, first + count) on the current device, out in device memory
// (tests/cuda/formulas_probe_gpu_test.cpp runs it against the host's run_case).
void fixq_launch_formulas_probe(uint64_t first, int count, const fixq::probe::Tables& tables, int64_t* out) {
  fixq_formulas_probe<<<(count + 127) / 128, 128>>>(first, count, tables, out);
}
