// Private: a GRU forward over a large batch as contiguous batch slices, one per thread of the
// shared workers (cpu/thread_pool.h). Batch items are independent in a GRU (every product,
// rescale and table lookup of an item reads that item's row alone), so each slice runs the
// whole multi-layer forward on its own, with no synchronisation per step, and gives the
// same bits as the whole batch on one thread. The float and the integer forward call this
// first (gru/float/forward.cpp, gru/int/forward.cpp).
#pragma once

#include <cstdint>
#include <functional>

#include "fixq/gru.h"

namespace fixq::gru_detail {

// The sizes of a forward's results: h_n [cells, B, hidden], y [T, B, out_width].
struct ForwardDims {
  int64_t cells = 0;      // layers x directions
  int64_t hidden = 0;     // H
  int64_t out_width = 0;  // directions x H
};

// The forward of one slice on the calling thread: x of x_shape (the slice's batch), options
// with threads = 1, results into out (resized by it).
using SliceForward =
    std::function<void(const float* x, const Shape& x_shape, const GruRunOptions& options, GruOutput& out)>;

// The threads a forward with these options uses for a batch of `batch`: 1 below
// kGruMinThreadedBatch or with a tap (whose calls are ordered), else options.threads (0: the
// process's setting, gemm_threads()) capped at the batch. Throws fixq::Error for
// options.threads outside [0, kGruMaxThreads].
int forward_threads(const GruRunOptions& options, int64_t batch);

// Runs `forward` over forward_threads() contiguous slices of the batch on the shared
// workers and assembles `out` as one call over the whole batch would. Returns false, having
// done nothing, where the forward should run on one thread: one thread, or a shape whose
// error the forward itself reports. A slice that throws (bad input) makes the whole call
// run again on one thread, so that the error names elements as the caller numbers them.
bool forward_in_slices(const float* x, const Shape& x_shape, const GruRunOptions& options, const ForwardDims& dims,
                       GruOutput& out, const SliceForward& forward);

}  // namespace fixq::gru_detail
