// The graph IR of fixq/model.h: operator names, layouts, and validate(), the one place that
// proves a graph is well formed before anything runs it.
#include <cmath>
#include <set>

#include "fixq/error.h"
#include "fixq/model.h"

namespace fixq {

namespace {

constexpr ModelOp kOps[] = {ModelOp::Linear, ModelOp::Conv1d, ModelOp::Gru,    ModelOp::Add,
                            ModelOp::Mul,    ModelOp::Tanh,   ModelOp::Sigmoid, ModelOp::Relu,
                            ModelOp::Concat, ModelOp::Slice,  ModelOp::Softmax};

bool all_finite(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

}  // namespace

std::string to_string(ModelOp op) {
  switch (op) {
    case ModelOp::Linear: return "linear";
    case ModelOp::Conv1d: return "conv1d";
    case ModelOp::Gru: return "gru";
    case ModelOp::Add: return "add";
    case ModelOp::Mul: return "mul";
    case ModelOp::Tanh: return "tanh";
    case ModelOp::Sigmoid: return "sigmoid";
    case ModelOp::Relu: return "relu";
    case ModelOp::Concat: return "concat";
    case ModelOp::Slice: return "slice";
    case ModelOp::Softmax: return "softmax";
  }
  fail("internal: unknown ModelOp ", static_cast<int>(op));
}

ModelOp parse_model_op(const std::string& name) {
  std::string known;
  for (ModelOp op : kOps) {
    if (to_string(op) == name) return op;
    known += (known.empty() ? "" : ", ") + to_string(op);
  }
  fail("unknown model operator '", name, "': fixq knows ", known);
}

bool ValueLayout::valid(const std::string& axes, ValueKind kind) {
  if (kind == ValueKind::State) return axes == "SBH";
  return axes == "BTC" || axes == "TBC" || axes == "BCT" || axes == "TC" || axes == "BC";
}

int Model::find_value(const std::string& name) const {
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].name == name) return static_cast<int>(i);
  return -1;
}

void Model::validate() const {
  const int nv = static_cast<int>(values.size());
  std::set<std::string> names;
  for (const ModelValue& v : values) {
    require(!v.name.empty(), "model: a value has no name");
    require(names.insert(v.name).second, "model: two values are named '", v.name, "'");
    require(v.features >= 1, "model: value '", v.name, "' has ", v.features, " features");
    if (v.kind == ValueKind::State) require(v.rows >= 1, "model: state '", v.name, "' has ", v.rows, " rows");
    else require(v.rows == 0, "model: sequence '", v.name, "' has rows = ", v.rows, " (only a state has rows)");
  }
  // producer[v]: -2 graph input, -1 not yet produced, else the node index.
  std::vector<int> producer(values.size(), -1);
  std::vector<bool> consumed(values.size(), false);
  auto check_index = [&](int v, const std::string& what) {
    require(v >= 0 && v < nv, "model: ", what, " refers to value ", v, ", outside [0, ", nv, ")");
  };
  require(!inputs.empty(), "model: no graph inputs");
  require(!outputs.empty(), "model: no graph outputs");
  for (int v : inputs) {
    check_index(v, "a graph input");
    require(producer[static_cast<size_t>(v)] == -1, "model: value '", values[static_cast<size_t>(v)].name,
            "' is listed twice as a graph input");
    producer[static_cast<size_t>(v)] = -2;
  }
  std::set<std::string> node_names;
  for (size_t n = 0; n < nodes.size(); ++n) {
    const ModelNode& node = nodes[n];
    const std::string where = "model: node '" + node.name + "' (" + to_string(node.op) + ")";
    require(!node.name.empty(), "model: node ", n, " has no name");
    require(node_names.insert(node.name).second, "model: two nodes are named '", node.name, "'");
    const bool gru = node.op == ModelOp::Gru;
    if (gru) {
      require(node.inputs.size() == 2 && node.outputs.size() == 2, where,
              ": a GRU has inputs {x, initial state or -1} and outputs {y, final state or -1}");
    } else {
      require(!node.inputs.empty() && node.outputs.size() == 1, where, ": needs its inputs and one output");
    }
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int v = node.inputs[i];
      if (gru && i == 1 && v == -1) continue;
      check_index(v, where + " input");
      require(producer[static_cast<size_t>(v)] != -1, where, " reads '", values[static_cast<size_t>(v)].name,
              "', which no earlier node produces and which is no graph input (a cycle or a dangling input)");
      consumed[static_cast<size_t>(v)] = true;
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const int v = node.outputs[i];
      if (gru && i == 1 && v == -1) continue;
      check_index(v, where + " output");
      require(producer[static_cast<size_t>(v)] == -1, where, " writes '", values[static_cast<size_t>(v)].name,
              "', which ", producer[static_cast<size_t>(v)] == -2 ? "is a graph input" : "another node writes");
      producer[static_cast<size_t>(v)] = static_cast<int>(n);
    }
    auto val = [&](int v) -> const ModelValue& { return values[static_cast<size_t>(v)]; };
    auto seq = [&](int v, const char* role) {
      require(val(v).kind == ValueKind::Sequence, where, ": its ", role, " '", val(v).name, "' must be a sequence");
      return val(v).features;
    };
    const int64_t out_c = gru ? seq(node.outputs[0], "output") : seq(node.outputs[0], "output");
    if (!gru)
      for (int v : node.inputs) seq(v, "input");
    switch (node.op) {
      case ModelOp::Linear:
      case ModelOp::Conv1d: {
        require(node.inputs.size() == 1, where, ": one input");
        require(node.in_features >= 1 && node.out_features >= 1, where, ": in_features and out_features must be >= 1");
        require(val(node.inputs[0]).features == node.in_features, where, ": input has ", val(node.inputs[0]).features,
                " features, in_features is ", node.in_features);
        require(out_c == node.out_features, where, ": output has ", out_c, " features, out_features is ", node.out_features);
        int64_t per_row = node.in_features;
        if (node.op == ModelOp::Conv1d) {
          require(node.kernel >= 1 && node.dilation >= 1 && node.groups >= 1, where,
                  ": kernel, dilation and groups must be >= 1 (", node.kernel, ", ", node.dilation, ", ", node.groups, ")");
          require(node.in_features % node.groups == 0 && node.out_features % node.groups == 0, where, ": groups ",
                  node.groups, " must divide both channel counts (", node.in_features, ", ", node.out_features, ")");
          require(node.kernel - 1 <= (int64_t{1} << 30) / node.dilation, where, ": (kernel - 1) * dilation is too large");
          per_row = checked_mul<int64_t>(node.in_features / node.groups, node.kernel, where, " weight size");
        } else {
          require(node.kernel == 1 && node.dilation == 1 && node.groups == 1, where, ": kernel, dilation and groups are Conv1d's");
        }
        const int64_t wsize = checked_mul<int64_t>(node.out_features, per_row, where, " weight size");
        require(static_cast<int64_t>(node.weight.size()) == wsize, where, ": weight has ", node.weight.size(),
                " values, expected ", wsize);
        require(node.bias.empty() || static_cast<int64_t>(node.bias.size()) == node.out_features, where, ": bias has ",
                node.bias.size(), " values, expected ", node.out_features, " or none");
        require(all_finite(node.weight) && all_finite(node.bias), where, ": weight or bias is not finite");
        break;
      }
      case ModelOp::Gru: {
        require(node.gru != nullptr, where, ": no GRU model");
        try {
          node.gru->validate();
        } catch (const Error& e) {
          fail(where, ": ", e.what());
        }
        const GruModel& g = *node.gru;
        require(seq(node.inputs[0], "input") == g.input_size, where, ": input has ", val(node.inputs[0]).features,
                " features, the GRU expects ", g.input_size);
        require(out_c == g.directions() * g.hidden_size, where, ": output has ", out_c, " features, the GRU gives ",
                g.directions() * g.hidden_size);
        const int64_t rows = g.num_layers * g.directions();
        for (int v : {node.inputs[1], node.outputs[1]}) {
          if (v == -1) continue;
          require(val(v).kind == ValueKind::State && val(v).features == g.hidden_size && val(v).rows == rows, where,
                  ": state '", val(v).name, "' must be a state [", rows, ", B, ", g.hidden_size, "]");
        }
        break;
      }
      case ModelOp::Add:
      case ModelOp::Mul:
        require(node.inputs.size() == 2, where, ": two inputs");
        require(val(node.inputs[0]).features == out_c && val(node.inputs[1]).features == out_c, where,
                ": both inputs and the output must have the same features");
        break;
      case ModelOp::Tanh:
      case ModelOp::Sigmoid:
      case ModelOp::Relu:
      case ModelOp::Softmax:
        require(node.inputs.size() == 1, where, ": one input");
        require(val(node.inputs[0]).features == out_c, where, ": input and output must have the same features");
        break;
      case ModelOp::Concat: {
        int64_t sum = 0;
        for (int v : node.inputs) sum = checked_add<int64_t>(sum, val(v).features, where, " features");
        require(sum == out_c, where, ": inputs have ", sum, " features in all, the output ", out_c);
        break;
      }
      case ModelOp::Slice:
        require(node.inputs.size() == 1, where, ": one input");
        require(node.begin >= 0 && node.begin < node.end && node.end <= val(node.inputs[0]).features, where,
                ": [", node.begin, ", ", node.end, ") is no slice of ", val(node.inputs[0]).features, " features");
        require(out_c == node.end - node.begin, where, ": output has ", out_c, " features, the slice ", node.end - node.begin);
        break;
    }
  }
  for (int v = 0; v < nv; ++v) {
    const ModelValue& mv = values[static_cast<size_t>(v)];
    require(producer[static_cast<size_t>(v)] != -1, "model: value '", mv.name, "' is neither produced nor a graph input");
  }
  std::set<int> outs;
  for (int v : outputs) {
    check_index(v, "a graph output");
    require(outs.insert(v).second, "model: value '", values[static_cast<size_t>(v)].name, "' is listed twice as an output");
  }
  for (int v : inputs) {
    const ModelValue& mv = values[static_cast<size_t>(v)];
    require(ValueLayout::valid(mv.layout.axes, mv.kind), "model: input '", mv.name, "' has layout '", mv.layout.axes,
            "', not one of a ", mv.kind == ValueKind::State ? "state's (SBH)" : "sequence's (BTC, TBC, BCT, TC)");
    require(mv.layout.axes != "BC", "model: input '", mv.name,
            "' has layout 'BC' (the last frame), which only an output has; inputs are BTC, TBC, BCT or TC");
    require(consumed[static_cast<size_t>(v)] || outs.count(v), "model: input '", mv.name, "' is never read");
  }
  for (int v : outputs) {
    const ModelValue& mv = values[static_cast<size_t>(v)];
    require(ValueLayout::valid(mv.layout.axes, mv.kind), "model: output '", mv.name, "' has layout '", mv.layout.axes,
            "', not one of a ", mv.kind == ValueKind::State ? "state's (SBH)" : "sequence's (BTC, TBC, BCT, TC, BC)");
  }
  bool any_sequence = false;
  for (int v : inputs) any_sequence |= values[static_cast<size_t>(v)].kind == ValueKind::Sequence;
  require(any_sequence, "model: no sequence input (B and T come from one)");
}

}  // namespace fixq
