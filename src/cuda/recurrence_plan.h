// Private: how the recurrence of one GRU cell is spread over a GPU (host logic, tested on
// the CPU: tests/cuda/recurrence_plan_test.cpp).
//
// The hidden units are split into blocks of U consecutive units, one thread block each, at
// most one per multiprocessor (U = ceil(H / SMs)). A block computes the three rows of R of
// each of its units (z, r and g: rows j, H + j, 2H + j) against the whole state, so it has
// every input of its units' update and runs it itself: per step it needs nothing of other
// blocks but the new state, which a grid-wide barrier publishes.
//   persistent: one cooperative kernel for all steps; each block copies its 3U rows of R to
//               shared memory once and keeps them for the whole sequence;
//   graph:      where that slice does not fit a block's shared memory (or cooperative launch
//               is missing or refused), one kernel per step reading R from global memory,
//               captured once as a CUDA graph and replayed.
// Either way a block stages the state of up to `batch_chunk` sequences in shared memory at
// a time, next to its R slice, and keeps there the recurrent products of its units. For a
// few sequences the 32 lanes of a warp split one dot product along k. For 8 or more, the
// products of 8-bit states and R (int32 sums) run on the tensor cores (mma.sync m16n8k32:
// staged states as A, the block's rows of R as B); with a 16-bit operand each lane takes one
// sequence's whole dot product with a row of R that all lanes read at once.
#pragma once

#include <cstdint>
#include <string>

#include "fixq/host_device.h"

namespace fixq::cuda::detail {

// Elements per row of a state or R in device memory: whole 16-byte pieces for 8-bit rows
// (the staging copies move 16 bytes at a time; 4-byte words feed dp4a), zeros beyond H.
FIXQ_HOST_DEVICE constexpr int64_t state_stride(int64_t hidden) { return (hidden + 15) / 16 * 16; }

struct RecurrenceShape {
  int64_t hidden = 0, batch = 0;
  int h_bytes = 1, r_bytes = 1;  // 1 or 2 (s8 or s16 storage)
  int64_t r_stride = 0;          // elements per row of R in device memory
  bool tensor_cores = false;     // 8-bit h and R with int32 sums: rows laid out for mma fragments
};

struct DeviceLimits {
  int multiprocessors = 0;
  int64_t shared_per_block = 0;  // the opt-in maximum
  bool cooperative = false;
};

// What the kernels read of a plan (a kernel argument: plain values only).
struct RecurrenceLayout {
  bool persistent = false;
  int64_t units_per_block = 0;  // U
  int64_t blocks = 0;           // ceil(H / U)
  int64_t batch_chunk = 0;      // sequences staged at a time
  int64_t r_bytes = 0;          // the R slice in shared memory (0 for the graph form)
  int64_t h_offset = 0, rh_offset = 0, shared_bytes = 0;  // shared-memory layout
  int64_t h_row_bytes = 0;      // a staged state's row: its values and a pad that spreads the
                                // lanes' reads over the 32 banks: an odd word stride for one
                                // word per lane, a stride of 16 mod 32 bytes for mma fragments
  int64_t r_row_bytes = 0;      // a row of the R slice in shared memory (likewise padded)
  int64_t rh_stride = 0;        // int32 products kept per staged sequence (3U, padded)
};

struct RecurrencePlan {
  RecurrenceLayout layout;
  // The form and its reason, for kernels() and fixq info: begins with
  // kPersistentRecurrence exactly where layout.persistent, else with kGraphRecurrence (whose
  // reasons may mention the persistent kernel, so a test must match the beginning).
  std::string why;
};

inline constexpr const char* kPersistentRecurrence = "persistent kernel: ";
inline constexpr const char* kGraphRecurrence = "graph of per-step kernels";

inline constexpr int kRecurrenceThreads = 256;

// The plan of one cell's recurrence; allow_persistent = false forces the graph form.
// Throws fixq::Error where even one staged sequence does not fit shared memory (H beyond
// what fixq's GPU kernels support).
RecurrencePlan plan_recurrence(const RecurrenceShape& s, const DeviceLimits& d, bool allow_persistent);

// The graph form in place of a persistent plan that the device turned down when it came to
// run it; `refusal` says what turned it down ("the persistent kernel's blocks cannot all be
// resident at once", ...), and the plan's why ends with it in parentheses.
RecurrencePlan graph_instead(const RecurrenceShape& s, const DeviceLimits& d, const std::string& refusal);

// The two refusals GpuGru meets: the occupancy query finds no room for a block per
// multiprocessor, or the driver refuses the cooperative launch itself.
inline constexpr const char* kNotCoResident = "the persistent kernel's blocks cannot all be resident at once";
inline constexpr const char* kCooperativeRefused =
    "the driver refused the persistent kernel's cooperative launch (cudaErrorCooperativeLaunchTooLarge: fewer blocks "
    "are resident now than the occupancy query said)";

}  // namespace fixq::cuda::detail
