// GruQuantParams <-> versioned JSON: human-readable, and exact (floats round-trip).
#include <nlohmann/json.hpp>

#include "fixq/error.h"
#include "fixq/qgru.h"

namespace fixq {

namespace {

constexpr int kParamsVersion = 1;
using json = nlohmann::ordered_json;

json params_to_json(const QuantParams& p) {
  json j;
  j["scale"] = p.scale;
  if (!p.exponent.empty()) j["exponent"] = p.exponent;
  j["zero_point"] = p.zero_point;
  return j;
}

QuantParams params_from_json(const json& j, GruOp op, const GruQuantConfig& config, size_t cell) {
  const std::string where = "GRU parameters: cell " + std::to_string(cell) + " operator " + to_string(op);
  require(j.is_object(), where, " must be an object");
  QuantParams p;
  p.scheme = gru_op_scheme(op, config);
  try {
    p.scale = j.at("scale").get<std::vector<float>>();
    p.zero_point = j.at("zero_point").get<std::vector<int32_t>>();
    if (j.contains("exponent")) p.exponent = j.at("exponent").get<std::vector<int32_t>>();
  } catch (const json::exception& e) {
    fail(where, ": ", e.what());
  }
  if (p.scheme.granularity == Granularity::PerChannel) {
    p.shape = Shape{static_cast<int64_t>(p.scale.size())};
  }
  try {
    p.validate();
  } catch (const Error& e) {
    fail(where, ": ", e.what());
  }
  return p;
}

}  // namespace

std::string GruQuantParams::to_json() const {
  json j;
  j["version"] = kParamsVersion;
  j["config"] = json::parse(config.to_json());
  json cs = json::array();
  for (const GruCellParams& c : cells) {
    json ops;
    for (int i = 0; i < kGruOpCount; ++i) ops[fixq::to_string(static_cast<GruOp>(i))] = params_to_json(c.op[static_cast<size_t>(i)]);
    cs.push_back(ops);
  }
  j["cells"] = cs;
  return j.dump(1);
}

GruQuantParams GruQuantParams::from_json(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    fail("GRU parameters are not valid JSON: ", e.what());
  }
  require(j.is_object() && j.value("version", 0) == kParamsVersion, "GRU parameters: expected an object with version ",
          kParamsVersion);
  require(j.contains("config") && j.contains("cells") && j["cells"].is_array(),
          "GRU parameters need 'config' and a 'cells' array");
  GruQuantParams p;
  p.config = GruQuantConfig::from_json(j["config"].dump());
  for (size_t c = 0; c < j["cells"].size(); ++c) {
    const json& ops = j["cells"][c];
    require(ops.is_object(), "GRU parameters: cell ", c, " must be an object");
    for (const auto& [name, value] : ops.items()) parse_gru_op(name);  // unknown names are errors
    GruCellParams cp;
    for (int i = 0; i < kGruOpCount; ++i) {
      const GruOp op = static_cast<GruOp>(i);
      require(ops.contains(fixq::to_string(op)), "GRU parameters: cell ", c, " lacks operator ", fixq::to_string(op));
      cp[op] = params_from_json(ops[fixq::to_string(op)], op, p.config, c);
    }
    p.cells.push_back(std::move(cp));
  }
  return p;
}

}  // namespace fixq
