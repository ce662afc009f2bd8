// Private to load_model_onnx: the walk over an ONNX graph that builds a fixq Model, one
// handler per ONNX operator. model_onnx.cpp holds the walk, the graph inputs and outputs
// and the computing operators; model_layout.cpp the layout and shape operators.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "fixq/model.h"
#include "onnx_import/gru_chain.h"
#include "onnx_import/model_graph.h"

namespace fixq::onnx_import {

class ModelImporter {
 public:
  ModelImporter(const Where& where, const onnx::ModelProto& proto);
  Model run();

 private:
  // ---- the walk (model_onnx.cpp)
  void mark_state_inputs();
  std::set<const onnx::NodeProto*> live_nodes() const;
  void add_graph_inputs();
  void visit(const onnx::NodeProto& node, int index);
  void add_graph_outputs();
  void prune();

  // ---- computing operators (model_onnx.cpp)
  void gemm(const onnx::NodeProto& n);
  void matmul(const onnx::NodeProto& n);
  void binary(const onnx::NodeProto& n);
  void unary(const onnx::NodeProto& n, ModelOp op);
  void softmax(const onnx::NodeProto& n);
  void conv(const onnx::NodeProto& n);
  void gru(const onnx::NodeProto& n);
  void concat(const onnx::NodeProto& n);
  void split(const onnx::NodeProto& n);
  void slice(const onnx::NodeProto& n);

  // ---- layout and shape operators (model_layout.cpp)
  void transpose(const onnx::NodeProto& n);
  void reshape(const onnx::NodeProto& n);
  void squeeze(const onnx::NodeProto& n, bool unsqueeze);
  void shape(const onnx::NodeProto& n);
  void gather(const onnx::NodeProto& n);
  void cast(const onnx::NodeProto& n);
  void constant_of_shape(const onnx::NodeProto& n);
  void pad(const onnx::NodeProto& n);
  void flatten(const onnx::NodeProto& n);
  void equal(const onnx::NodeProto& n);
  // An If on a constant condition (torch's `if T == 1` of a squeeze): the taken branch's nodes.
  void if_branch(const onnx::NodeProto& n);
  Data state_row_as_frame(const onnx::NodeProto& n, const Data& d, int64_t row);

  // ---- helpers (model_onnx.cpp)
  template <class... Args>
  [[noreturn]] void fail_node(const onnx::NodeProto& n, const Args&... what) const {
    where_.fail("node '", label(n), "' (", n.op_type(), "): ", what...);
  }
  std::string label(const onnx::NodeProto& n) const;
  const Tensor& input(const onnx::NodeProto& n, int i);
  bool has_input(const onnx::NodeProto& n, int i) const { return i < n.input_size() && !n.input(i).empty(); }
  const Folded& const_input(const onnx::NodeProto& n, int i, const char* role);
  // A Data input that is no Pad's or trailing Conv's output (those only Conv / Slice read).
  const Data& data_input(const onnx::NodeProto& n, int i);
  // The ints of attribute `attr`, else of constant input `i`; `found` whether either held them.
  std::vector<int64_t> ints_of(const onnx::NodeProto& n, const char* attr, int i, bool& found);
  void set_output(const onnx::NodeProto& n, int i, Tensor t);
  void set_data(const onnx::NodeProto& n, int i, Data d);
  // Normalizes axis against rank (negative counts from the end).
  int64_t axis_of(const onnx::NodeProto& n, int64_t axis, int64_t rank) const;
  // The role of an axis (open ids resolved when bound), and binding an open one.
  int role(int axis) const;
  void bind(const onnx::NodeProto& n, int axis, int want);
  // Requires d's axes to be `want` (roles), binding open ones; false when they cannot be.
  bool expect_axes(const onnx::NodeProto& n, const Data& d, const std::vector<int>& want);
  // As expect_axes, or (`unbatched` then true) d has no batch axis and an axis of 1 stands
  // where `want` has the batch: torch's Unsqueeze of a 2-D [T, C] input to nn.GRU / Conv1d.
  bool expect_axes_or_unbatched(const onnx::NodeProto& n, const Data& d, const std::vector<int>& want, bool& unbatched);
  int64_t features(const Data& d) const { return model_.values[static_cast<std::size_t>(d.value)].features; }
  // A new Sequence value named after the node's output i, made by a new fixq node.
  int new_value(const onnx::NodeProto& n, int i, int64_t features, ValueKind kind = ValueKind::Sequence);
  ModelNode& new_node(const onnx::NodeProto& n, ModelOp op, std::vector<int> inputs, std::vector<int> outputs,
                      const std::string& suffix = "");
  std::string axes_str(const Data& d) const;

  Where where_;
  const onnx::ModelProto& proto_;
  const onnx::GraphProto& graph_;
  int64_t opset_ = 13;
  Constants constants_;
  std::map<std::string, Tensor> tensors_;
  std::map<std::string, int> consumers_;  // ONNX tensor -> how many node inputs and graph outputs read it
  std::map<std::string, int> produced_at_;  // ONNX tensor -> index of its node
  std::set<std::string> state_inputs_;
  std::map<int, int> bound_;  // open axis id -> kB / kT
  int next_open_ = kFirstOpen;
  std::set<std::string> node_names_;
  std::map<const onnx::NodeProto*, std::string> labels_;
  // GRU chains: the chains, the chain of each GRU node and its layer, and each chain's
  // fixq node (index in model_.nodes) once its first layer was seen.
  std::vector<Chain> chains_;
  std::map<const onnx::NodeProto*, std::pair<int, int>> gru_layer_;
  std::map<int, int> chain_node_;
  std::map<int, int> chain_state_in_;  // chain -> its initial-state graph input value, or -1
  std::set<int> unbatched_chains_;     // chains whose X is unbatched: their outputs' batch axis is one of 1
  // Values made by a Linear without bias that an Add may still give one: value -> node.
  std::map<int, int> biasless_linear_;
  Model model_;
};

}  // namespace fixq::onnx_import
