// Private: what the integer graph (int_graph.cpp) reuses from one call to the next, kept
// by a caller that runs it many times: a stream (one per stream, step after step) or a
// whole-sequence forward (its chunks). One per caller, never shared between threads.
#pragma once

#include <cstdint>
#include <vector>

#include "gru/int/model.h"
#include "model/int_ops.h"
#include "model/quantized.h"

namespace fixq::model_detail {

// An integer map of one 8-bit value evaluated once for every value of its range [qmin, ...].
struct Table8 {
  int32_t qmin = 0;
  std::vector<int32_t> y;  // by q - qmin
  bool empty() const { return y.empty(); }
  int32_t operator()(int32_t q) const { return y[static_cast<size_t>(q - qmin)]; }
  // y[i] = map(x[i]) for i < n, with the table's bounds in locals (y's stores could alias them).
  void apply(const int32_t* x, int64_t n, int32_t* out) const {
    const int32_t lo = qmin;
    const int32_t* t = y.data();
    for (int64_t i = 0; i < n; ++i) out[i] = t[x[i] - lo];
  }
};

struct IntRun {
  // Per node and input: where the input value is 8-bit, the node's per-element integer map
  // (Tanh / Sigmoid's table, a Concat input's or a GRU input's rescale) as a Table8 (empty:
  // none, a copy, or not 8-bit). The same integers as the map, read instead of recomputed
  // per element (a Rescale is two 64-bit products and a clamp).
  std::vector<std::vector<Table8>> table8;
  ConvScratch conv;
  LayerBuffers gru;

  explicit IntRun(const QuantizedModel::Impl& m);
};

// run_int_graph (quantized.h) with run's tables and buffers.
void run_int_graph(const QuantizedModel::Impl& m, std::vector<std::vector<int32_t>>& vals, int64_t B, int64_t T,
                   ModelIntState* state, IntRun& run);

}  // namespace fixq::model_detail
