// Private to the CLI: what the commands ask of the GPU part (fixq/cuda.h), which a build
// may lack (FIXQ_CUDA=OFF, or no CUDA toolkit): there each of these says so, one line.
#pragma once

#include <string>

#include "fixq/gru.h"
#include "fixq/qgru.h"

namespace fixq::cli {

// QuantizedGru::forward on GPU 0 (bit for bit the CPU's). *device gets "<GPU name>" for the
// report line. Throws fixq::Error without the CUDA part or a usable GPU, before any output.
GruOutput gru_forward_cuda(const QuantizedGru& model, const float* x, const Shape& x_shape, const GruRunOptions& options,
                           std::string* device);

// `fixq info`'s lines on the GPU part: not built, no usable GPU (and why), or each GPU and
// the kernels fixq runs on it.
void print_cuda_info();

// `fixq bench gru|gemm --device cuda` (bench/cuda/); lists as typed on the command line.
void bench_gru_cuda(bool quick, const std::string& hidden, const std::string& batch, const std::string& steps);
void bench_gemm_cuda(bool quick);

}  // namespace fixq::cli
