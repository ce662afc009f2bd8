// The GPUs this process can see, and why one cannot run fixq's kernels.
#include <cuda_runtime_api.h>

#include "cuda/runtime.h"
#include "fixq/cuda.h"

namespace fixq::cuda {

namespace {

// fixq's kernels are built for sm_80, sm_90 and compute_80 PTX (tensor-core mma.sync with
// 8-bit operands, cp.async): compute capability 8.0 is the oldest that runs them.
constexpr int kMinMajor = 8;

// The device count, or the reason there is none.
int device_count(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaSuccess && n > 0) return n;
  cudaGetLastError();
  if (e == cudaErrorInsufficientDriver)
    *why = fixq::detail::cat("no usable CUDA driver (", cudaGetErrorName(e), ": ", cudaGetErrorString(e),
                             "); fixq's kernels need an NVIDIA driver for CUDA ", CUDART_VERSION / 1000, ".",
                             CUDART_VERSION % 1000 / 10, " or newer");
  else if (e == cudaErrorNoDevice || e == cudaSuccess)
    *why = "no CUDA device: the driver lists none";
  else
    *why = fixq::detail::cat("the CUDA runtime cannot list devices (", cudaGetErrorName(e), ": ", cudaGetErrorString(e),
                             ")");
  return 0;
}

DeviceInfo describe(int index) {
  cudaDeviceProp p{};
  detail::check(cudaGetDeviceProperties(&p, index), fixq::detail::cat("cudaGetDeviceProperties(", index, ")"));
  DeviceInfo d;
  d.index = index;
  d.name = p.name;
  d.major = p.major;
  d.minor = p.minor;
  d.multiprocessors = p.multiProcessorCount;
  d.memory_bytes = static_cast<int64_t>(p.totalGlobalMem);
  d.shared_memory_per_block = static_cast<int64_t>(p.sharedMemPerBlockOptin);
  d.cooperative_launch = p.cooperativeLaunch != 0;
  cudaDriverGetVersion(&d.driver_version);
  cudaRuntimeGetVersion(&d.runtime_version);
  return d;
}

std::string too_old(const DeviceInfo& d) {
  if (d.major >= kMinMajor) return "";
  return fixq::detail::cat("GPU ", d.index, " (", d.name, ") has compute capability ", d.major, ".", d.minor,
                           "; fixq's kernels need ", kMinMajor, ".0 or newer (A100, H100 and later)");
}

}  // namespace

std::string unavailable_reason() {
  std::string why;
  if (device_count(&why) == 0) return why;
  return too_old(describe(0));
}

std::vector<DeviceInfo> devices() {
  std::string why;
  std::vector<DeviceInfo> out;
  for (int i = 0, n = device_count(&why); i < n; ++i) out.push_back(describe(i));
  return out;
}

DeviceInfo usable_device(int index) {
  std::string why;
  const int n = device_count(&why);
  if (n == 0) throw DeviceError(why);
  if (index < 0 || index >= n)
    throw DeviceError(fixq::detail::cat("no CUDA device ", index, ": this machine has ", n, " (0 to ", n - 1, ")"));
  DeviceInfo d = describe(index);
  if (const std::string old = too_old(d); !old.empty()) throw DeviceError(old);
  return d;
}

}  // namespace fixq::cuda
