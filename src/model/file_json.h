// Private: the graph of a quantized model file as JSON (the "graph" metadata of
// "model-quantized" version 1), both ways. Weights are not in it (they are tensors).
#pragma once

#include <string>

#include "model/quantized.h"

namespace fixq::model_detail {

// The graph, the preset, every value's bits, every node's attributes and, for a GRU, its
// shape, cell and GruQuantParams JSON.
std::string graph_to_json(const QuantizedModel::Impl& m);

// The parsed graph: values, nodes (attributes; weights empty, gru null), inputs, outputs,
// preset and scales into m; every value's bits into m.vq (scales and zero points empty);
// GRU shapes and parameters into gru_meta[n]. Throws fixq::Error for anything malformed.
struct GruMeta {
  int64_t input_size = 0, hidden_size = 0, num_layers = 0;
  bool bidirectional = false;
  GruCellKind cell = GruCellKind::ResetAfter;
  GruQuantParams params;
};
void graph_from_json(const std::string& text, QuantizedModel::Impl& m, std::vector<GruMeta>& gru_meta);

}  // namespace fixq::model_detail
