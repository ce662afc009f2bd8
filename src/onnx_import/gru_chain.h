// Private: the GRU nodes of an ONNX graph as fixq GRUs, shared by load_gru_onnx (one GRU
// out of a model) and load_model_onnx (every GRU of a whole model): reading the file,
// checking a node's attributes, converting its W / R / B into fixq cells, and finding the
// chains of nodes that torch writes for one multi-layer nn.GRU.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "fixq/error.h"
#include "fixq/gru.h"

namespace fixq::onnx_import {

using Constants = std::map<std::string, const onnx::TensorProto*>;

// Who reads which file, the prefix of every message: "load_gru_onnx: m.onnx: ...".
struct Where {
  std::string who, path;
  template <class... Args>
  [[noreturn]] void fail(const Args&... what) const {
    fixq::fail(who, ": ", path, ": ", what...);
  }
};

// The file parsed as an onnx.ModelProto with a graph; any other bytes are an error.
onnx::ModelProto read_onnx_model(const Where& where);

const onnx::AttributeProto* attribute(const onnx::NodeProto& node, const std::string& name);
int64_t int_attribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback);

// One GRU node, checked in itself.
struct GruNode {
  const onnx::NodeProto* node = nullptr;
  int index = 0;  // in graph order
  std::string label;
  int64_t hidden = 0;
  int directions = 1;
  int layout = 0;  // 0: X [T, B, C], Y [T, D, B, H]; 1: X [B, T, C], Y [B, T, D, H]
  GruCellKind cell_kind = GruCellKind::ResetBefore;  // ONNX's default, linear_before_reset = 0
};

// allow_layout1: whether layout = 1 is accepted (load_gru_onnx refuses it).
GruNode check_gru_node(const Where& where, const onnx::NodeProto& node, int index, const Constants& constants,
                       bool allow_layout1);

// The GRU nodes that make up one fixq GRU: the layers of one nn.GRU, in order.
struct Chain {
  std::vector<GruNode> layers;
  std::string module;  // torch's module prefix made from the first node's name, e.g. "encoder.rnn."
  std::string describe() const;
};

// Every GRU of the graph, each a chain of its layers, in graph order of their first node.
std::vector<Chain> find_chains(const Where& where, const onnx::GraphProto& graph, const Constants& constants,
                               bool allow_layout1);

// The chain's weights as one fixq GruModel (validated).
GruModel chain_model(const Where& where, const Chain& chain, const Constants& constants);

}  // namespace fixq::onnx_import
