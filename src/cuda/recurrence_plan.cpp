// plan_recurrence: the partition of recurrence_plan.h and its shared-memory layout.
#include "cuda/recurrence_plan.h"

#include <algorithm>

#include "fixq/error.h"

namespace fixq::cuda::detail {

namespace {

constexpr int64_t kAlign = 16;
int64_t aligned(int64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }
int64_t kib(int64_t bytes) { return (bytes + 1023) / 1024; }

}  // namespace

RecurrencePlan plan_recurrence(const RecurrenceShape& s, const DeviceLimits& d, bool allow_persistent) {
  require(s.hidden >= 1 && s.batch >= 1 && d.multiprocessors >= 1, "internal: recurrence plan of an empty shape");
  RecurrencePlan plan;
  RecurrenceLayout& p = plan.layout;
  p.units_per_block = (s.hidden + d.multiprocessors - 1) / d.multiprocessors;
  p.blocks = (s.hidden + p.units_per_block - 1) / p.units_per_block;
  const int64_t U = p.units_per_block;
  // mma fragments: 8 rows by 4 words per load, conflict-free at 16 mod 32 bytes per row; the
  // rows cover whole k-steps of 32 (the values past H, multiplied by R's zeros, add nothing).
  p.h_row_bytes = s.tensor_cores ? (s.hidden + 31) / 32 * 32 + 16 : state_stride(s.hidden) * s.h_bytes + 4;
  p.r_row_bytes = s.r_stride * s.r_bytes + (s.tensor_cores ? 16 : 0);
  p.rh_stride = aligned(3 * U * 4) / 4;
  const int64_t per_sequence = p.h_row_bytes + 4 * p.rh_stride;  // its state and its units' products
  const int64_t slice = aligned(3 * U * p.r_row_bytes);
  const int64_t limit = d.shared_per_block;
  require(per_sequence + kAlign <= limit, "GPU GRU: hidden size ", s.hidden, " is too large: one state row needs ",
          kib(per_sequence), " KiB of shared memory and a thread block has ", kib(limit), " KiB");
  if (!allow_persistent) {
    plan.why = fixq::detail::cat(kGraphRecurrence, " (persistent kernel disabled)");
  } else if (!d.cooperative) {
    plan.why = fixq::detail::cat(kGraphRecurrence, " (the device has no cooperative launch for a grid barrier)");
  } else if (slice + per_sequence + kAlign > limit) {
    plan.why = fixq::detail::cat(kGraphRecurrence, " (the ", 3 * U, " rows of R per block, ", kib(slice),
                                 " KiB, and a state row do not fit the ", kib(limit), " KiB of shared memory per block)");
  } else {
    p.persistent = true;
  }
  p.r_bytes = p.persistent ? slice : 0;
  // (kAlign: the slack of rounding the staged states up to the products' alignment.)
  p.batch_chunk = std::min<int64_t>(s.batch, (limit - p.r_bytes - kAlign) / per_sequence);
  p.h_offset = p.r_bytes;
  p.rh_offset = p.h_offset + aligned(p.batch_chunk * p.h_row_bytes);
  p.shared_bytes = p.rh_offset + p.batch_chunk * 4 * p.rh_stride;
  if (p.persistent)
    plan.why = fixq::detail::cat(kPersistentRecurrence, p.blocks, " blocks of ", U, " units, each keeping its ", 3 * U,
                              " rows of R (", kib(slice), " KiB) in shared memory, one grid barrier per step");
  return plan;
}

RecurrencePlan graph_instead(const RecurrenceShape& s, const DeviceLimits& d, const std::string& refusal) {
  RecurrencePlan plan = plan_recurrence(s, d, false);
  plan.why = fixq::detail::cat(kGraphRecurrence, " (", refusal, ")");
  return plan;
}

}  // namespace fixq::cuda::detail
