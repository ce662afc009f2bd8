// The GRU's conversions on the device: float inputs and states quantized, the layers'
// outputs rescaled into the next layer's input, and h dequantized.
#include <cuda_runtime.h>

#include "cuda/gemm_epilogue.cuh"
#include "cuda/gru_kernels.h"
#include "cuda/runtime.h"
#include "fixq/quant.h"

namespace fixq::cuda::detail {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 * 8 ? b : 65535 * 8);
}

__device__ __forceinline__ int64_t first_index() { return blockIdx.x * int64_t{blockDim.x} + threadIdx.x; }
__device__ __forceinline__ int64_t grid_stride() { return int64_t{gridDim.x} * blockDim.x; }

// fixq::quantize_value on the device, as the CPU's element kernels state it
// (src/quant/kernels.h): x / scale rounded once in float, then to the nearest integer with
// ties to even (rint), clamped to [qmin - zp, qmax - zp] and offset by zp. x must be finite
// (quantize_kernel keeps the others out); a finite x whose quotient overflows to infinity
// saturates as on the CPU.
__device__ __forceinline__ int32_t quantize_element(float x, float scale, int32_t zp, IntRange r) {
  const double q = rint(static_cast<double>(__fdiv_rn(x, scale)));
  if (q <= static_cast<double>(int64_t{r.qmin} - zp)) return r.qmin;
  if (q >= static_cast<double>(int64_t{r.qmax} - zp)) return r.qmax;
  return zp + static_cast<int32_t>(q);
}

__device__ __forceinline__ bool finite(float x) { return (__float_as_uint(x) & 0x7F800000u) != 0x7F800000u; }

__global__ void quantize_kernel(QuantizeArgs a) {
  for (int64_t i = first_index(); i < a.rows * a.cols; i += grid_stride()) {
    const int64_t row = i / a.cols, col = i % a.cols;
    const int64_t t = row / a.B, b = row % a.B;
    const float x = a.x[(a.batch_first ? b * a.T + t : row) * a.cols + col];
    // A non-finite element is the host's to report (first_non_finite, after the whole
    // forward is enqueued); it is stored as the range's low end, an in-range value for the
    // kernels that run meanwhile (NaN has no integer conversion: rint(NaN) passes neither
    // clamp of quantize_element).
    const bool ok = finite(x);
    if (!ok) atomicMin(a.first_bad, static_cast<unsigned long long>(a.index_offset + i));
    store_int(a.out, a.storage, row * a.out_stride + col, ok ? quantize_element(x, a.scale, a.zp, a.range) : a.range.qmin);
  }
}

__global__ void fill_state_kernel(void* state, IntType t, int64_t rows, int64_t cols, int64_t stride, int32_t v) {
  for (int64_t i = first_index(); i < rows * stride; i += grid_stride()) store_int(state, t, i, i % stride < cols ? v : 0);
}

__device__ __forceinline__ bool real_step(const int64_t* lengths, int64_t t, int64_t b) {
  return lengths == nullptr || t < lengths[b];
}

__global__ void rescale_kernel(RescaleArgs a) {
  for (int64_t i = first_index(); i < a.T * a.B * a.H; i += grid_stride()) {
    const int64_t row = i / a.H, j = i % a.H;
    const int32_t v = real_step(a.lengths, row / a.B, row % a.B) ? a.rescale(load_int(a.in, a.in_type, i)) : a.pad;
    store_int(a.out, a.out_type, row * a.out_stride + a.d * a.H + j, v);
  }
}

__global__ void dequantize_kernel(DequantizeArgs a) {
  for (int64_t i = first_index(); i < a.T * a.B * a.H; i += grid_stride()) {
    const int64_t row = i / a.H, j = i % a.H, t = row / a.B, b = row % a.B;
    const float v = real_step(a.lengths, t, b) ? dequantize_value(load_int(a.q, a.type, row * a.q_stride + j), a.scale, a.zp)
                                               : 0.0f;
    a.y[(a.batch_first ? b * a.T + t : row) * a.D * a.H + a.d * a.H + j] = v;
  }
}

__global__ void split16_kernel(const int16_t* in, int64_t rows, int64_t cols, int64_t in_stride, int8_t* hi,
                               uint8_t* lo, int64_t stride) {
  for (int64_t i = first_index(); i < rows * cols; i += grid_stride()) {
    const int64_t r = i / cols, k = i % cols;
    const int32_t x = in[r * in_stride + k];
    hi[r * stride + k] = static_cast<int8_t>(x >> 8);  // floor(x / 256): arithmetic shift
    lo[r * stride + k] = static_cast<uint8_t>(x & 255);
  }
}

}  // namespace

void launch_split16(const void* in, int64_t rows, int64_t cols, int64_t in_stride, void* hi, void* lo, int64_t stride,
                    Stream stream) {
  if (rows * cols == 0) return;
  split16_kernel<<<blocks_for(rows * cols), kThreads, 0, stream>>>(static_cast<const int16_t*>(in), rows, cols, in_stride,
                                                                     static_cast<int8_t*>(hi), static_cast<uint8_t*>(lo),
                                                                     stride);
  check_launch("split16_kernel");
}

void launch_quantize(const QuantizeArgs& a, Stream stream) {
  if (a.rows * a.cols == 0) return;
  quantize_kernel<<<blocks_for(a.rows * a.cols), kThreads, 0, stream>>>(a);
  check_launch("quantize_kernel");
}

void launch_fill_state(void* state, IntType t, int64_t rows, int64_t cols, int64_t stride, int32_t v, Stream stream) {
  if (rows * stride == 0) return;
  fill_state_kernel<<<blocks_for(rows * stride), kThreads, 0, stream>>>(state, t, rows, cols, stride, v);
  check_launch("fill_state_kernel");
}

void launch_rescale(const RescaleArgs& a, Stream stream) {
  if (a.T * a.B * a.H == 0) return;
  rescale_kernel<<<blocks_for(a.T * a.B * a.H), kThreads, 0, stream>>>(a);
  check_launch("rescale_kernel");
}

void launch_dequantize(const DequantizeArgs& a, Stream stream) {
  if (a.T * a.B * a.H == 0) return;
  dequantize_kernel<<<blocks_for(a.T * a.B * a.H), kThreads, 0, stream>>>(a);
  check_launch("dequantize_kernel");
}

}  // namespace fixq::cuda::detail
