// GruQuantParams <-> versioned JSON: human-readable, and exact (floats round-trip).
#include <cmath>
#include <cstdint>
#include <limits>

#include <nlohmann/json.hpp>

#include "fixq/error.h"
#include "fixq/qgru.h"

namespace fixq {

namespace {

constexpr int kParamsVersion = 1;
using json = nlohmann::ordered_json;

// The parameters nest 5 levels deep (object, cells, cell, operator, scale list). Far deeper
// JSON is refused while it is parsed: dump(), which hands "config" on and prints values
// in messages, recurses once per level and would overflow the stack on millions of them.
constexpr int kMaxJsonDepth = 64;

// The list j as floats. Each number is checked before the conversion, which is undefined
// beyond the float range (nlohmann's get<> would just cast).
std::vector<float> float_list(const json& j, const std::string& what) {
  require(j.is_array(), what, " must be a list of numbers, not ", j.type_name());
  std::vector<float> v;
  for (const json& e : j) {
    if (!e.is_number()) fail(what, " must hold numbers, got ", e.dump());
    const double d = e.get<double>();
    if (std::fabs(d) > std::numeric_limits<float>::max()) fail(what, " value ", e.dump(), " is beyond the float range");
    v.push_back(static_cast<float>(d));
  }
  return v;
}

// The list j as int32 values, each checked to be an integer in range before the cast.
std::vector<int32_t> int32_list(const json& j, const std::string& what) {
  require(j.is_array(), what, " must be a list of integers, not ", j.type_name());
  std::vector<int32_t> v;
  for (const json& e : j) {
    bool ok = false;
    if (e.is_number_unsigned()) {
      ok = e.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max());
    } else if (e.is_number_integer()) {
      const int64_t x = e.get<int64_t>();
      ok = x >= std::numeric_limits<int32_t>::min() && x <= std::numeric_limits<int32_t>::max();
    }
    if (!ok) fail(what, " must hold 32-bit integers, got ", e.dump());
    v.push_back(static_cast<int32_t>(e.get<int64_t>()));
  }
  return v;
}

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
  require(j.contains("scale") && j.contains("zero_point"), where, " needs 'scale' and 'zero_point'");
  p.scale = float_list(j["scale"], where + " scale");
  p.zero_point = int32_list(j["zero_point"], where + " zero_point");
  if (j.contains("exponent")) p.exponent = int32_list(j["exponent"], where + " exponent");
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
    j = json::parse(text, [](int depth, json::parse_event_t event, json&) {
      // depth: the number of objects and arrays open around the one that starts.
      if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
          depth >= kMaxJsonDepth)
        fail("GRU parameters: JSON nested deeper than ", kMaxJsonDepth, " levels");
      return true;
    });
  } catch (const json::exception& e) {
    fail("GRU parameters are not valid JSON: ", e.what());
  }
  const auto version = j.find("version");
  require(j.is_object() && version != j.end() && version->is_number_integer() && *version == kParamsVersion,
          "GRU parameters: expected an object with version ", kParamsVersion);
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
