// The checked runtime calls of runtime.h.
#include "cuda/runtime.h"

#include <cstdio>
#include <utility>

namespace fixq::cuda::detail {

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  const std::string message = fixq::detail::cat(what, ": ", cudaGetErrorName(e), ": ", cudaGetErrorString(e));
  cudaGetLastError();  // clear a non-sticky error so that the next call starts clean
  if (e == cudaErrorMemoryAllocation) throw OutOfMemory("out of GPU memory: " + message);
  throw DeviceError(message);
}

std::string mebibytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

DeviceScope::DeviceScope(int device) {
  check(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ != device) check(cudaSetDevice(device), fixq::detail::cat("cudaSetDevice(", device, ")"));
}

DeviceScope::~DeviceScope() {
  int now = -1;
  if (cudaGetDevice(&now) == cudaSuccess && now != previous_) cudaSetDevice(previous_);
}

DeviceBuffer::DeviceBuffer(int64_t bytes, const std::string& what) {
  if (bytes <= 0) return;
  const cudaError_t e = cudaMalloc(&ptr_, static_cast<size_t>(bytes));
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    size_t free = 0, total = 0;
    cudaMemGetInfo(&free, &total);
    ptr_ = nullptr;
    throw OutOfMemory(fixq::detail::cat("out of GPU memory: ", what, " needs ", mebibytes(bytes), "; ",
                                  mebibytes(static_cast<int64_t>(free)), " of ", mebibytes(static_cast<int64_t>(total)),
                                  " are free"));
  }
  check(e, "cudaMalloc for " + what);
  bytes_ = bytes;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

void copy_to_device(void* dst, const void* src, int64_t bytes, Stream stream, const char* what) {
  if (bytes <= 0) return;
  check(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyHostToDevice, stream),
        fixq::detail::cat("copying ", what, " to the GPU"));
}

void copy_to_host(void* dst, const void* src, int64_t bytes, Stream stream, const char* what) {
  if (bytes <= 0) return;
  check(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToHost, stream),
        fixq::detail::cat("copying ", what, " from the GPU"));
}

void synchronize(Stream stream, const char* what) { check(cudaStreamSynchronize(stream), what); }

void check_launch(const char* kernel) { check(cudaGetLastError(), fixq::detail::cat("launching ", kernel)); }

CooperativeLaunch cooperative_launch_outcome(cudaError_t e, const char* what) {
  if (e == cudaErrorCooperativeLaunchTooLarge) {
    cudaGetLastError();  // not sticky: cleared, the next launch starts clean
    return CooperativeLaunch::Refused;
  }
  check(e, what);
  return CooperativeLaunch::Launched;
}

}  // namespace fixq::cuda::detail
