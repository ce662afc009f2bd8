// The GRU nodes of ONNX graphs as fixq GRUs (gru_chain.h), for load_gru_onnx and
// load_model_onnx.
//
// ONNX GRU (operator spec, opsets 7..22): inputs X [T, B, C], W [D, 3H, C], R [D, 3H, H],
// B [D, 6H] (Wb then Rb), sequence_lens, initial_h; gates z, r, h in that order, which is
// fixq's z, r, g. With linear_before_reset = 1,
//   h~ = tanh(W_h x + Wb_h + r * (R_h h + Rb_h)),
// the cuDNN / PyTorch cell; with 0 (the default) the reset-before cell. Outputs
// Y [T, D, B, H] and Y_h [D, B, H] (layout 1: X [B, T, C], Y [B, T, D, H], Y_h [B, D, H]).
#include "onnx_import/gru_chain.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "fixq/gguf_file.h"  // printable()
#include "onnx_import/tensor.h"

namespace fixq::onnx_import {
namespace {

// protobuf refuses messages of 2 GiB and more; larger models keep their weights external.
constexpr uint64_t kMaxModelBytes = (uint64_t{1} << 31) - 1;


std::string read_file(const Where& where) {
  int fd;
  do fd = ::open(where.path.c_str(), O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) fail_io(errno, where.who, ": ", where.path, ": cannot open");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    where.fail("not a regular file");
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > kMaxModelBytes) {
    ::close(fd);
    where.fail(size, " bytes: beyond protobuf's 2 GiB limit for one message");
  }
  std::string bytes(size, '\0');
  uint64_t done = 0;
  while (done < size) {
    const ssize_t got = ::pread(fd, bytes.data() + done, size - done, static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      const int err = got < 0 ? errno : 0;  // before close() can change errno
      ::close(fd);
      if (err != 0) fail_io(err, where.who, ": ", where.path, ": read error");
      fail_io(0, where.who, ": ", where.path, ": read error: the file shrank while reading it");
    }
    done += static_cast<uint64_t>(got);
  }
  ::close(fd);
  return bytes;
}

}  // namespace

onnx::ModelProto read_onnx_model(const Where& where) {
  const std::string bytes = read_file(where);
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    where.fail("not an ONNX model: the bytes do not parse as an onnx.ModelProto (truncated or another format?)");
  if (!model.has_graph()) where.fail("the model has no graph");
  return model;
}

const onnx::AttributeProto* attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const onnx::AttributeProto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t int_attribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  const onnx::AttributeProto* a = attribute(node, name);
  return a ? a->i() : fallback;
}

namespace {

std::string node_label(const onnx::NodeProto& node, int index) {
  return node.name().empty() ? "GRU node #" + std::to_string(index) : "GRU node '" + gguf::printable(node.name()) + "'";
}

}  // namespace


GruNode check_gru_node(const Where& where, const onnx::NodeProto& node, int index, const Constants& constants,
                       bool allow_layout1) {
  GruNode g{&node, index, node_label(node, index)};
  const std::string& who = g.label;
  const onnx::AttributeProto* dir = attribute(node, "direction");
  const std::string direction = dir ? dir->s() : "forward";
  if (direction == "bidirectional")
    g.directions = 2;
  else if (direction == "reverse")
    where.fail(who, " runs in direction \"reverse\" only; fixq's GRU runs forward, or both ways (bidirectional)");
  else if (direction != "forward")
    where.fail(who, " has direction \"", gguf::printable(direction), "\" (ONNX allows forward, reverse, bidirectional)");
  // 0 (the default): tanh(W x + Wb + R (r * h) + Rb); 1: tanh(W x + Wb + r * (R h + Rb)).
  const int64_t lbr = int_attribute(node, "linear_before_reset", 0);
  if (lbr != 0 && lbr != 1)
    where.fail(who, " has linear_before_reset = ", lbr, "; ONNX defines 0 (reset-before) or 1 (reset-after)");
  g.cell_kind = lbr == 0 ? GruCellKind::ResetBefore : GruCellKind::ResetAfter;
  if (const onnx::AttributeProto* a = attribute(node, "activations")) {
    const std::vector<std::string> want = {"Sigmoid", "Tanh", "Sigmoid", "Tanh"};
    for (int i = 0; i < a->strings_size(); ++i)
      if (a->strings(i) != want[static_cast<std::size_t>(i % 4)] || i >= g.directions * 2)
        where.fail(who, " uses activation '", gguf::printable(a->strings(i)), "'; fixq's GRU has sigmoid gates and a tanh candidate");
  }
  if (attribute(node, "clip")) where.fail(who, " clips its gate inputs (attribute clip); fixq's GRU does not");
  g.layout = static_cast<int>(int_attribute(node, "layout", 0));
  if (g.layout != 0 && (g.layout != 1 || !allow_layout1))
    where.fail(who, " has layout = ", int_attribute(node, "layout", 0),
               " (batch-major X and Y); export with layout 0 (torch does, also for batch_first)");
  if (node.input_size() < 3 || node.output_size() < 1)
    where.fail(who, " has ", node.input_size(), " inputs and ", node.output_size(),
              " outputs; a GRU takes at least X, W, R and gives Y");
  if (const onnx::AttributeProto* h = attribute(node, "hidden_size")) g.hidden = h->i();
  // Without the attribute, R [D, 3H, H] says it (checked in full when the weights are read).
  const auto r = constants.find(node.input(2));
  if (g.hidden == 0 && r != constants.end() && r->second->dims_size() == 3) g.hidden = r->second->dims(2);
  return g;
}

namespace {

// The weights of one GRU node as fixq cells (one per direction).
std::vector<GruCell> node_cells(const Where& where, const GruNode& g, const Constants& constants) {
  const onnx::NodeProto& node = *g.node;
  const auto constant = [&](int input, const char* role) -> const onnx::TensorProto* {
    if (input >= node.input_size() || node.input(input).empty()) return nullptr;
    const auto it = constants.find(node.input(input));
    if (it == constants.end())
      where.fail(g.label, ": its ", role, " '", gguf::printable(node.input(input)),
                "' is computed by the graph or fed as an input, not a constant (an initializer or Constant node); "
                "export with the weights folded into the model");
    return it->second;
  };
  const onnx::TensorProto* W = constant(1, "W");
  const onnx::TensorProto* R = constant(2, "R");
  const onnx::TensorProto* B = constant(3, "B");
  if (!W || !R) where.fail(g.label, " has no W or R input");
  const std::string wn = g.label + " W '" + gguf::printable(node.input(1)) + "'";
  const std::string rn = g.label + " R '" + gguf::printable(node.input(2)) + "'";
  const Shape ws = tensor_shape(*W, wn), rs = tensor_shape(*R, rn);
  const int64_t D = g.directions;
  if (rs.size() != 3 || rs[0] != D || rs[2] < 1 || !is_product(rs[1], 3, rs[2]))
    where.fail(rn, " has shape ", shape_str(rs), ", expected [", D, ", 3 * hidden_size, hidden_size]");
  const int64_t H = rs[2];
  if (g.hidden != 0 && g.hidden != H)
    where.fail(g.label, " has hidden_size ", g.hidden, " but R ", shape_str(rs), " says ", H);
  if (ws.size() != 3 || ws[0] != D || ws[1] != 3 * H || ws[2] < 1)
    where.fail(wn, " has shape ", shape_str(ws), ", expected [", D, ", ", 3 * H, ", input_size]");
  const int64_t C = ws[2];
  const std::vector<float> w = tensor_floats(*W, wn), r = tensor_floats(*R, rn);
  std::vector<float> b(static_cast<std::size_t>(D * 6 * H), 0.0f);  // an absent B is zero
  if (B) {
    const std::string bn = g.label + " B '" + gguf::printable(node.input(3)) + "'";
    const Shape bs = tensor_shape(*B, bn);
    if (bs != Shape{D, 6 * H}) where.fail(bn, " has shape ", shape_str(bs), ", expected [", D, ", ", 6 * H, "]");
    b = tensor_floats(*B, bn);
  }
  std::vector<GruCell> cells;
  for (int64_t d = 0; d < D; ++d) {
    GruCell c;
    c.input_size = C;
    c.hidden_size = H;
    const auto part = [](const std::vector<float>& v, int64_t begin, int64_t n) {
      return std::vector<float>(v.begin() + begin, v.begin() + begin + n);
    };
    c.W = part(w, d * 3 * H * C, 3 * H * C);
    c.R = part(r, d * 3 * H * H, 3 * H * H);
    c.bx = part(b, d * 6 * H, 3 * H);
    c.br = part(b, d * 6 * H + 3 * H, 3 * H);
    cells.push_back(std::move(c));
  }
  return cells;
}

// Whether the nodes between a GRU's Y [T, D, B, H] and the next GRU's X (listed from the
// first GRU on) turn Y into [T, B, D*H] with the forward half first: Squeeze of axis 1
// (D = 1), or Transpose [0, 2, 1, 3] then Reshape to [T, B, D*H]. Identity may appear.
bool joins_layers(const std::vector<const onnx::NodeProto*>& steps, int directions, int64_t hidden,
                  const Constants& constants) {
  std::vector<const onnx::NodeProto*> ops;
  for (const onnx::NodeProto* n : steps)
    if (n->op_type() != "Identity") ops.push_back(n);
  // The ints of attribute `attr` (nullptr: none), else of the constant at input `input`
  // (-1: none); {} when neither holds them.
  const auto ints_of = [&](const onnx::NodeProto& n, const char* attr, int input) -> std::vector<int64_t> {
    if (attr != nullptr)
      if (const onnx::AttributeProto* a = attribute(n, attr)) return {a->ints().begin(), a->ints().end()};
    if (input >= 0 && input < n.input_size()) {
      const auto it = constants.find(n.input(input));
      if (it != constants.end()) {
        try {
          return tensor_ints(*it->second, "operand");
        } catch (const Error&) {
        }
      }
    }
    return {};
  };
  if (ops.size() == 1 && ops[0]->op_type() == "Squeeze" && directions == 1) {
    const std::vector<int64_t> axes = ints_of(*ops[0], "axes", 1);
    return axes == std::vector<int64_t>{1} || axes == std::vector<int64_t>{-3};
  }
  if (ops.size() == 2 && ops[0]->op_type() == "Transpose" && ops[1]->op_type() == "Reshape") {
    if (ints_of(*ops[0], "perm", -1) != std::vector<int64_t>{0, 2, 1, 3}) return false;
    const std::vector<int64_t> shape = ints_of(*ops[1], nullptr, 1);
    if (shape.size() != 3) return false;
    const bool zeros_copy = int_attribute(*ops[1], "allowzero", 0) == 0;
    for (int i = 0; i < 2; ++i)
      if (shape[static_cast<std::size_t>(i)] < 0 || (shape[static_cast<std::size_t>(i)] == 0 && !zeros_copy)) return false;
    return shape[2] == -1 || is_product(shape[2], directions, hidden);  // hidden_size may be any int64
  }
  return false;
}


// "/encoder/rnn/GRU" -> "encoder.rnn."; "/GRU" -> ""; names not of torch's form as they are.
std::string module_of(const onnx::NodeProto& node) {
  const std::string& n = node.name();
  const std::size_t slash = n.rfind('/');
  if (n.empty() || n[0] != '/' || slash == std::string::npos) return gguf::printable(n);
  std::string m = n.substr(1, slash);  // "encoder/rnn/"
  for (char& c : m)
    if (c == '/') c = '.';
  return gguf::printable(m);
}

// torch names a node after the module that made it ("/encoder/rnn/GRU_1"): the layers of
// one nn.GRU share it, two nn.GRU one after the other do not. Names of another form say
// nothing, and do not keep nodes apart.
bool same_module(const onnx::NodeProto& a, const onnx::NodeProto& b) {
  const auto scope = [](const onnx::NodeProto& n) {
    const std::size_t slash = n.name().rfind('/');
    return n.name().starts_with("/") && slash != std::string::npos ? n.name().substr(0, slash) : std::string();
  };
  return scope(a) == scope(b);
}

}  // namespace

std::string Chain::describe() const {
  return "'" + module + "' (" + layers.front().label + ", " + std::to_string(layers.size()) +
         (layers.size() == 1 ? " layer)" : " layers)");
}

std::vector<Chain> find_chains(const Where& where, const onnx::GraphProto& graph, const Constants& constants,
                               bool allow_layout1) {
  std::map<std::string, const onnx::NodeProto*> producer;
  for (const onnx::NodeProto& n : graph.node())
    for (const std::string& o : n.output()) producer.emplace(o, &n);
  std::vector<GruNode> grus;
  std::map<const onnx::NodeProto*, std::size_t> gru_index;
  for (int i = 0; i < graph.node_size(); ++i)
    if (graph.node(i).op_type() == "GRU") {
      gru_index[&graph.node(i)] = grus.size();
      grus.push_back(check_gru_node(where, graph.node(i), i, constants, allow_layout1));
    }

  // The GRU feeding each GRU's X through layout nodes only, when they form a layer join.
  std::vector<int> previous(grus.size(), -1), next(grus.size(), -1);
  for (std::size_t k = 0; k < grus.size(); ++k) {
    std::string x = grus[k].node->input(0);
    std::vector<const onnx::NodeProto*> steps;
    for (int hops = 0; hops < 16; ++hops) {
      const auto it = producer.find(x);
      if (it == producer.end()) break;
      const onnx::NodeProto& p = *it->second;
      if (p.op_type() == "GRU") {
        const std::size_t j = gru_index.at(&p);
        std::reverse(steps.begin(), steps.end());
        if (x == p.output(0) && next[j] == -1 && same_module(p, *grus[k].node) && grus[j].layout == 0 &&
            grus[k].layout == 0 &&
            grus[j].directions == grus[k].directions && grus[j].hidden == grus[k].hidden &&
            joins_layers(steps, grus[j].directions, grus[j].hidden, constants)) {
          previous[k] = static_cast<int>(j);
          next[j] = static_cast<int>(k);
        }
        break;
      }
      const std::string& op = p.op_type();
      if ((op != "Squeeze" && op != "Transpose" && op != "Reshape" && op != "Identity") || p.input_size() < 1) break;
      steps.push_back(&p);
      x = p.input(0);
    }
  }
  std::vector<Chain> chains;
  for (std::size_t k = 0; k < grus.size(); ++k) {
    if (previous[k] != -1) continue;
    Chain c;
    for (int j = static_cast<int>(k); j != -1; j = next[static_cast<std::size_t>(j)]) c.layers.push_back(grus[static_cast<std::size_t>(j)]);
    c.module = module_of(*c.layers.front().node);
    chains.push_back(std::move(c));
  }
  return chains;
}

GruModel chain_model(const Where& where, const Chain& chain, const Constants& constants) {
  GruModel m;
  const GruNode& first = chain.layers.front();
  for (std::size_t layer = 0; layer < chain.layers.size(); ++layer) {
    const GruNode& g = chain.layers[layer];
    std::vector<GruCell> cells = node_cells(where, g, constants);
    if (layer == 0) {
      m.input_size = cells[0].input_size;
      m.hidden_size = cells[0].hidden_size;
      m.bidirectional = g.directions == 2;
      m.cell_kind = g.cell_kind;
    } else if (g.cell_kind != m.cell_kind) {
      where.fail("layer ", layer, " (", g.label, ") has linear_before_reset = ", g.cell_kind == GruCellKind::ResetAfter,
                 " but layer 0 (", first.label, ") has ", m.cell_kind == GruCellKind::ResetAfter,
                 "; fixq's GRU has one cell for every layer of a chain");
    } else if (cells[0].hidden_size != m.hidden_size || g.directions != first.directions) {
      where.fail("layer ", layer, " (", g.label, ": hidden ", cells[0].hidden_size, ", ", g.directions,
                 " direction(s)) differs from layer 0 (", first.label, ": hidden ", m.hidden_size, ", ", first.directions,
                 "); fixq's GRU has one hidden size and direction for all layers");
    } else if (cells[0].input_size != m.directions() * m.hidden_size) {
      where.fail("layer ", layer, " (", g.label, ") takes ", cells[0].input_size, " inputs, but layer ", layer - 1,
                 " gives ", m.directions() * m.hidden_size);
    }
    for (GruCell& c : cells) m.cells.push_back(std::move(c));
  }
  m.num_layers = static_cast<int64_t>(chain.layers.size());
  try {
    m.validate();
  } catch (const Error& e) {
    where.fail(e.what());
  }
  return m;
}

}  // namespace fixq::onnx_import
