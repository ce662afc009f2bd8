// The graph of a quantized model file as JSON, both ways, every field checked on the way in.
#include "model/file_json.h"

#include <nlohmann/json.hpp>

#include "fixq/error.h"
#include "gru/int/model.h"

namespace fixq::model_detail {

namespace {

using json = nlohmann::ordered_json;
constexpr int kGraphVersion = 1;
constexpr int kMaxDepth = 16;  // the graph nests 4 levels; far deeper JSON is refused while parsed
// Bounds on the numbers a file may claim, so that no size formed from them can overflow
// and no allocation runs away before the tensors are checked against them.
constexpr int64_t kMaxFeatures = int64_t{1} << 20;
constexpr int64_t kMaxCount = int64_t{1} << 16;  // values, nodes, rows, kernel, dilation

int64_t get_int(const json& j, const char* key, int64_t lo, int64_t hi, const std::string& where) {
  const auto it = j.find(key);
  require(it != j.end() && it->is_number_integer(), where, ": '", key, "' must be an integer");
  const int64_t v = it->get<int64_t>();
  require(v >= lo && v <= hi, where, ": '", key, "' = ", v, " is outside [", lo, ", ", hi, "]");
  return v;
}

std::string get_string(const json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  require(it != j.end() && it->is_string(), where, ": '", key, "' must be a string");
  return it->get<std::string>();
}

bool get_bool(const json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  require(it != j.end() && it->is_boolean(), where, ": '", key, "' must be true or false");
  return it->get<bool>();
}

std::vector<int> index_list(const json& j, const char* key, int64_t lo, int64_t hi, const std::string& where) {
  const auto it = j.find(key);
  require(it != j.end() && it->is_array(), where, ": '", key, "' must be a list of value indices");
  require(static_cast<int64_t>(it->size()) <= kMaxCount, where, ": '", key, "' is too long");
  std::vector<int> v;
  for (const json& e : *it) {
    require(e.is_number_integer(), where, ": '", key, "' must hold integers");
    const int64_t x = e.get<int64_t>();
    require(x >= lo && x <= hi, where, ": '", key, "' holds ", x, ", outside [", lo, ", ", hi, "]");
    v.push_back(static_cast<int>(x));
  }
  return v;
}

}  // namespace

std::string graph_to_json(const QuantizedModel::Impl& m) {
  json j;
  j["version"] = kGraphVersion;
  j["preset"] = m.preset;
  j["scales"] = to_string(m.scales);
  json values = json::array();
  for (size_t v = 0; v < m.model.values.size(); ++v) {
    const ModelValue& mv = m.model.values[v];
    values.push_back({{"name", mv.name},
                      {"kind", mv.kind == ValueKind::State ? "state" : "sequence"},
                      {"features", mv.features},
                      {"rows", mv.rows},
                      {"layout", mv.layout.axes},
                      {"bits", m.vq[v].bits}});
  }
  j["values"] = values;
  j["inputs"] = m.model.inputs;
  j["outputs"] = m.model.outputs;
  json nodes = json::array();
  for (size_t n = 0; n < m.model.nodes.size(); ++n) {
    const ModelNode& node = m.model.nodes[n];
    json e{{"name", node.name},       {"op", to_string(node.op)},   {"inputs", node.inputs},
           {"outputs", node.outputs}, {"in_features", node.in_features}, {"out_features", node.out_features},
           {"kernel", node.kernel},   {"dilation", node.dilation},  {"groups", node.groups},
           {"begin", node.begin},     {"end", node.end},            {"bias", !node.bias.empty()}};
    if (node.op == ModelOp::Gru) {
      const QuantizedGru::Impl& g = QuantizedGruAccess::impl(*m.qn[n].gru);
      e["gru"] = {{"input_size", g.input_size},       {"hidden_size", g.hidden_size},
                  {"num_layers", g.num_layers},       {"bidirectional", g.bidirectional},
                  {"cell", to_string(g.cell_kind)},   {"params", g.params.to_json()}};
    }
    nodes.push_back(e);
  }
  j["nodes"] = nodes;
  return j.dump(1);
}

void graph_from_json(const std::string& text, QuantizedModel::Impl& m, std::vector<GruMeta>& gru_meta) {
  json j;
  try {
    j = json::parse(text, [](int depth, json::parse_event_t event, json&) {
      if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) && depth >= kMaxDepth)
        fail("JSON nested deeper than ", kMaxDepth, " levels");
      return true;
    });
  } catch (const json::exception& e) {
    fail("the graph is not valid JSON: ", e.what());
  }
  require(j.is_object(), "the graph must be a JSON object");
  require(get_int(j, "version", 0, INT32_MAX, "the graph") == kGraphVersion, "the graph's version must be ", kGraphVersion);
  m.preset = get_string(j, "preset", "the graph");
  require(m.preset == "int8" || m.preset == "int16" || m.preset == "auto",
          "the graph's preset must be int8, int16 or auto, got '", m.preset, "'");
  m.bits = m.preset == "int16" ? 16 : 8;  // auto: from the values' bits once the graph is checked (file.cpp)
  m.scales = parse_scale_kind(get_string(j, "scales", "the graph"), "the graph's scales");
  const auto values = j.find("values");
  require(values != j.end() && values->is_array() && !values->empty() && static_cast<int64_t>(values->size()) <= kMaxCount,
          "the graph's 'values' must be a list of 1 to ", kMaxCount, " values");
  const int64_t nv = static_cast<int64_t>(values->size());
  for (size_t v = 0; v < values->size(); ++v) {
    const json& e = (*values)[v];
    const std::string where = "value " + std::to_string(v);
    require(e.is_object(), where, " must be an object");
    ModelValue mv;
    mv.name = get_string(e, "name", where);
    const std::string kind = get_string(e, "kind", where);
    require(kind == "sequence" || kind == "state", where, ": kind must be sequence or state, got '", kind, "'");
    mv.kind = kind == "state" ? ValueKind::State : ValueKind::Sequence;
    mv.features = get_int(e, "features", 1, kMaxFeatures, where);
    mv.rows = get_int(e, "rows", 0, kMaxCount, where);
    mv.layout.axes = get_string(e, "layout", where);
    const int64_t bits = get_int(e, "bits", 8, 16, where);
    require(bits == 8 || bits == 16, where, ": bits must be 8 or 16, got ", bits);
    m.model.values.push_back(mv);
    m.vq.push_back({mv.name, static_cast<int>(bits), {}, {}});
  }
  m.model.inputs = index_list(j, "inputs", 0, nv - 1, "the graph");
  m.model.outputs = index_list(j, "outputs", 0, nv - 1, "the graph");
  const auto nodes = j.find("nodes");
  require(nodes != j.end() && nodes->is_array() && static_cast<int64_t>(nodes->size()) <= kMaxCount,
          "the graph's 'nodes' must be a list of at most ", kMaxCount, " nodes");
  gru_meta.assign(nodes->size(), {});
  for (size_t n = 0; n < nodes->size(); ++n) {
    const json& e = (*nodes)[n];
    const std::string where = "node " + std::to_string(n);
    require(e.is_object(), where, " must be an object");
    ModelNode node;
    node.name = get_string(e, "name", where);
    node.op = parse_model_op(get_string(e, "op", where));
    node.inputs = index_list(e, "inputs", -1, nv - 1, where);
    node.outputs = index_list(e, "outputs", -1, nv - 1, where);
    node.in_features = get_int(e, "in_features", 0, kMaxFeatures, where);
    node.out_features = get_int(e, "out_features", 0, kMaxFeatures, where);
    node.kernel = get_int(e, "kernel", 1, kMaxCount, where);
    node.dilation = get_int(e, "dilation", 1, kMaxCount, where);
    node.groups = get_int(e, "groups", 1, kMaxFeatures, where);
    node.begin = get_int(e, "begin", 0, kMaxFeatures, where);
    node.end = get_int(e, "end", 0, kMaxFeatures, where);
    if (get_bool(e, "bias", where)) node.bias.assign(static_cast<size_t>(node.out_features), 0.0f);  // filled from the tensor
    if (node.op == ModelOp::Gru) {
      const auto g = e.find("gru");
      require(g != e.end() && g->is_object(), where, ": a GRU node needs its 'gru' object");
      GruMeta& meta = gru_meta[n];
      meta.input_size = get_int(*g, "input_size", 1, kMaxFeatures, where);
      meta.hidden_size = get_int(*g, "hidden_size", 1, kMaxFeatures, where);
      meta.num_layers = get_int(*g, "num_layers", 1, 64, where);
      meta.bidirectional = get_bool(*g, "bidirectional", where);
      meta.cell = parse_gru_cell_kind(get_string(*g, "cell", where), where + ": cell");
      try {
        meta.params = GruQuantParams::from_json(get_string(*g, "params", where));
      } catch (const Error& err) {
        fail(where, ": the GRU's parameters: ", err.what());
      }
    }
    m.model.nodes.push_back(std::move(node));
  }
}

}  // namespace fixq::model_detail
