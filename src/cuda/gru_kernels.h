// Private: a GRU cell in device memory as the kernels read it (plain values and device
// pointers), the arguments of each GRU kernel, and their launchers (gru_io.cu,
// gru_reference.cu, gru_recurrence.cu). Included by the kernels and by the host code.
//
// Sequences on the device are time-major: row t * B + b. Quantized inputs have rows of
// x_stride elements, states and R rows of state_stride(H) / r_stride elements, zeros in the
// padding: the kernels read whole words and 16-byte pieces of them.
#pragma once

#include <cstdint>

#include "cuda/gemm_args.h"
#include "cuda/recurrence_plan.h"
#include "cuda/runtime.h"
#include "fixq/arith.h"
#include "fixq/cuda.h"
#include "gru/int/unit_constants.h"

namespace fixq::cuda::detail {

// An operator's integer range, zero point and storage (s8 or s16).
struct OperandQ {
  int32_t zp = 0;
  IntRange range;
  IntType storage = IntType::S8;
};

struct DeviceCell {
  int64_t input_size = 0, hidden_size = 0;
  OperandQ x, h, wx, rh;
  IntType w_type = IntType::S8, r_type = IntType::S8;
  const void* w = nullptr;  // [3H, w_stride], w_stride = padded_b_stride(C)
  const void* r = nullptr;  // [3H, r_stride], r_stride = padded_b_stride(H)
  int64_t w_stride = 0, r_stride = 0;
  const int64_t* colsum_w = nullptr;  // [3H], from the CPU's PackedB
  const int64_t* colsum_r = nullptr;
  const FixedPointScale* wx_scale = nullptr;  // [3H]
  const FixedPointScale* rh_scale = nullptr;
  bool w_fits_int32 = true, r_fits_int32 = true;  // int32 sums cannot overflow (the CPU's bound)
  bool w_fits_u8 = true;  // nor with u8 activations (the low bytes of a split 16-bit x)
  gru_detail::UnitConstants unit;                  // bias and table pointers into device memory
};

// Which kernel a cell's input projection (x [T * B, C] times W [3H, C]) runs on the fast
// path; the reference path always takes the plain kernel.
//   TensorCore: 8-bit x and W whose int32 sums cannot overflow: one tensor-core GEMM with the
//               requantization fused;
//   SplitBytes: 16-bit x and 8-bit W: x = 256 * high byte (s8) + low byte (u8), one
//               tensor-core GEMM per byte plane, fused into one requantization; needs the
//               int32 bound for u8 activations (which covers the s8 high bytes too);
//   Plain:      16-bit W, or sums the int32 bound does not cover: the plain kernel, int64 sums.
enum class InputProjection { TensorCore, SplitBytes, Plain };

inline InputProjection input_projection(const DeviceCell& k) {
  if (k.w_type != IntType::S8 || k.w_stride != padded_b_stride(k.input_size)) return InputProjection::Plain;
  if (k.x.storage == IntType::S8 && k.w_fits_int32) return InputProjection::TensorCore;
  if (k.x.storage == IntType::S16 && k.w_fits_u8) return InputProjection::SplitBytes;
  return InputProjection::Plain;
}

// The words GpuGru::kernels() opens a cell's line with for each kind: a pure function of the
// kind, so that the tests can look for it.
inline const char* input_projection_description(InputProjection p) {
  switch (p) {
    case InputProjection::TensorCore:
      return "input projection: tensor-core GEMM (mma.sync m16n8k32, s8 x s8, int32 sums) with the requantization fused";
    case InputProjection::SplitBytes:
      return "input projection: tensor-core GEMM on each byte of the 16-bit x (s8 high, u8 low; int32 sums), the "
             "requantization fused in the second";
    case InputProjection::Plain: break;
  }
  return "input projection: plain GEMM kernel (int64 sums)";
}

// One cell's time loop over device sequences.
struct RecurrenceArgs {
  DeviceCell cell;
  int64_t batch = 0, T = 0;
  const void* wx = nullptr;       // [T * B, 3H] in wx storage
  const void* rh = nullptr;       // reference path: [B, 3H] in rh storage, this step's Rh
  void* h[2] = {nullptr, nullptr};  // [B, state_stride(H)]: the state before step i is h[i & 1]
  void* y = nullptr;              // [T * B, H] in h storage, written for every real step
  const int64_t* lengths = nullptr;  // [B], or null: all T
  bool reverse = false;
  RecurrenceLayout plan;          // fast path: the partition and shared-memory layout
};

// x [rows, cols] floats (time-major rows t * B + b, read from [B, T, cols] when batch_first)
// quantized as fixq::quantize does into out [rows, out_stride]; a non-finite element's
// time-major index (plus index_offset) is kept in *first_bad if smaller than what it holds.
struct QuantizeArgs {
  const float* x = nullptr;
  int64_t rows = 0, cols = 0, T = 0, B = 0;
  bool batch_first = false;
  float scale = 1.0f;
  int32_t zp = 0;
  IntRange range;
  IntType storage = IntType::S8;
  void* out = nullptr;
  int64_t out_stride = 0;
  unsigned long long* first_bad = nullptr;
  int64_t index_offset = 0;
};

// What the input check names after a forward's quantization kernels: each of x and h0 keeps
// the smallest index of a non-finite element (time-major for x; [L*D, B, H] for h0), or
// kAllFinite. QuantizedGru::forward checks h0 (initial_state) before it quantizes x, so
// where both hold one, h0 is named, as on the CPU; where only one does, that one.
inline constexpr unsigned long long kAllFinite = ~0ull;
enum class NonFiniteInput { None, H0, X };
constexpr NonFiniteInput first_non_finite(unsigned long long first_bad_x, unsigned long long first_bad_h0) {
  if (first_bad_h0 != kAllFinite) return NonFiniteInput::H0;
  if (first_bad_x != kAllFinite) return NonFiniteInput::X;
  return NonFiniteInput::None;
}

// Direction d's h sequence [T * B, H] rescaled into the next layer's input columns
// [d * H, (d + 1) * H) of rows of out_stride; padding steps get pad (real 0).
struct RescaleArgs {
  const void* in = nullptr;
  IntType in_type = IntType::S8;
  void* out = nullptr;
  IntType out_type = IntType::S8;
  int64_t out_stride = 0;
  int64_t T = 0, B = 0, H = 0, d = 0;
  Rescale rescale;
  int32_t pad = 0;
  const int64_t* lengths = nullptr;
};

// q [T * B, q_stride] dequantized into columns [d * H, (d + 1) * H) of y, whose rows are
// D * H floats, time-major or ([B, T, .]) batch_first; padding steps are 0.
struct DequantizeArgs {
  const void* q = nullptr;
  IntType type = IntType::S8;
  int64_t q_stride = 0;
  float scale = 1.0f;
  int32_t zp = 0;
  float* y = nullptr;
  int64_t T = 0, B = 0, H = 0, D = 1, d = 0;
  bool batch_first = false;
  const int64_t* lengths = nullptr;
};

// gru_io.cu
void launch_quantize(const QuantizeArgs& a, Stream stream);
// Every element of state [rows, stride] (type t): v in the first `cols` columns, 0 after.
void launch_fill_state(void* state, IntType t, int64_t rows, int64_t cols, int64_t stride, int32_t v, Stream stream);
void launch_rescale(const RescaleArgs& a, Stream stream);
void launch_dequantize(const DequantizeArgs& a, Stream stream);
// A 16-bit matrix [rows, cols] (row stride in_stride) as its high bytes hi = x >> 8 (s8) and
// low bytes lo = x & 255 (u8), x = 256 hi + lo, in rows of `stride` bytes each.
void launch_split16(const void* in, int64_t rows, int64_t cols, int64_t in_stride, void* hi, void* lo, int64_t stride,
                    Stream stream);

// gru_reference.cu: step `step` of the reference loop, after a.rh holds this step's Rh: the
// unit update of every real (b, j) into y, then the new states committed into a.h[0].
void launch_reference_update(const RecurrenceArgs& a, int64_t step, Stream stream);

// gru_recurrence.cu, the fast path. Steps [first, last) in one kernel: the persistent form
// (a.plan.persistent, cooperative launch, a grid barrier between steps) takes them all; the
// graph form one at a time (last = first + 1). prepare_recurrence raises the kernel's
// shared-memory limit on the current device (before a graph capture) and says whether the
// persistent form can be co-resident there. launch_recurrence returns Refused where the
// driver turned the persistent form's cooperative launch down (nothing was enqueued: the
// caller runs the graph form instead); a launch of the graph form is always Launched.
bool prepare_recurrence(const RecurrenceArgs& a);
CooperativeLaunch launch_recurrence(const RecurrenceArgs& a, int64_t first, int64_t last, Stream stream);

}  // namespace fixq::cuda::detail
