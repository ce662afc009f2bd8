// fixq/cuda.h — fixq on NVIDIA GPUs: the integer GRU and the integer GEMM with its
// epilogues, with the CPU's results bit for bit.
//
// The optional CUDA part of the build (FIXQ_CUDA = AUTO / ON / OFF, cmake/FixqCuda.cmake)
// builds this module as the library fixq_cuda (CMake target fixq::cuda) for sm_90 (H100,
// H200), sm_80 (A100) and compute_80 PTX, which newer GPUs compile when they load it.
//
// Why the bits agree: the device kernels evaluate the formula headers the CPU evaluates
// (fixq/host_device.h: the fixed-point scales of fixq/arith.h, the GRU's one unit update and
// table lookup, the GEMM epilogues), over the same integer weights and constants. Integer
// sums are exact in any order, so any partition of a product across threads gives the CPU's
// accumulators; the float epilogues round each operation once, in the CPU's order, with no
// contraction into fused multiply-adds (__fmul_rn / __fadd_rn, and --fmad=false on the module).
//
// Errors: bad input is a fixq::Error naming what is wrong, checked before the device is
// touched; a machine without a usable GPU (no driver, no device, a device older than sm_80)
// is a cuda::DeviceError naming why; device memory running out is a cuda::OutOfMemory that
// says how much was asked and how much was free. A failed call leaves the caller's output
// buffers unspecified but never writes outside them.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fixq/cpu.h"
#include "fixq/error.h"
#include "fixq/gemm.h"
#include "fixq/gru.h"
#include "fixq/qgru.h"

// cudaStream_t without the CUDA headers: cuda_runtime_api.h declares the same type.
struct CUstream_st;

namespace fixq::cuda {

// A CUDA stream (cudaStream_t); nullptr is the legacy default stream.
using Stream = CUstream_st*;

// The GPU, or the CUDA runtime, failed or is missing (not the input's fault).
class DeviceError : public Error {
 public:
  using Error::Error;
};

// Device memory ran out; the message names the request, its size and the free memory.
class OutOfMemory : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

// ---------------------------------------------------------------------------------------
// Devices
// ---------------------------------------------------------------------------------------

struct DeviceInfo {
  int index = 0;
  std::string name;
  int major = 0, minor = 0;             // compute capability
  int multiprocessors = 0;
  int64_t memory_bytes = 0;
  int64_t shared_memory_per_block = 0;  // the opt-in maximum of one thread block
  bool cooperative_launch = false;      // grid-wide barriers (the persistent GRU kernel)
  int driver_version = 0, runtime_version = 0;  // 13000 = CUDA 13.0
};

// Why this process cannot run fixq's kernels on any GPU ("no CUDA driver ...", "no CUDA
// device ...", "... has compute capability 7.5; fixq's kernels need 8.0 or newer"), or the
// empty string when device 0 can.
std::string unavailable_reason();
// Every device the driver lists, usable or not (empty without a driver or device).
std::vector<DeviceInfo> devices();
// Device `index`, checked: throws DeviceError naming why it cannot run fixq's kernels.
DeviceInfo usable_device(int index = 0);

// What `fixq info` prints: each GPU operation and the kernel that runs it on `device`
// (KernelChoice::family is Isa::Scalar: the CPU's families do not apply).
std::vector<KernelChoice> kernel_table(const DeviceInfo& device);

// ---------------------------------------------------------------------------------------
// GEMM with epilogues (fixq/gemm.h's contract): A u8 or s8 [M, K] x B s8 [N, K] -> s32
// ---------------------------------------------------------------------------------------

// Which kernel a product runs: Auto picks the tensor-core kernel (int32 sums) unless the
// weights' bound says its sums could overflow (fixq/gemm.h: max|A| * max_n sum_k |B[n, k]|
// >= 2^31, K beyond 65793 for u8 A), and then the Reference kernel: one thread per output,
// int64 sums, which the tests also hold the fast one to. TensorCore insists (and throws
// where the sums could overflow).
enum class GemmKernel { Auto, Reference, TensorCore };

struct GemmOptions {
  Stream stream = nullptr;
  GemmKernel kernel = GemmKernel::Auto;
};

// Weights B [N, K], s8, copied to device memory once with their column sums (the
// zero-point compensation of fixq/gemm.h, computed by PackedB as on the CPU). Copies share
// the device memory; it is freed with the last copy.
class DeviceWeights {
 public:
  // b in host memory. Throws fixq::Error for what PackedB::pack rejects and for a type other
  // than S8; DeviceError / OutOfMemory for the device.
  static DeviceWeights upload(const MatrixView& b, int device = 0);

  int64_t n() const;
  int64_t k() const;
  int device() const;
  struct Storage;  // private to the module
  const Storage& storage() const { return *storage_; }

 private:
  std::shared_ptr<const Storage> storage_;
};

// The epilogues' per-row and per-column constants in device memory, checked once on upload
// as gemm_f32 / gemm_requant check them on the CPU (sizes against b; scales finite and
// positive; the clamp inside the output type). scale_a and azp may have 1 entry or one per
// row: the row count is checked against each product's M.
class DeviceDequantEpilogue {
 public:
  static DeviceDequantEpilogue upload(const DequantEpilogue& e, const DeviceWeights& b);
  struct Storage;
  const Storage& storage() const { return *storage_; }

 private:
  std::shared_ptr<const Storage> storage_;
};

class DeviceRequantEpilogue {
 public:
  static DeviceRequantEpilogue upload(const RequantEpilogue& e, const DeviceWeights& b);
  struct Storage;
  const Storage& storage() const { return *storage_; }

 private:
  std::shared_ptr<const Storage> storage_;
};

// Products over device buffers: a.data, c / d / out point to device memory on b's device;
// the call is asynchronous on o.stream. A is U8 or S8, any row stride >= K.
void gemm_s32(const MatrixView& a, const DeviceWeights& b, int32_t* c, int64_t ldc, const GemmOptions& o = {});
void gemm_f32(const MatrixView& a, const DeviceWeights& b, const DeviceDequantEpilogue& e, float* d, int64_t ldd,
              const GemmOptions& o = {});
void gemm_requant(const MatrixView& a, const DeviceWeights& b, const DeviceRequantEpilogue& e, void* out, int64_t ldo,
                  const GemmOptions& o = {});

// The same over host buffers (a.data and the output in host memory): copied to the device,
// multiplied, copied back; returns when the output is written. The epilogue is uploaded
// for the call.
void gemm_s32_host(const MatrixView& a, const DeviceWeights& b, int32_t* c, int64_t ldc, const GemmOptions& o = {});
void gemm_f32_host(const MatrixView& a, const DeviceWeights& b, const DequantEpilogue& e, float* d, int64_t ldd,
                   const GemmOptions& o = {});
void gemm_requant_host(const MatrixView& a, const DeviceWeights& b, const RequantEpilogue& e, void* out, int64_t ldo,
                       const GemmOptions& o = {});

// ---------------------------------------------------------------------------------------
// The integer GRU (fixq/qgru.h) on a GPU
// ---------------------------------------------------------------------------------------

// How the GRU runs on the device.
//   Fast:      the input projection of all steps as one tensor-core GEMM with the
//              requantization in its epilogue (8-bit W; a 16-bit x as two GEMMs of its
//              bytes, 256 * high + low; 16-bit W on the plain kernel), and
//              the recurrence as one persistent kernel whose thread blocks keep their slice
//              of R in shared memory with one grid-wide barrier per step, or, where that
//              slice does not fit, per-step kernels replayed as a CUDA graph;
//   Reference: per step a plain GEMM kernel (one thread per output, int64 sums) and a
//              pointwise kernel, as the CPU's reference loop does: the GPU reference the
//              fast kernels are tested against.
enum class GruPath { Fast, Reference };

struct GpuGruOptions {
  int device = 0;
  GruPath path = GruPath::Fast;
  // Fast path only: false forces the CUDA-graph recurrence where the persistent kernel
  // would fit (tests run both).
  bool allow_persistent = true;
};

// Per-call options of GpuGru::forward_device: the tensors of GruRunOptions in device memory.
struct GpuRunOptions {
  bool batch_first = false;
  std::span<const int64_t> lengths;  // host memory: empty, or B entries in [0, T]
  const float* h0 = nullptr;         // device memory: [L*D, B, H], or zeros when null
  Stream stream = nullptr;
};

// A QuantizedGru uploaded to one GPU: weights, constants and tables in device memory.
// forward() equals QuantizedGru::forward bit for bit. One GpuGru runs one forward at a
// time (calls from several threads are serialized); its device scratch grows to the largest
// shape seen and is reused.
class GpuGru {
 public:
  // Throws DeviceError without a usable device, OutOfMemory when the weights do not fit.
  explicit GpuGru(const QuantizedGru& model, const GpuGruOptions& options = {});
  ~GpuGru();
  GpuGru(GpuGru&&) noexcept;
  GpuGru& operator=(GpuGru&&) noexcept;

  int64_t input_size() const;
  int64_t hidden_size() const;
  int num_layers() const;
  bool bidirectional() const;
  const DeviceInfo& device() const;

  // Host buffers, as QuantizedGru::forward (the tap is not used): x [T, B, C] (or
  // [B, T, C] with batch_first) and h0 in host memory. Synchronous.
  GruOutput forward(const float* x, const Shape& x_shape, const GruRunOptions& options = {}) const;
  // Device buffers: x, y [T, B, D*H] ([B, T, D*H] with batch_first) and h_n [L*D, B, H] in
  // device memory (h_n may be null). Enqueued on options.stream; the call waits once for
  // the input's check (a non-finite element is a fixq::Error naming it, as on the CPU)
  // and returns before the rest completes.
  void forward_device(const float* x, const Shape& x_shape, float* y, float* h_n, const GpuRunOptions& options = {}) const;

  // The kernels each cell runs, [layer * directions + direction]: "input: ...", "recurrence:
  // ..." (what `fixq gru run --device cuda` and the benches report).
  std::vector<std::string> kernels() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace fixq::cuda
