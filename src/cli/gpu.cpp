// The CLI's calls into the GPU part, or, in a build without it, the one-line error that
// says so (FIXQ_WITH_CUDA: src/cli/CMakeLists.txt).
#include "cli/gpu.h"

#include <cstdio>

#include "fixq/error.h"

#if FIXQ_WITH_CUDA
#include "cuda/bench_cuda.h"
#include "fixq/cuda.h"
#endif

namespace fixq::cli {

namespace {

[[maybe_unused]] constexpr const char* kNotBuilt =
    "this fixq was built without its CUDA part (FIXQ_CUDA=OFF, or no CUDA toolkit when it was configured); rebuild "
    "where nvcc is installed to use --device cuda";

// The GPU part runs the reset-after cell only: a reset-before model is refused here, where
// it enters that path, before any upload (src/cuda reads the plans as reset-after ones).
void require_gpu_cell(const QuantizedGru& model) {
  if (model.cell_kind() != GruCellKind::ResetAfter)
    fail("--device cuda runs the reset_after GRU cell only (torch.nn.GRU, ONNX linear_before_reset = 1); this model's "
         "cell is ", to_string(model.cell_kind()), ": run it with --device cpu");
}

}  // namespace

#if FIXQ_WITH_CUDA

GruOutput gru_forward_cuda(const QuantizedGru& model, const float* x, const Shape& x_shape, const GruRunOptions& options,
                           std::string* device) {
  require_gpu_cell(model);
  const cuda::GpuGru gpu(model);
  *device = gpu.device().name;
  return gpu.forward(x, x_shape, options);
}

void print_cuda_info() {
  const std::string why = cuda::unavailable_reason();
  const std::vector<cuda::DeviceInfo> all = cuda::devices();
  if (all.empty()) {
    std::printf("%-12s unavailable: %s\n", "cuda", why.c_str());
    return;
  }
  for (const cuda::DeviceInfo& d : all)
    std::printf("%-12s GPU %d: %s (compute capability %d.%d, %d multiprocessors, %.1f GiB, driver %d.%d, runtime %d.%d)\n",
                "cuda", d.index, d.name.c_str(), d.major, d.minor, d.multiprocessors,
                static_cast<double>(d.memory_bytes) / (1 << 30), d.driver_version / 1000, d.driver_version % 1000 / 10,
                d.runtime_version / 1000, d.runtime_version % 1000 / 10);
  if (!why.empty()) {
    std::printf("%-12s unusable: %s\n", "cuda", why.c_str());
    return;
  }
  std::printf("\nGPU kernels in use (GPU 0):\n");
  for (const KernelChoice& k : cuda::kernel_table(all[0])) std::printf("  %-28s %s\n", k.operation.c_str(), k.kernel.c_str());
}

void bench_gru_cuda(bool quick, const std::string& hidden, const std::string& batch, const std::string& steps) {
  bench::bench_gru_cuda({quick, hidden, batch, steps});
}

void bench_gemm_cuda(bool quick) { bench::bench_gemm_cuda({quick}); }

#else

GruOutput gru_forward_cuda(const QuantizedGru& model, const float*, const Shape&, const GruRunOptions&, std::string*) {
  require_gpu_cell(model);
  fail(kNotBuilt);
}

void print_cuda_info() { std::printf("%-12s not built (FIXQ_CUDA=OFF, or no CUDA toolkit when configured)\n", "cuda"); }

void bench_gru_cuda(bool, const std::string&, const std::string&, const std::string&) { fail(kNotBuilt); }

void bench_gemm_cuda(bool) { fail(kNotBuilt); }

#endif

}  // namespace fixq::cli
