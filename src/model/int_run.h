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

struct IntRun {
  ConvScratch conv;
  LayerBuffers gru;
};

// run_int_graph (quantized.h) with run's buffers (the tables are the model's: QNode::table8).
void run_int_graph(const QuantizedModel::Impl& m, std::vector<std::vector<int32_t>>& vals, int64_t B, int64_t T,
                   ModelIntState* state, IntRun& run);

}  // namespace fixq::model_detail
