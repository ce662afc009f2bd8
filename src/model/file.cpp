// The quantized model file, "model-quantized" version 1 or 2: safetensors whose metadata holds
// the graph (file_json.cpp) and whose tensors hold every value's scale and zero point and
// every node's integers: weights, biases, weight scales, tables, and each GRU as the GRU
// file stores it (docs/spec.md 10.6). load() rebuilds the model through the same
// assemble() as quantize(), the tables as stored, so a loaded model is the saved one.
// Version 2 is the preset "auto": the same fields, every value's and every GRU's bits its
// own (a version 1 file has its preset's everywhere). Files of int8 and int16 models are
// still written as version 1, so that fixq versions before "auto" read them.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "fixq/error.h"
#include "fixq/safetensors.h"
#include "gru/int/model.h"
#include "io/fixq_files.h"
#include "model/file_json.h"
#include "model/quant_state.h"
#include "model/quantized.h"

namespace fixq {

using namespace model_detail;

namespace {

constexpr const char* kFormat = "model-quantized";
constexpr const char* kVersion = "1";      // int8, int16
constexpr const char* kVersionAuto = "2";  // auto
constexpr const char* kGruTables[3] = {"sig_z", "sig_r", "tanh_g"};

std::string value_name(size_t v, const char* what) { return "value" + std::to_string(v) + "." + what; }
std::string node_name(size_t n, const std::string& what) { return "node" + std::to_string(n) + "." + what; }
std::string cell_name(size_t n, size_t c, const char* what) { return node_name(n, "cell" + std::to_string(c) + "." + what); }

// Tensors for save_safetensors, each view over a buffer kept here.
struct Writer {
  std::vector<std::vector<std::byte>> bufs;
  std::vector<SafetensorsTensorView> views;
  template <class T>
  void add(const std::string& name, SafetensorsDtype dtype, const std::vector<T>& v, Shape shape) {
    bufs.emplace_back(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(bufs.back().data(), v.data(), bufs.back().size());  // little-endian hosts (the library's premise)
    views.push_back({name, dtype, std::move(shape), bufs.back()});
  }
  void add_ints(const std::string& name, const std::vector<int32_t>& v, int bits, Shape shape) {
    if (bits <= 8) {
      std::vector<int8_t> n(v.begin(), v.end());
      add(name, SafetensorsDtype::I8, n, std::move(shape));
    } else {
      std::vector<int16_t> n(v.begin(), v.end());
      add(name, SafetensorsDtype::I16, n, std::move(shape));
    }
  }
};

// A tensor of exactly this shape (its byte size was checked by the safetensors reader).
void expect_shape(const SafetensorsFile& f, const std::string& name, const Shape& shape) {
  const Shape& s = f.info(name).shape;
  require(s == shape, "tensor '", name, "' has shape ", shape_str(s), ", expected ", shape_str(shape));
}

std::vector<int32_t> read_ints(const SafetensorsFile& f, const std::string& name, int bits, const Shape& shape) {
  expect_shape(f, name, shape);
  std::vector<int32_t> out;
  if (bits <= 8) {
    for (int8_t v : f.read_i8(name)) out.push_back(v);
  } else {
    for (int16_t v : f.read_i16(name)) out.push_back(v);
  }
  return out;
}

std::vector<int32_t> read_table(const SafetensorsFile& f, const std::string& name) {
  const Shape& s = f.info(name).shape;
  require(s.size() == 1, "table '", name, "' has shape ", shape_str(s), ", expected 1-D");
  return f.read_i32(name);
}

std::vector<float> dequantized_rows(const std::vector<int32_t>& q, const std::vector<float>& scale, int64_t rows) {
  std::vector<float> w(q.size());
  const size_t per_row = rows == 0 ? 0 : q.size() / static_cast<size_t>(rows);
  for (size_t i = 0; i < q.size(); ++i) w[i] = static_cast<float>(q[i]) * scale[i / per_row];
  return w;
}

// The GRU of node n from its tensors, and its float graph model (the integers dequantized).
void load_gru(const SafetensorsFile& f, size_t n, const GruMeta& meta, const std::vector<GruQuantConfig>& allowed,
              ModelNode& node, QNode& q) {
  auto impl = std::make_unique<QuantizedGru::Impl>();
  impl->params = meta.params;
  impl->input_size = meta.input_size;
  impl->hidden_size = meta.hidden_size;
  impl->num_layers = static_cast<int>(meta.num_layers);
  impl->bidirectional = meta.bidirectional;
  impl->cell_kind = meta.cell;
  const GruQuantConfig& cfg = impl->params.config;
  require(std::any_of(allowed.begin(), allowed.end(),
                      [&](const GruQuantConfig& c) { return cfg.bits == c.bits && cfg.scale_kind == c.scale_kind; }),
          "GRU '", node.name, "': its configuration is not the model's preset");
  const int D = impl->directions();
  const size_t cells = static_cast<size_t>(impl->num_layers * D);
  require(impl->params.cells.size() == cells, "GRU '", node.name, "': parameters describe ", impl->params.cells.size(),
          " cells, the shape needs ", cells);
  const int64_t H = impl->hidden_size, H3 = checked_mul<int64_t>(3, H, "3 H");
  auto g = std::make_shared<GruModel>();
  g->input_size = meta.input_size;
  g->hidden_size = H;
  g->num_layers = meta.num_layers;
  g->bidirectional = meta.bidirectional;
  g->cell_kind = meta.cell;
  for (size_t c = 0; c < cells; ++c) {
    const int64_t C = c < static_cast<size_t>(D) ? impl->input_size : D * H;
    const GruCellParams& p = impl->params.cells[c];
    for (GruOp op : {GruOp::W, GruOp::R, GruOp::Bx, GruOp::Br})
      require(p[op].size() == static_cast<size_t>(H3), "GRU '", node.name, "': cell ", c, " parameters are not per channel of 3H");
    gru_detail::StoredTables stored;
    stored.sig_z = read_table(f, cell_name(n, c, kGruTables[0]));
    stored.sig_r = read_table(f, cell_name(n, c, kGruTables[1]));
    stored.tanh_g = read_table(f, cell_name(n, c, kGruTables[2]));
    stored.file = f.path();
    stored.cell = c;
    std::vector<int32_t> w = read_ints(f, cell_name(n, c, "W"), cfg.bits_of(GruOp::W), {H3, C});
    std::vector<int32_t> r = read_ints(f, cell_name(n, c, "R"), cfg.bits_of(GruOp::R), {H3, H});
    std::vector<int32_t> bx = read_ints(f, cell_name(n, c, "bx"), cfg.bits_of(GruOp::Bx), {H3});
    std::vector<int32_t> br = read_ints(f, cell_name(n, c, "br"), cfg.bits_of(GruOp::Br), {H3});
    GruCell cell;
    cell.input_size = C;
    cell.hidden_size = H;
    cell.W = dequantized_rows(w, p[GruOp::W].scale, H3);
    cell.R = dequantized_rows(r, p[GruOp::R].scale, H3);
    cell.bx = dequantized_rows(bx, p[GruOp::Bx].scale, H3);
    cell.br = dequantized_rows(br, p[GruOp::Br].scale, H3);
    g->cells.push_back(std::move(cell));
    impl->plans.push_back(gru_detail::build_plan(p, cfg, C, H, std::move(w), std::move(r), std::move(bx), std::move(br),
                                                 &stored, impl->cell_kind));
  }
  impl->finish();
  q.gru = std::make_shared<const QuantizedGru>(QuantizedGruAccess::make(std::move(impl)));
  node.gru = g;
}

bool same(const ModelValueQuant& a, size_t ra, float scale, int32_t zp, int bits) {
  return a.bits == bits && a.scale[ra] == scale && a.zero_point[ra] == zp;
}

// What quantize() fixes and assemble() relies on: the parameters an operator defines for
// its output (and a GRU for its states) are the ones the file holds.
void check_fixed_params(const QuantizedModel::Impl& m) {
  for (size_t n = 0; n < m.model.nodes.size(); ++n) {
    const ModelNode& node = m.model.nodes[n];
    const ModelValueQuant& y = m.vq[static_cast<size_t>(node.outputs[0])];
    const std::string where = "node '" + node.name + "'";
    if (node.op == ModelOp::Relu || node.op == ModelOp::Slice) {
      const ModelValueQuant& x = m.vq[static_cast<size_t>(node.inputs[0])];
      require(same(y, 0, x.scale[0], x.zero_point[0], x.bits), where, ": its output's parameters must be its input's");
    }
    if (node.op == ModelOp::Softmax)
      require(m.bits == 16 ? same(y, 0, 0x1p-15f, 0, 16) : same(y, 0, 0x1p-8f, -128, 8), where,
              ": a softmax output's parameters are fixed (docs/spec.md 10.4)");
    if (node.op == ModelOp::Gru) {
      const QuantizedGru::Impl& g = QuantizedGruAccess::impl(*m.qn[n].gru);
      auto h = [&](size_t c) -> const QuantParams& { return g.params.cells[c][GruOp::H]; };
      const size_t top = static_cast<size_t>((g.num_layers - 1) * g.directions());
      require(same(y, 0, h(top).scale[0], h(top).zero_point[0], h(top).scheme.format.bits), where,
              ": its output's parameters must be its top cell's h parameters");
      for (int v : {node.inputs[1], node.outputs[1]}) {
        if (v < 0) continue;
        const ModelValueQuant& s = m.vq[static_cast<size_t>(v)];
        for (size_t c = 0; c < g.plans.size(); ++c)
          require(same(s, c, h(c).scale[0], h(c).zero_point[0], h(c).scheme.format.bits), where, ": state row ", c,
                  " must hold cell ", c, "'s h parameters");
      }
    }
  }
}

QuantizedModel::Impl load_impl(const std::string& path) {
  const SafetensorsFile f(path);
  const auto& meta = f.metadata();
  const auto format = meta.find(kFixqFormatKey);
  require(format != meta.end() && format->second == kFormat, "not a fixq quantized model (metadata 'fixq.format' must be '",
          kFormat, "')");
  const auto version = meta.find("fixq.version");
  require(version != meta.end() && (version->second == kVersion || version->second == kVersionAuto), "file version '",
          version == meta.end() ? std::string("(none)") : version->second, "' is not one this fixq reads (", kVersion, ", ",
          kVersionAuto, ")");
  const auto graph = meta.find("graph");
  require(graph != meta.end(), "metadata lacks 'graph'");
  QuantizedModel::Impl m;
  std::vector<GruMeta> gru_meta;
  graph_from_json(graph->second, m, gru_meta);
  const bool is_auto = m.preset == "auto";
  require(is_auto == (version->second == kVersionAuto), "file version ", version->second, " cannot hold preset '", m.preset,
          "' (auto: version ", kVersionAuto, "; int8, int16: version ", kVersion, ")");
  // Every value's parameters.
  for (size_t v = 0; v < m.model.values.size(); ++v) {
    const ModelValue& mv = m.model.values[v];
    const int64_t rows = mv.kind == ValueKind::State ? mv.rows : 1;
    require(rows >= 1, "value '", mv.name, "' has no rows");
    expect_shape(f, value_name(v, "scale"), {rows});
    expect_shape(f, value_name(v, "zero_point"), {rows});
    ModelValueQuant& q = m.vq[v];
    const std::vector<float> scale = f.read_f32(value_name(v, "scale"));
    q.scale = scale;
    q.zero_point = f.read_i32(value_name(v, "zero_point"));
    if (mv.kind == ValueKind::Sequence && !is_auto)
      require(q.bits == m.bits, "value '", mv.name, "' has ", q.bits, " bits; the preset's activations have ", m.bits);
    for (size_t r = 0; r < q.scale.size(); ++r) {
      require(std::isnormal(q.scale[r]) && q.scale[r] > 0.0f && std::isfinite(q.scale[r] * 131072.0f), "value '", mv.name,
              "': scale ", q.scale[r], " must be a positive normal float");
      require(q.zero_point[r] >= q.qmin() && q.zero_point[r] <= q.qmax(), "value '", mv.name, "': zero point ",
              q.zero_point[r], " is outside its ", q.bits, "-bit range");
      if (m.scales == ScaleKind::PowerOfTwo) {
        int e = 0;
        require(std::frexp(q.scale[r], &e) == 0.5f, "value '", mv.name, "': scale ", q.scale[r], " is not a power of two");
      }
    }
  }
  // Every node's integers; the float graph from them.
  // A GRU's config: its preset's; under auto, int8's or int16's.
  std::vector<GruQuantConfig> gru_cfg;
  for (const char* p : {"int8", "int16"})
    if (is_auto || m.preset == p) gru_cfg.push_back(GruQuantConfig::base(p, m.scales, "preset"));
  m.qn.assign(m.model.nodes.size(), {});
  std::vector<std::vector<int32_t>> tables(m.model.nodes.size());
  for (size_t n = 0; n < m.model.nodes.size(); ++n) {
    ModelNode& node = m.model.nodes[n];
    QNode& q = m.qn[n];
    const bool dense = node.op == ModelOp::Linear || node.op == ModelOp::Conv1d;
    if (dense) {
      require(node.out_features >= 1 && node.in_features >= 1 && node.groups >= 1 && node.in_features % node.groups == 0,
              "node '", node.name, "': bad channel counts");
      const int64_t per_row = checked_mul<int64_t>(node.in_features / node.groups, node.kernel, "node '", node.name, "' row size");
      q.q_w = read_ints(f, node_name(n, "weight"), 8, {node.out_features, per_row});
      expect_shape(f, node_name(n, "weight_scale"), {node.out_features});
      q.w_scale = f.read_f32(node_name(n, "weight_scale"));
      for (float s : q.w_scale)
        require(std::isnormal(s) && s > 0.0f, "node '", node.name, "': weight scale ", s, " must be a positive normal float");
      node.weight = dequantized_rows(q.q_w, q.w_scale, node.out_features);
      if (!node.bias.empty()) {
        expect_shape(f, node_name(n, "bias"), {node.out_features});
        q.q_b = f.read_i32(node_name(n, "bias"));
      }
    }
    if (node.op == ModelOp::Tanh || node.op == ModelOp::Sigmoid || node.op == ModelOp::Softmax)
      tables[n] = read_table(f, node_name(n, "table"));
    if (!dense) require(node.bias.empty(), "node '", node.name, "': only Linear and Conv1d have a bias");
    if (node.op == ModelOp::Gru) load_gru(f, n, gru_meta[n], gru_cfg, node, q);
  }
  m.model.validate();
  if (is_auto) {  // the GEMMs' width, from the values' bits as quantize() chose it
    std::vector<int> bits;
    for (const ModelValueQuant& q : m.vq) bits.push_back(q.bits);
    m.bits = model_gemm_bits(m.model, bits);
  }
  // The float biases from the integer ones (after validate(): the input values exist).
  for (size_t n = 0; n < m.model.nodes.size(); ++n) {
    ModelNode& node = m.model.nodes[n];
    const float sx = m.vq[static_cast<size_t>(node.inputs[0])].scale[0];
    for (size_t o = 0; o < node.bias.size(); ++o)
      node.bias[o] = static_cast<float>(double(m.qn[n].q_b[o]) * sx * m.qn[n].w_scale[o]);
  }
  check_fixed_params(m);
  m.assemble(&tables);
  return m;
}

}  // namespace

void QuantizedModel::save(const std::string& path) const {
  const Impl& m = *impl_;
  Writer w;
  for (size_t v = 0; v < m.vq.size(); ++v) {
    const auto rows = static_cast<int64_t>(m.vq[v].scale.size());
    w.add(value_name(v, "scale"), SafetensorsDtype::F32, m.vq[v].scale, {rows});
    w.add(value_name(v, "zero_point"), SafetensorsDtype::I32, m.vq[v].zero_point, {rows});
  }
  for (size_t n = 0; n < m.model.nodes.size(); ++n) {
    const ModelNode& node = m.model.nodes[n];
    const QNode& q = m.qn[n];
    switch (node.op) {
      case ModelOp::Linear:
      case ModelOp::Conv1d: {
        const int64_t N = node.out_features;
        w.add_ints(node_name(n, "weight"), q.q_w, 8, {N, static_cast<int64_t>(q.q_w.size()) / N});
        w.add(node_name(n, "weight_scale"), SafetensorsDtype::F32, q.w_scale, {N});
        if (!q.q_b.empty()) w.add(node_name(n, "bias"), SafetensorsDtype::I32, q.q_b, {N});
        break;
      }
      case ModelOp::Tanh:
      case ModelOp::Sigmoid: {
        const std::vector<int32_t> t(q.lut->table().begin(), q.lut->table().end());
        w.add(node_name(n, "table"), SafetensorsDtype::I32, t, {static_cast<int64_t>(t.size())});
        break;
      }
      case ModelOp::Softmax:
        w.add(node_name(n, "table"), SafetensorsDtype::I32, q.exp_table, {static_cast<int64_t>(q.exp_table.size())});
        break;
      case ModelOp::Gru: {
        const QuantizedGru::Impl& g = QuantizedGruAccess::impl(*q.gru);
        const GruQuantConfig& cfg = g.params.config;
        for (size_t c = 0; c < g.plans.size(); ++c) {
          const gru_detail::CellPlan& p = g.plans[c];
          const int64_t H3 = 3 * p.hidden_size;
          w.add_ints(cell_name(n, c, "W"), p.q_w, cfg.bits_of(GruOp::W), {H3, p.input_size});
          w.add_ints(cell_name(n, c, "R"), p.q_r, cfg.bits_of(GruOp::R), {H3, p.hidden_size});
          w.add_ints(cell_name(n, c, "bx"), p.q_bx, cfg.bits_of(GruOp::Bx), {H3});
          w.add_ints(cell_name(n, c, "br"), p.q_br, cfg.bits_of(GruOp::Br), {H3});
          const ActivationLut* luts[3] = {&p.sig_z, &p.sig_r, &p.tanh_g};
          for (int t = 0; t < 3; ++t) {
            const std::vector<int32_t> e(luts[t]->table().begin(), luts[t]->table().end());
            w.add(cell_name(n, c, kGruTables[t]), SafetensorsDtype::I32, e, {static_cast<int64_t>(e.size())});
          }
        }
        break;
      }
      default: break;
    }
  }
  save_safetensors(path, w.views,
                   {{kFixqFormatKey, kFormat},
                    {"fixq.version", m.preset == "auto" ? kVersionAuto : kVersion},
                    {"graph", graph_to_json(m)}});
}

QuantizedModel QuantizedModel::load(const std::string& path) {
  try {
    return QuantizedModel(std::make_unique<Impl>(load_impl(path)));
  } catch (const IoError&) {
    throw;  // names the file already
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.starts_with("quantized model " + path)) throw;
    fail("quantized model ", path, ": ", msg);
  }
}

}  // namespace fixq
