// Private: the CUDA runtime calls of the module, each checked, and device memory owned by
// RAII. Host code (compiled by the C++ compiler against the toolkit's headers).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "fixq/cuda.h"

namespace fixq::cuda::detail {

// Throws DeviceError "<what>: <error name>: <description>" unless e is cudaSuccess;
// OutOfMemory for cudaErrorMemoryAllocation.
void check(cudaError_t e, const char* what);
inline void check(cudaError_t e, const std::string& what) { check(e, what.c_str()); }

// "12.5 MiB": sizes in messages.
std::string mebibytes(int64_t bytes);

// Makes `device` current for the scope, restoring the previous device after it.
class DeviceScope {
 public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
};

// Device memory of the current device, owned; 0 bytes allocates nothing.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Throws OutOfMemory "out of GPU memory: <what> needs N MiB; F MiB of T MiB are free".
  DeviceBuffer(int64_t bytes, const std::string& what);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  int64_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  int64_t bytes_ = 0;
};

// Copies between host and device memory on `stream`, checked (what names the data).
void copy_to_device(void* dst, const void* src, int64_t bytes, Stream stream, const char* what);
void copy_to_host(void* dst, const void* src, int64_t bytes, Stream stream, const char* what);
// Waits for the stream; an asynchronous kernel failure surfaces here as a DeviceError.
void synchronize(Stream stream, const char* what);
// The launch just made succeeded (a bad configuration is reported at once).
void check_launch(const char* kernel);

// What became of a cooperative launch (cudaLaunchCooperativeKernel's result e): Launched;
// Refused where the driver cannot make the whole grid resident at that moment
// (cudaErrorCooperativeLaunchTooLarge: under compute-sanitizer, MPS or beside another
// context fewer blocks fit than the occupancy query promised), the error then cleared so
// that the caller can take another form; any other error throws DeviceError naming `what`.
enum class CooperativeLaunch { Launched, Refused };
CooperativeLaunch cooperative_launch_outcome(cudaError_t e, const char* what);

}  // namespace fixq::cuda::detail
