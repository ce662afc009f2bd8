// load_model_onnx: a whole ONNX model as a fixq Model (fixq/model.h). The walk over the
// graph in node order, the graph inputs and outputs with their layouts, and the operators
// that compute (the layout and shape operators are in model_layout.cpp).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "fixq/error.h"
#include "fixq/gguf_file.h"  // printable()
#include "fixq/model.h"
#include "onnx_import/model_importer.h"
#include "onnx_import/tensor.h"

namespace fixq {
namespace onnx_import {
namespace {

constexpr const char* kSupported =
    "fixq imports Gemm, MatMul (+ Add), Conv, GRU, Add, Mul, Tanh, Sigmoid, Relu, Concat, Split, Slice, Softmax and "
    "the layout operators Transpose, Reshape, Flatten, Squeeze, Unsqueeze, Identity, Pad (before a Conv), Shape, Gather, "
    "Cast, ConstantOfShape, and Equal / If on constant shapes";

// A dim_param that names the batch or the time axis (torch's dynamic_axes names).
int axis_by_name(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  if (name == "b" || name == "n" || name.find("batch") != std::string::npos) return kB;
  if (name == "t" || name.find("time") != std::string::npos || name.find("seq") != std::string::npos ||
      name.find("frame") != std::string::npos || name.find("len") != std::string::npos || name.find("step") != std::string::npos)
    return kT;
  return -1;
}

// The tensors a node reads: its inputs and, for an If, what its branches' nodes read
// (a branch reads the outer graph's tensors by name).
std::vector<std::string> reads(const onnx::NodeProto& n) {
  std::vector<std::string> out(n.input().begin(), n.input().end());
  for (const onnx::AttributeProto& a : n.attribute())
    if (a.has_g())
      for (const onnx::NodeProto& m : a.g().node())
        for (const std::string& i : reads(m)) out.push_back(i);
  return out;
}

}  // namespace

ModelImporter::ModelImporter(const Where& where, const onnx::ModelProto& proto)
    : where_(where), proto_(proto), graph_(proto.graph()) {
  for (const onnx::OperatorSetIdProto& o : proto.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
  constants_ = graph_constants(graph_);
  for (int i = 0; i < graph_.node_size(); ++i)
    for (const std::string& o : graph_.node(i).output())
      if (!o.empty()) produced_at_.emplace(o, i);
}

std::string ModelImporter::label(const onnx::NodeProto& n) const {
  const auto it = labels_.find(&n);
  if (it != labels_.end()) return it->second;
  return gguf::printable(n.name().empty() ? n.op_type() : n.name());
}

const Tensor& ModelImporter::input(const onnx::NodeProto& n, int i) {
  if (!has_input(n, i)) fail_node(n, "has no input ", i);
  const std::string& name = n.input(i);
  if (const auto it = tensors_.find(name); it != tensors_.end()) return it->second;
  if (const auto c = constants_.find(name); c != constants_.end()) {
    Tensor t;
    t.constant = folded_from_proto(*c->second, "tensor '" + gguf::printable(name) + "'");
    return tensors_.emplace(name, std::move(t)).first->second;
  }
  if (produced_at_.count(name))
    fail_node(n, "reads '", gguf::printable(name), "', which a later node computes (a cycle, or nodes out of topological order)");
  fail_node(n, "reads '", gguf::printable(name), "', which no node computes and which is no graph input or initializer");
}

const Folded& ModelImporter::const_input(const onnx::NodeProto& n, int i, const char* role) {
  const Tensor& t = input(n, i);
  if (t.kind != Tensor::Const)
    fail_node(n, "its ", role, " '", gguf::printable(n.input(i)),
              "' is computed from the data; fixq needs it as a constant (an initializer or Constant node)");
  return t.constant;
}

const Data& ModelImporter::data_input(const onnx::NodeProto& n, int i) {
  const Tensor& t = input(n, i);
  if (t.kind == Tensor::Inner)
    fail_node(n, "reads '", gguf::printable(n.input(i)),
              "', the output of an inner layer of a multi-layer GRU, which fixq runs as one operator");
  if (t.kind != Tensor::DataView)
    fail_node(n, "its input '", gguf::printable(n.input(i)), "' is a constant; fixq supports ", n.op_type(),
              " only on the model's data");
  const Data& d = t.data;
  if (d.pad_left != 0)
    fail_node(n, "reads the output of Pad '", d.pad_node,
              "'; fixq supports a Pad only on the left of the time axis, right before a Conv");
  if (d.trail != 0)
    fail_node(n, "reads the output of Conv '", d.trail_node, "', whose pads add ", d.trail,
              " frames at the end of the time axis; fixq's Conv1d is causal: drop them with a Slice first");
  return d;
}

std::vector<int64_t> ModelImporter::ints_of(const onnx::NodeProto& n, const char* attr, int i, bool& found) {
  found = true;
  if (attr != nullptr)
    if (const onnx::AttributeProto* a = attribute(n, attr)) return {a->ints().begin(), a->ints().end()};
  if (i >= 0 && has_input(n, i)) {
    const Folded& f = const_input(n, i, "operand");
    try {
      return f.known_ints("operand");
    } catch (const Error& e) {
      fail_node(n, "input '", gguf::printable(n.input(i)), "': ", e.what());
    }
  }
  found = false;
  return {};
}

void ModelImporter::set_output(const onnx::NodeProto& n, int i, Tensor t) {
  if (i >= n.output_size() || n.output(i).empty()) return;
  if (!tensors_.emplace(n.output(i), std::move(t)).second)
    fail_node(n, "writes '", gguf::printable(n.output(i)), "', which another node or a graph input already defines");
}

void ModelImporter::set_data(const onnx::NodeProto& n, int i, Data d) {
  Tensor t;
  t.kind = Tensor::DataView;
  t.data = std::move(d);
  set_output(n, i, std::move(t));
}

int64_t ModelImporter::axis_of(const onnx::NodeProto& n, int64_t axis, int64_t rank) const {
  if (axis < -rank || axis >= rank) fail_node(n, "axis ", axis, " is outside a tensor of rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

int ModelImporter::role(int axis) const {
  if (axis < kFirstOpen) return axis;
  const auto it = bound_.find(axis);
  return it == bound_.end() ? axis : it->second;
}

void ModelImporter::bind(const onnx::NodeProto& n, int axis, int want) {
  const int r = role(axis);
  if (r == want) return;
  if (r < kFirstOpen) fail_node(n, "needs the batch and time axes in another order than its input has them");
  // The two open axes of an input are its batch and its time: binding one binds both.
  const int partner = kFirstOpen + ((axis - kFirstOpen) ^ 1);
  bound_[axis] = want;
  bound_[partner] = want == kB ? kT : kB;
}

bool ModelImporter::expect_axes(const onnx::NodeProto& n, const Data& d, const std::vector<int>& want) {
  if (d.axes.size() != want.size()) return false;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const int r = role(d.axes[i]);
    if (r >= kFirstOpen ? want[i] != kB && want[i] != kT : r != want[i]) return false;
  }
  // Both open axes of one input may not be asked to be the same.
  std::map<int, int> asked;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (role(d.axes[i]) >= kFirstOpen) {
      const int pair = (d.axes[i] - kFirstOpen) / 2;
      if (asked.count(pair) && asked[pair] == want[i]) return false;
      asked[pair] = want[i];
    }
  for (std::size_t i = 0; i < want.size(); ++i)
    if (role(d.axes[i]) >= kFirstOpen) bind(n, d.axes[i], want[i]);
  return true;
}

bool ModelImporter::expect_axes_or_unbatched(const onnx::NodeProto& n, const Data& d, const std::vector<int>& want,
                                             bool& unbatched) {
  unbatched = false;
  if (expect_axes(n, d, want)) return true;
  if (d.axes.size() != want.size()) return false;
  for (const int a : d.axes)
    if (role(a) == kB || role(a) >= kFirstOpen) return false;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (role(d.axes[i]) != (want[i] == kB ? kU : want[i])) return false;
  unbatched = true;  // a [T, C] value runs as batch 1
  return true;
}

std::string ModelImporter::axes_str(const Data& d) const {
  std::string s = "[";
  for (std::size_t i = 0; i < d.axes.size(); ++i) {
    const int r = role(d.axes[i]);
    const char* names[] = {"batch", "time", "features", "1", "directions", "hidden", "layers*directions"};
    s += (i ? ", " : "") + std::string(r < kFirstOpen ? names[r] : "batch or time");
  }
  return s + "]";
}

int ModelImporter::new_value(const onnx::NodeProto& n, int i, int64_t features, ValueKind kind) {
  ModelValue v;
  v.name = i < n.output_size() && !n.output(i).empty() ? n.output(i) : label(n) + ":" + std::to_string(i);
  v.kind = kind;
  v.features = features;
  if (model_.find_value(v.name) >= 0) v.name += "#" + std::to_string(model_.values.size());
  model_.values.push_back(std::move(v));
  return static_cast<int>(model_.values.size()) - 1;
}

ModelNode& ModelImporter::new_node(const onnx::NodeProto& n, ModelOp op, std::vector<int> inputs,
                                   std::vector<int> outputs, const std::string& suffix) {
  ModelNode m;
  m.name = label(n) + suffix;
  for (int k = 1; node_names_.count(m.name); ++k) m.name = label(n) + suffix + "#" + std::to_string(k);
  node_names_.insert(m.name);
  m.op = op;
  m.inputs = std::move(inputs);
  m.outputs = std::move(outputs);
  model_.nodes.push_back(std::move(m));
  return model_.nodes.back();
}

// ---- the walk

void ModelImporter::mark_state_inputs() {
  // A graph input that reaches a GRU's initial_h (through torch's per-layer Slice) is a State.
  std::map<std::string, const onnx::NodeProto*> producer;
  for (const onnx::NodeProto& n : graph_.node())
    for (const std::string& o : n.output()) producer.emplace(o, &n);
  for (const onnx::NodeProto& n : graph_.node()) {
    if (n.op_type() != "GRU" || n.input_size() < 6 || n.input(5).empty()) continue;
    std::string x = n.input(5);
    for (int hops = 0; hops < 8; ++hops) {
      const auto it = producer.find(x);
      if (it == producer.end()) break;
      const std::string& op = it->second->op_type();
      if ((op != "Slice" && op != "Identity") || it->second->input_size() < 1) break;
      x = it->second->input(0);
    }
    state_inputs_.insert(x);
  }
}

std::set<const onnx::NodeProto*> ModelImporter::live_nodes() const {
  std::set<const onnx::NodeProto*> live;
  std::vector<std::string> todo;
  std::set<std::string> seen;
  for (const onnx::ValueInfoProto& o : graph_.output()) todo.push_back(o.name());
  while (!todo.empty()) {
    const std::string name = todo.back();
    todo.pop_back();
    if (!seen.insert(name).second) continue;
    const auto it = produced_at_.find(name);
    if (it == produced_at_.end()) continue;
    const onnx::NodeProto& n = graph_.node(it->second);
    if (!live.insert(&n).second) continue;
    for (const std::string& i : reads(n))
      if (!i.empty()) todo.push_back(i);
  }
  return live;
}

void ModelImporter::add_graph_inputs() {
  for (const onnx::ValueInfoProto& in : graph_.input()) {
    if (constants_.count(in.name())) continue;  // opset < 9 lists initializers as inputs too
    const std::string name = gguf::printable(in.name());
    const onnx::TypeProto& type = in.type();
    if (!type.has_tensor_type() || type.tensor_type().elem_type() != onnx::TensorProto::FLOAT)
      where_.fail("graph input '", name, "' is not a float32 tensor; fixq's models take float32 inputs");
    std::vector<int64_t> fixed;   // the extent of each axis, or -1 when dynamic
    std::vector<std::string> param;
    for (const onnx::TensorShapeProto::Dimension& d : type.tensor_type().shape().dim()) {
      fixed.push_back(d.has_dim_value() && d.dim_value() > 0 ? d.dim_value() : -1);
      param.push_back(d.has_dim_param() ? d.dim_param() : "");
    }
    const std::size_t rank = fixed.size();
    ModelValue v;
    v.name = in.name();
    Data d;
    if (state_inputs_.count(in.name())) {
      if (rank != 3 || fixed[0] < 1 || fixed[2] < 1)
        where_.fail("graph input '", name, "' is a GRU's initial state, so fixq needs its shape [layers * directions, "
                    "batch, hidden] with fixed first and last extents");
      v.kind = ValueKind::State;
      v.rows = fixed[0];
      v.features = fixed[2];
      v.layout.axes = "SBH";
      d.axes = {kS, kB, kC};
      d.row1 = v.rows;
    } else if (rank == 2) {
      if (fixed[1] < 1 && fixed[0] > 0)
        where_.fail("graph input '", name, "' is [features, time] (2-D with its first axis fixed); fixq takes a 2-D input "
                    "as [time, features] only: transpose it inside the model, or give it a batch axis");
      if (fixed[1] < 1) where_.fail("graph input '", name, "' [time, features] has no fixed feature count");
      v.features = fixed[1];
      d.axes = {kT, kC};
    } else if (rank == 3) {
      // The features are the one fixed axis (torch's dynamic_axes make batch and time dynamic);
      // with every axis fixed, the last.
      int c = -1, fixed_count = 0;
      for (int a = 0; a < 3; ++a)
        if (fixed[static_cast<std::size_t>(a)] > 0) ++fixed_count, c = a;
      if (fixed_count == 0) where_.fail("graph input '", name, "' has no fixed axis for its features");
      if (fixed_count > 1) c = fixed[2] > 0 ? 2 : c;
      v.features = fixed[static_cast<std::size_t>(c)];
      const int open = next_open_;
      next_open_ += 2;
      d.axes.assign(3, kC);
      int k = 0;
      for (int a = 0; a < 3; ++a)
        if (a != c) d.axes[static_cast<std::size_t>(a)] = open + k++;
      for (int a = 0; a < 3; ++a) {
        const int by_name = axis_by_name(param[static_cast<std::size_t>(a)]);
        if (a != c && by_name >= 0 && role(d.axes[static_cast<std::size_t>(a)]) >= kFirstOpen) {
          bound_[d.axes[static_cast<std::size_t>(a)]] = by_name;
          bound_[kFirstOpen + ((d.axes[static_cast<std::size_t>(a)] - kFirstOpen) ^ 1)] = by_name == kB ? kT : kB;
        }
      }
    } else {
      where_.fail("graph input '", name, "' has ", rank, " axes; fixq's models take [batch, time, features] in any "
                  "order, [time, features], or a GRU state [layers * directions, batch, hidden]");
    }
    if (model_.find_value(v.name) >= 0) where_.fail("graph input '", name, "' is listed twice");
    model_.values.push_back(std::move(v));
    d.value = static_cast<int>(model_.values.size()) - 1;
    model_.inputs.push_back(d.value);
    Tensor t;
    t.kind = Tensor::DataView;
    t.data = d;
    tensors_[in.name()] = std::move(t);
  }
}

void ModelImporter::visit(const onnx::NodeProto& n, int index) {
  {
    std::string l = gguf::printable(n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name());
    labels_[&n] = l;
  }
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    fail_node(n, "is of the operator domain '", gguf::printable(n.domain()), "'; ", kSupported, " of the ONNX domain");
  const std::string& op = n.op_type();
  if (op == "Constant") {
    Tensor t;
    if (const onnx::AttributeProto* a = attribute(n, "value"); a && a->has_t())
      t.constant = folded_from_proto(a->t(), "Constant '" + label(n) + "'");
    else if (const onnx::AttributeProto* f = attribute(n, "value_float")) {
      t.constant.is_float = true;
      t.constant.floats = {f->f()};
    } else if (const onnx::AttributeProto* fs = attribute(n, "value_floats")) {
      t.constant = Folded{{fs->floats_size()}, true, {}, {fs->floats().begin(), fs->floats().end()}};
    } else if (const onnx::AttributeProto* i = attribute(n, "value_int")) {
      t.constant = folded_ints({Dim{i->i()}}, true);
    } else if (const onnx::AttributeProto* is = attribute(n, "value_ints")) {
      std::vector<Dim> v;
      for (const int64_t x : is->ints()) v.push_back(Dim{x});
      t.constant = folded_ints(v);
    } else {
      fail_node(n, "holds no tensor, float or int value (sparse and string constants are not supported)");
    }
    set_output(n, 0, std::move(t));
    return;
  }
  try {
    if (op == "Identity" || op == "Dropout") {
      Tensor t = input(n, 0);
      set_output(n, 0, std::move(t));
    } else if (op == "Gemm") gemm(n);
    else if (op == "MatMul") matmul(n);
    else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") binary(n);
    else if (op == "Tanh") unary(n, ModelOp::Tanh);
    else if (op == "Sigmoid") unary(n, ModelOp::Sigmoid);
    else if (op == "Relu") unary(n, ModelOp::Relu);
    else if (op == "Softmax") softmax(n);
    else if (op == "Conv") conv(n);
    else if (op == "GRU") gru(n);
    else if (op == "Concat") concat(n);
    else if (op == "Split") split(n);
    else if (op == "Slice") slice(n);
    else if (op == "Transpose") transpose(n);
    else if (op == "Reshape") reshape(n);
    else if (op == "Squeeze") squeeze(n, false);
    else if (op == "Unsqueeze") squeeze(n, true);
    else if (op == "Shape") shape(n);
    else if (op == "Gather") gather(n);
    else if (op == "Cast") cast(n);
    else if (op == "ConstantOfShape") constant_of_shape(n);
    else if (op == "Pad") pad(n);
    else if (op == "Flatten") flatten(n);
    else if (op == "Equal") equal(n);
    else if (op == "If") if_branch(n);
    else fail_node(n, "operator ", gguf::printable(op), " is not supported; ", kSupported);
  } catch (const Error& e) {
    // Messages of the folding helpers have no prefix yet; the importer's own have one.
    const std::string what = e.what();
    if (what.starts_with(where_.who + ": ")) throw;
    fail_node(n, what);
  }
}

Model ModelImporter::run() {
  mark_state_inputs();
  const std::set<const onnx::NodeProto*> live = live_nodes();
  for (const onnx::NodeProto& n : graph_.node())
    if (live.count(&n))
      for (const std::string& i : reads(n)) ++consumers_[i];
  for (const onnx::ValueInfoProto& o : graph_.output()) ++consumers_[o.name()];
  chains_ = find_chains(where_, graph_, constants_, true);
  for (std::size_t c = 0; c < chains_.size(); ++c)
    for (std::size_t l = 0; l < chains_[c].layers.size(); ++l)
      gru_layer_[chains_[c].layers[l].node] = {static_cast<int>(c), static_cast<int>(l)};
  add_graph_inputs();
  for (int i = 0; i < graph_.node_size(); ++i)
    if (live.count(&graph_.node(i))) visit(graph_.node(i), i);
  add_graph_outputs();
  prune();
  try {
    model_.validate();
  } catch (const Error& e) {
    where_.fail(e.what());
  }
  return std::move(model_);
}

void ModelImporter::add_graph_outputs() {
  if (graph_.output_size() == 0) where_.fail("the graph has no outputs");
  // Open axes no operator fixed: batch first, as torch's batch_first.
  for (int id = kFirstOpen; id < next_open_; id += 2)
    if (!bound_.count(id)) bound_[id] = kB, bound_[id + 1] = kT;
  for (const onnx::ValueInfoProto& o : graph_.output()) {
    const std::string name = gguf::printable(o.name());
    const auto it = tensors_.find(o.name());
    if (it == tensors_.end() || it->second.kind == Tensor::Const || it->second.kind == Tensor::Zeros)
      where_.fail("graph output '", name, "' is a constant or is computed by no node; fixq's outputs come from the data");
    if (it->second.kind == Tensor::Inner)
      where_.fail("graph output '", name, "' is an inner layer's output of a multi-layer GRU, which fixq runs as one operator");
    const Data& d = it->second.data;
    if (d.pad_left != 0 || d.trail != 0)
      where_.fail("graph output '", name, "' has the frames of a Pad or of a Conv's end padding; fixq's values keep T frames");
    ModelValue& v = model_.values[static_cast<std::size_t>(d.value)];
    std::string axes;
    for (const int a : d.axes) {
      const int r = role(a);
      axes += r == kB ? 'B' : r == kT ? 'T' : r == kC ? 'C' : r == kS ? 'S' : '?';
    }
    if (v.kind == ValueKind::State) {
      if (d.row0 != 0 || d.row1 != v.rows || axes != "SBC")
        where_.fail("graph output '", name, "' is part of a GRU's final state (rows ", d.row0, "..", d.row1, " of ",
                    v.rows, ", axes ", axes_str(d), "); fixq outputs a GRU's whole final state [layers * directions, batch, hidden]");
      axes = "SBH";
    } else if (d.last_frame) {
      // h_n[-1], y[:, -1] and what follows: the output is the value's last frame, [B, C].
      if (axes != "BC")
        where_.fail("graph output '", name, "' is the last frame of a sequence with axes ", axes_str(d),
                    "; fixq supports [batch, features] there");
    } else if (axes != "BTC" && axes != "TBC" && axes != "BCT" && axes != "TC") {
      where_.fail("graph output '", name, "' has axes ", axes_str(d),
                  "; fixq's outputs are [batch, time, features] in any order, or [time, features]");
    }
    for (const int i : model_.inputs)
      if (i == d.value) where_.fail("graph output '", name, "' is graph input '", gguf::printable(v.name), "' itself");
    for (const int i : model_.outputs)
      if (i == d.value) where_.fail("graph outputs '", gguf::printable(v.name), "' and '", name, "' are the same tensor");
    const int other = model_.find_value(o.name());
    if (other >= 0 && other != d.value) model_.values[static_cast<std::size_t>(other)].name += "#internal";
    v.name = o.name();
    v.layout.axes = axes;
    model_.outputs.push_back(d.value);
  }
  for (const onnx::ValueInfoProto& in : graph_.input()) {
    const auto it = tensors_.find(in.name());
    if (it == tensors_.end() || it->second.kind != Tensor::DataView || constants_.count(in.name())) continue;
    ModelValue& v = model_.values[static_cast<std::size_t>(it->second.data.value)];
    if (v.kind == ValueKind::State) continue;
    std::string axes;
    for (const int a : it->second.data.axes) axes += role(a) == kB ? 'B' : role(a) == kT ? 'T' : 'C';
    v.layout.axes = axes;
  }
}

void ModelImporter::prune() {
  // A GRU's final state that no graph output reads is not computed.
  std::set<int> read(model_.outputs.begin(), model_.outputs.end());
  for (const ModelNode& m : model_.nodes) read.insert(m.inputs.begin(), m.inputs.end());
  std::vector<int> keep(model_.values.size(), 1);
  for (ModelNode& m : model_.nodes)
    if (m.op == ModelOp::Gru && m.outputs.size() > 1 && m.outputs[1] >= 0 && !read.count(m.outputs[1])) {
      keep[static_cast<std::size_t>(m.outputs[1])] = 0;
      m.outputs[1] = -1;
    }
  std::vector<int> index(model_.values.size(), -1);
  std::vector<ModelValue> values;
  for (std::size_t v = 0; v < model_.values.size(); ++v)
    if (keep[v]) {
      index[v] = static_cast<int>(values.size());
      values.push_back(std::move(model_.values[v]));
    }
  const auto remap = [&](std::vector<int>& ids) {
    for (int& i : ids)
      if (i >= 0) i = index[static_cast<std::size_t>(i)];
  };
  for (ModelNode& m : model_.nodes) remap(m.inputs), remap(m.outputs);
  remap(model_.inputs);
  remap(model_.outputs);
  model_.values = std::move(values);
}

// ---- computing operators

void ModelImporter::gemm(const onnx::NodeProto& n) {
  const Data a = data_input(n, 0);
  if (int_attribute(n, "transA", 0) != 0) fail_node(n, "transA = 1 is not supported; fixq supports Gemm with the data as A");
  if (a.axes.size() != 2 || role(a.axes[1]) != kC)
    fail_node(n, "its A has axes ", axes_str(a), "; fixq supports Gemm of [batch or time, features]");
  const Folded& b = const_input(n, 1, "B");
  const bool trans_b = int_attribute(n, "transB", 0) != 0;
  const onnx::AttributeProto* alpha_a = attribute(n, "alpha");
  const onnx::AttributeProto* beta_a = attribute(n, "beta");
  const float alpha = alpha_a ? alpha_a->f() : 1.0f, beta = beta_a ? beta_a->f() : 1.0f;
  const int64_t K = features(a);
  if (!b.is_float || b.dims.size() != 2 || b.dims[trans_b ? 1 : 0] != K)
    fail_node(n, "its B has shape ", shape_str(b.dims), "; with transB = ", trans_b, " and ", K,
              " input features fixq needs a float ", trans_b ? "[N, " + std::to_string(K) + "]" : "[" + std::to_string(K) + ", N]");
  const int64_t N = b.dims[trans_b ? 0 : 1];
  std::vector<float> w(static_cast<std::size_t>(N * K));
  for (int64_t o = 0; o < N; ++o)
    for (int64_t k = 0; k < K; ++k)
      w[static_cast<std::size_t>(o * K + k)] = alpha * b.floats[static_cast<std::size_t>(trans_b ? o * K + k : k * N + o)];
  std::vector<float> bias;
  if (has_input(n, 2)) {
    const Folded& c = const_input(n, 2, "C");
    if (!c.is_float || (c.size() != N && c.size() != 1) || numel(c.dims) != c.size() ||
        (c.dims.size() == 2 && c.dims[0] != 1) || c.dims.size() > 2)
      fail_node(n, "its C has shape ", shape_str(c.dims), "; fixq supports a bias [", N, "]");
    for (int64_t o = 0; o < N; ++o) bias.push_back(beta * c.floats[static_cast<std::size_t>(c.size() == 1 ? 0 : o)]);
  }
  const int y = new_value(n, 0, N);
  ModelNode& m = new_node(n, ModelOp::Linear, {a.value}, {y});
  m.weight = std::move(w);
  m.bias = std::move(bias);
  m.in_features = K;
  m.out_features = N;
  Data d = a;
  d.value = y;
  set_data(n, 0, d);
}

void ModelImporter::matmul(const onnx::NodeProto& n) {
  if (input(n, 0).kind == Tensor::Const)
    fail_node(n, "multiplies a constant by the data; fixq supports MatMul of the data by a constant weight");
  const Data a = data_input(n, 0);
  if (input(n, 1).kind != Tensor::Const)
    fail_node(n, "multiplies two computed tensors; fixq supports MatMul of the data by a constant weight [in, out]");
  const Folded& b = const_input(n, 1, "weight");
  if (a.axes.empty() || role(a.axes.back()) != kC)
    fail_node(n, "its input has axes ", axes_str(a), "; fixq supports MatMul on the feature axis (last)");
  const int64_t K = features(a);
  if (!b.is_float || b.dims.size() != 2 || b.dims[0] != K)
    fail_node(n, "its weight has shape ", shape_str(b.dims), "; fixq needs a float [", K, ", out_features]");
  const int64_t N = b.dims[1];
  std::vector<float> w(static_cast<std::size_t>(N * K));
  for (int64_t o = 0; o < N; ++o)
    for (int64_t k = 0; k < K; ++k) w[static_cast<std::size_t>(o * K + k)] = b.floats[static_cast<std::size_t>(k * N + o)];
  const int y = new_value(n, 0, N);
  ModelNode& m = new_node(n, ModelOp::Linear, {a.value}, {y});
  m.weight = std::move(w);
  m.in_features = K;
  m.out_features = N;
  biasless_linear_[y] = static_cast<int>(model_.nodes.size()) - 1;
  Data d = a;
  d.value = y;
  set_data(n, 0, d);
}

void ModelImporter::binary(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  const Tensor& x = input(n, 0);
  const Tensor& y = input(n, 1);
  if (x.kind == Tensor::Const && y.kind == Tensor::Const) {
    Tensor t;
    t.constant = fold_arith(op, x.constant, y.constant);
    set_output(n, 0, std::move(t));
    return;
  }
  if (x.kind == Tensor::Const || y.kind == Tensor::Const) {
    const int di = x.kind == Tensor::Const ? 1 : 0;
    const Data d = data_input(n, di);
    const Folded& c = (di == 0 ? y : x).constant;
    const auto lin = biasless_linear_.find(d.value);
    // MatMul + Add: the bias of the Linear before it, when nothing else reads the product.
    if (op == "Add" && lin != biasless_linear_.end() && consumers_[n.input(di)] == 1 && c.is_float &&
        c.size() == features(d) && !d.axes.empty() && role(d.axes.back()) == kC &&
        std::all_of(c.dims.begin(), c.dims.empty() ? c.dims.end() : c.dims.end() - 1, [](int64_t e) { return e == 1; })) {
      model_.nodes[static_cast<std::size_t>(lin->second)].bias = c.floats;
      biasless_linear_.erase(lin);
      set_data(n, 0, d);
      return;
    }
    fail_node(n, op == "Add" ? "adds a constant; fixq supports a constant Add only as the bias right after a MatMul"
                             : "computes with a constant; fixq supports " + op + " of two computed tensors only" +
                                   (op == "Mul" ? " (a GLU's gate)" : ""));
  }
  if (op != "Add" && op != "Mul") fail_node(n, "is not supported on computed tensors; fixq supports Add and Mul");
  const Data a = data_input(n, 0);
  const Data b = data_input(n, 1);
  const ModelValue& va = model_.values[static_cast<std::size_t>(a.value)];
  const ModelValue& vb = model_.values[static_cast<std::size_t>(b.value)];
  std::vector<int> want;
  for (const int ax : a.axes) want.push_back(role(ax));
  if (va.kind != ValueKind::Sequence || vb.kind != ValueKind::Sequence || va.features != vb.features ||
      a.last_frame != b.last_frame || !expect_axes(n, b, want) || std::count(want.begin(), want.end(), kC) != 1)
    fail_node(n, "its operands have axes ", axes_str(a), " (", va.features, " features) and ", axes_str(b), " (",
              vb.features, " features); fixq supports ", op, " of two sequences of one shape (no broadcasting)");
  const int out = new_value(n, 0, va.features);
  new_node(n, op == "Add" ? ModelOp::Add : ModelOp::Mul, {a.value, b.value}, {out});
  Data d = a;
  d.value = out;
  set_data(n, 0, d);
}

void ModelImporter::unary(const onnx::NodeProto& n, ModelOp op) {
  const Data a = data_input(n, 0);
  if (model_.values[static_cast<std::size_t>(a.value)].kind != ValueKind::Sequence)
    fail_node(n, "reads a GRU state; fixq supports ", n.op_type(), " on sequences");
  const int out = new_value(n, 0, features(a));
  new_node(n, op, {a.value}, {out});
  Data d = a;
  d.value = out;
  set_data(n, 0, d);
}

void ModelImporter::softmax(const onnx::NodeProto& n) {
  const Data a = data_input(n, 0);
  const auto rank = static_cast<int64_t>(a.axes.size());
  const int64_t axis = axis_of(n, int_attribute(n, "axis", opset_ < 13 ? 1 : -1), rank);
  bool ok = role(a.axes[static_cast<std::size_t>(axis)]) == kC &&
            model_.values[static_cast<std::size_t>(a.value)].kind == ValueKind::Sequence;
  // Before opset 13 Softmax runs over every axis from `axis` on: only unit axes may follow.
  if (opset_ < 13)
    for (int64_t k = axis + 1; k < rank; ++k) ok = ok && role(a.axes[static_cast<std::size_t>(k)]) == kU;
  if (!ok) fail_node(n, "runs over axis ", axis, " of ", axes_str(a), "; fixq supports Softmax over the features");
  const int out = new_value(n, 0, features(a));
  new_node(n, ModelOp::Softmax, {a.value}, {out});
  Data d = a;
  d.value = out;
  set_data(n, 0, d);
}

void ModelImporter::conv(const onnx::NodeProto& n) {
  const Tensor& xt = input(n, 0);
  if (xt.kind != Tensor::DataView) (void)data_input(n, 0);  // its message
  const Data x = xt.data;
  if (x.trail != 0) (void)data_input(n, 0);
  const Folded& w = const_input(n, 1, "weight");
  if (w.dims.size() != 3)
    fail_node(n, "is a ", w.dims.size() >= 2 ? w.dims.size() - 2 : 0, "-D convolution; fixq supports 1-D (Conv1d)");
  if (!w.is_float) fail_node(n, "its weight is not float");
  const int64_t cout = w.dims[0], k = w.dims[2];
  const int64_t groups = int_attribute(n, "group", 1);
  bool found = false;
  const std::vector<int64_t> strides = ints_of(n, "strides", -1, found);
  for (const int64_t s : strides)
    if (s != 1) fail_node(n, "stride ", s, " is not supported; fixq supports stride 1");
  const std::vector<int64_t> dil = ints_of(n, "dilations", -1, found);
  const int64_t dilation = dil.empty() ? 1 : dil[0];
  if (dil.size() > 1 || dilation < 1) fail_node(n, "has dilations of ", dil.size(), " axes; fixq supports one, >= 1");
  const std::vector<int64_t> ks = ints_of(n, "kernel_shape", -1, found);
  if (found && ks != std::vector<int64_t>{k}) fail_node(n, "kernel_shape disagrees with its weight ", shape_str(w.dims));
  std::vector<int64_t> pads = ints_of(n, "pads", -1, found);
  if (!found) pads = {0, 0};
  if (pads.size() != 2) fail_node(n, "has ", pads.size(), " pads; a 1-D Conv has 2");
  if (const onnx::AttributeProto* ap = attribute(n, "auto_pad"); ap && ap->s() != "NOTSET" && ap->s() != "VALID")
    fail_node(n, "auto_pad ", gguf::printable(ap->s()), " is not supported; fixq supports explicit pads (NOTSET) or VALID");
  bool unbatched = false;  // x unsqueezed from [C, T] to [1, C, T]: d keeps that axis of 1
  if (!expect_axes_or_unbatched(n, x, {kB, kC, kT}, unbatched))
    fail_node(n, "reads its input as ", axes_str(x), "; fixq's Conv1d reads [batch, channels, time]");
  const int64_t cin = features(x);
  if (groups < 1 || cin % groups != 0 || cout % groups != 0 || w.dims[1] * groups != cin)
    fail_node(n, "has group ", groups, " and weight ", shape_str(w.dims), " for ", cin, " input channels");
  // Attributes are any int64: sums and products that overflow are no causal conv either.
  int64_t receptive = 0, left = 0;
  const bool overflow = __builtin_mul_overflow(k - 1, dilation, &receptive) || __builtin_add_overflow(x.pad_left, pads[0], &left);
  if (overflow || left != receptive || pads[1] < 0)
    fail_node(n, "is not causal: its input is padded by ", left, " frames on the left (Pad and pads); fixq's Conv1d needs "
              "(kernel - 1) * dilation = ", receptive, " there, by a Pad before it or by its pads followed by a Slice "
              "that drops the last frames");
  std::vector<float> bias;
  if (has_input(n, 2)) {
    const Folded& b = const_input(n, 2, "bias");
    if (!b.is_float || b.size() != cout) fail_node(n, "its bias has shape ", shape_str(b.dims), ", not [", cout, "]");
    bias = b.floats;
  }
  const int y = new_value(n, 0, cout);
  ModelNode& m = new_node(n, ModelOp::Conv1d, {x.value}, {y});
  m.weight = w.floats;
  m.bias = std::move(bias);
  m.in_features = cin;
  m.out_features = cout;
  m.kernel = k;
  m.dilation = dilation;
  m.groups = groups;
  Data d = x;
  d.value = y;
  d.pad_left = 0;
  d.pad_node.clear();
  d.trail = pads[1];
  d.trail_node = label(n);
  set_data(n, 0, d);
}

void ModelImporter::gru(const onnx::NodeProto& n) {
  const auto [c, l] = gru_layer_.at(&n);
  const Chain& chain = chains_[static_cast<std::size_t>(c)];
  const GruNode& g = chain.layers[static_cast<std::size_t>(l)];
  const int64_t D = g.directions;
  const int L = static_cast<int>(chain.layers.size());
  if (has_input(n, 4)) fail_node(n, "has sequence_lens; fixq's whole models run every sequence for all T frames");
  // The initial state: none, zeros (torch's default), or rows [l D, (l+1) D) of a State input.
  int state_in = -1;
  if (has_input(n, 5)) {
    const Tensor& h = input(n, 5);
    if (h.kind == Tensor::DataView) {
      const Data& s = h.data;
      const ModelValue& v = model_.values[static_cast<std::size_t>(s.value)];
      const bool inputs = std::find(model_.inputs.begin(), model_.inputs.end(), s.value) != model_.inputs.end();
      if (v.kind != ValueKind::State || !inputs || s.row0 != l * D || s.row1 != (l + 1) * D || v.rows != L * D ||
          s.axes.size() != 3 || role(s.axes[0]) != kS || role(s.axes[1]) != kB || g.layout != 0)
        fail_node(n, "its initial_h is not rows ", l * D, "..", (l + 1) * D, " of a graph input [", L * D,
                  ", batch, hidden]; fixq's GRU takes its initial state as one input of all its layers");
      state_in = s.value;
    } else if (h.kind == Tensor::Const) {
      // tf2onnx writes a constant of zeros where the state starts from zero.
      const Folded& c = h.constant;
      if (!c.is_float || std::any_of(c.floats.begin(), c.floats.end(), [](float v) { return v != 0.0f; }))
        fail_node(n, "its initial_h is a constant other than zeros; fixq's GRU starts from zeros or from a graph input");
    } else if (h.kind != Tensor::Zeros) {
      fail_node(n, "its initial_h is an inner layer's output");
    }
  }
  if (l == 0) {
    chain_state_in_[c] = state_in;
  } else if (chain_state_in_[c] != state_in) {
    fail_node(n, "starts from another initial state than layer 0 of its GRU");
  }
  if (l == 0) {
    const Data x = data_input(n, 0);
    const std::vector<int> want = g.layout == 0 ? std::vector<int>{kT, kB, kC} : std::vector<int>{kB, kT, kC};
    bool unbatched = false;
    if (!expect_axes_or_unbatched(n, x, want, unbatched) ||
        model_.values[static_cast<std::size_t>(x.value)].kind != ValueKind::Sequence || x.last_frame)
      fail_node(n, "reads X as ", axes_str(x), "; layout ", g.layout, " needs ",
                g.layout == 0 ? "[time, batch, features]" : "[batch, time, features]");
    if (unbatched) unbatched_chains_.insert(c);
    auto model = std::make_shared<GruModel>(chain_model(where_, chain, constants_));
    if (model->input_size != features(x))
      fail_node(n, "takes ", model->input_size, " input features, but its X has ", features(x));
    const onnx::NodeProto& top = *chain.layers.back().node;
    const int y = new_value(top, 0, D * model->hidden_size);
    bool any_state = false;
    for (const GruNode& layer : chain.layers)
      any_state = any_state || (layer.node->output_size() > 1 && !layer.node->output(1).empty());
    int final_state = -1;
    if (any_state) {
      final_state = new_value(top, 1, model->hidden_size, ValueKind::State);
      model_.values[static_cast<std::size_t>(final_state)].rows = L * D;
    }
    ModelNode& m = new_node(n, ModelOp::Gru, {x.value, state_in}, {y, final_state});
    m.gru = std::move(model);
    chain_node_[c] = static_cast<int>(model_.nodes.size()) - 1;
  } else {
    const Tensor& x = input(n, 0);
    if (x.kind != Tensor::Inner || x.chain != c) fail_node(n, "is a later layer of a GRU but reads another X");
  }
  const ModelNode& m = model_.nodes[static_cast<std::size_t>(chain_node_.at(c))];
  const int batch = unbatched_chains_.count(c) ? kU : kB;
  if (l + 1 < L) {
    Tensor t;
    t.kind = Tensor::Inner;
    t.chain = c;
    set_output(n, 0, std::move(t));
  } else {
    Data y;
    y.value = m.outputs[0];
    const int dir = D == 2 ? kD : kU, hid = D == 2 ? kH : kC;
    y.axes = g.layout == 0 ? std::vector<int>{kT, dir, batch, hid} : std::vector<int>{batch, kT, dir, hid};
    set_data(n, 0, y);
  }
  if (n.output_size() > 1 && !n.output(1).empty()) {
    Data h;
    h.value = m.outputs[1];
    h.axes = g.layout == 0 ? std::vector<int>{kS, batch, kC} : std::vector<int>{batch, kS, kC};
    h.row0 = l * D;
    h.row1 = (l + 1) * D;
    set_data(n, 1, h);
  }
}

void ModelImporter::concat(const onnx::NodeProto& n) {
  if (!attribute(n, "axis")) fail_node(n, "has no axis");
  const int64_t axis = int_attribute(n, "axis", 0);
  if (n.input_size() < 1) fail_node(n, "has no inputs");
  bool all_const = true;
  for (int i = 0; i < n.input_size(); ++i) all_const = all_const && input(n, i).kind == Tensor::Const;
  if (all_const) {
    std::vector<const Folded*> xs;
    for (int i = 0; i < n.input_size(); ++i) xs.push_back(&input(n, i).constant);
    Tensor t;
    t.constant = fold_concat(xs, axis_of(n, axis, static_cast<int64_t>(xs[0]->dims.size())));
    set_output(n, 0, std::move(t));
    return;
  }
  const Data first = data_input(n, 0);
  const int64_t a = axis_of(n, axis, static_cast<int64_t>(first.axes.size()));
  const ModelValue& fv = model_.values[static_cast<std::size_t>(first.value)];
  if (fv.kind == ValueKind::State) {
    // torch's h_n: the layers' Y_h one after the other, rows of one final state.
    Data d = first;
    for (int i = 1; i < n.input_size(); ++i) {
      const Data s = data_input(n, i);
      if (s.value != d.value || s.row0 != d.row1 || role(first.axes[static_cast<std::size_t>(a)]) != kS)
        fail_node(n, "concatenates GRU states that are not consecutive layers of one GRU");
      d.row1 = s.row1;
    }
    set_data(n, 0, d);
    return;
  }
  if (role(first.axes[static_cast<std::size_t>(a)]) != kC)
    fail_node(n, "concatenates along axis ", axis, " of ", axes_str(first), "; fixq supports Concat of the features");
  std::vector<int> want, ins;
  for (const int ax : first.axes) want.push_back(role(ax));
  int64_t total = 0;
  for (int i = 0; i < n.input_size(); ++i) {
    const Data d = data_input(n, i);
    const ModelValue& v = model_.values[static_cast<std::size_t>(d.value)];
    if (v.kind != ValueKind::Sequence || d.last_frame != first.last_frame || !expect_axes(n, d, want))
      fail_node(n, "its input '", gguf::printable(n.input(i)), "' has axes ", axes_str(d), ", its first ",
                axes_str(first), "; fixq concatenates sequences of the same axes");
    ins.push_back(d.value);
    total += v.features;
  }
  const int out = new_value(n, 0, total);
  new_node(n, ModelOp::Concat, ins, {out});
  Data d = first;
  d.value = out;
  set_data(n, 0, d);
}

void ModelImporter::split(const onnx::NodeProto& n) {
  const Data x = data_input(n, 0);
  const int64_t a = axis_of(n, int_attribute(n, "axis", 0), static_cast<int64_t>(x.axes.size()));
  if (role(x.axes[static_cast<std::size_t>(a)]) != kC ||
      model_.values[static_cast<std::size_t>(x.value)].kind != ValueKind::Sequence)
    fail_node(n, "splits axis ", a, " of ", axes_str(x), "; fixq supports Split of the features");
  const int64_t C = features(x);
  bool found = false;
  std::vector<int64_t> sizes = ints_of(n, "split", 1, found);
  const int parts = n.output_size();
  if (!found) {
    if (parts < 1) fail_node(n, "has no outputs");
    const int64_t each = (C + parts - 1) / parts;  // ONNX: the last part may be smaller
    for (int i = 0; i < parts; ++i) sizes.push_back(std::min(each, C - each * i));
  }
  int64_t sum = 0;
  for (const int64_t s : sizes) {
    if (s < 1 || s > C) fail_node(n, "has a part of ", s, " features, of ", C);
    sum += s;  // at most parts * C: no overflow
  }
  if (static_cast<int>(sizes.size()) != parts || sum != C)
    fail_node(n, "splits ", C, " features into ", sizes.size(), " parts of ", sum, " for ", parts, " outputs");
  int64_t begin = 0;
  for (int i = 0; i < parts; ++i) {
    const int64_t s = sizes[static_cast<std::size_t>(i)];
    const int out = new_value(n, i, s);
    ModelNode& m = new_node(n, ModelOp::Slice, {x.value}, {out}, ":" + std::to_string(i));
    m.begin = begin;
    m.end = begin + s;
    begin += s;
    Data d = x;
    d.value = out;
    set_data(n, i, d);
  }
}

void ModelImporter::slice(const onnx::NodeProto& n) {
  bool found = false;
  // opset >= 10: starts, ends, axes, steps are inputs; before, attributes (no steps).
  const std::vector<int64_t> starts = ints_of(n, opset_ < 10 ? "starts" : nullptr, opset_ < 10 ? -1 : 1, found);
  const std::vector<int64_t> ends = ints_of(n, opset_ < 10 ? "ends" : nullptr, opset_ < 10 ? -1 : 2, found);
  std::vector<int64_t> axes = ints_of(n, opset_ < 10 ? "axes" : nullptr, opset_ < 10 ? -1 : 3, found);
  const bool have_axes = found;
  std::vector<int64_t> steps = ints_of(n, nullptr, opset_ < 10 ? -1 : 4, found);
  if (starts.size() != ends.size()) fail_node(n, "has ", starts.size(), " starts and ", ends.size(), " ends");
  if (!have_axes)
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (!found) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) fail_node(n, "has operands of unequal lengths");
  const Tensor& t = input(n, 0);
  if (t.kind == Tensor::Const || t.kind == Tensor::Zeros) {
    Folded f = t.constant;
    Tensor out = t;
    for (std::size_t i = 0; i < starts.size(); ++i) {
      if (t.kind == Tensor::Const) {
        const int64_t a = axis_of(n, axes[i], static_cast<int64_t>(f.dims.size()));
        int64_t s = starts[i], e = ends[i];
        normalize_slice(f.dims[static_cast<std::size_t>(a)], steps[i], s, e);
        f = fold_slice(f, a, s, e, steps[i]);
      } else {
        // The shape of zeros: known extents sliced, the data's sizes kept whole.
        const int64_t a = axis_of(n, axes[i], f.size());
        Dim& d = f.ints[static_cast<std::size_t>(a)];
        int64_t s = starts[i], e = ends[i];
        if (steps[i] != 1) fail_node(n, "slices zeros with step ", steps[i]);
        if (!d.known()) {
          if (s != 0 || e < (int64_t{1} << 31)) fail_node(n, "slices the batch or time axis of zeros");
          continue;
        }
        normalize_slice(d.v, 1, s, e);
        d.v = std::max<int64_t>(0, e - s);
      }
    }
    out.constant = std::move(f);
    set_output(n, 0, std::move(out));
    return;
  }
  if (t.kind != Tensor::DataView) (void)data_input(n, 0);
  Data d = t.data;
  if (d.pad_left != 0) (void)data_input(n, 0);
  const ModelValue& v = model_.values[static_cast<std::size_t>(d.value)];
  int64_t begin = 0, end = v.features;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const int64_t a = axis_of(n, axes[i], static_cast<int64_t>(d.axes.size()));
    const int r = role(d.axes[static_cast<std::size_t>(a)]);
    int64_t s = starts[i], e = ends[i];
    const bool whole = s == 0 && e >= (int64_t{1} << 31) && steps[i] == 1;
    if (r == kT) {
      if (d.trail > 0 && s == 0 && e == -d.trail && steps[i] == 1) {
        d.trail = 0;
        d.trail_node.clear();
      } else if (s == -1 && e >= (int64_t{1} << 31) && steps[i] == 1 && d.trail == 0 && !d.last_frame) {
        // y[:, -1:]: the last frame, its time axis now of extent 1.
        d.last_frame = true;
        d.axes[static_cast<std::size_t>(a)] = kU;
      } else if (!whole) {
        fail_node(n, "slices the time axis; fixq keeps every frame (it supports a Slice of the time axis only to drop "
                  "the frames a Conv's end padding added, or [-1:] for the last frame)");
      }
    } else if (r == kC && v.kind == ValueKind::Sequence) {
      if (steps[i] != 1) fail_node(n, "slices the features with step ", steps[i], "; fixq supports step 1");
      normalize_slice(v.features, 1, s, e);
      begin = s;
      end = e;
      if (end <= begin) fail_node(n, "selects no features (", s, "..", e, " of ", v.features, ")");
    } else if (r == kS) {
      if (steps[i] != 1) fail_node(n, "slices GRU state rows with step ", steps[i]);
      normalize_slice(d.row1 - d.row0, 1, s, e);
      d.row1 = d.row0 + e;
      d.row0 += s;
      if (d.row1 <= d.row0) fail_node(n, "selects no rows of a GRU state");
    } else if (!(whole || (r == kU && s == 0 && e >= 1 && steps[i] == 1))) {
      fail_node(n, "slices axis ", a, " of ", axes_str(d), "; fixq supports Slice of the features");
    }
  }
  if (begin != 0 || end != v.features) {
    if (d.trail != 0) (void)data_input(n, 0);
    const int out = new_value(n, 0, end - begin);
    ModelNode& m = new_node(n, ModelOp::Slice, {d.value}, {out});
    m.begin = begin;
    m.end = end;
    d.value = out;
  }
  set_data(n, 0, d);
}

}  // namespace onnx_import

Model load_model_onnx(const std::string& path) {
  const onnx_import::Where where{"load_model_onnx", path};
  const onnx::ModelProto proto = onnx_import::read_onnx_model(where);
  return onnx_import::ModelImporter(where, proto).run();
}

}  // namespace fixq
