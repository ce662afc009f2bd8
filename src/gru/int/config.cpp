// GruQuantConfig: bit widths per operator and the kind of scale; JSON in and out.
#include <nlohmann/json.hpp>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "fixq/error.h"
#include "fixq/qgru.h"

namespace fixq {

namespace {

constexpr int kConfigVersion = 1;

bool is_weight(GruOp op) { return op == GruOp::W || op == GruOp::R; }

GruQuantConfig uniform(int activation_bits, ScaleKind kind) {
  GruQuantConfig c;
  c.scale_kind = kind;
  for (int i = 0; i < kGruOpCount; ++i) c.bits[static_cast<size_t>(i)] = is_weight(static_cast<GruOp>(i)) ? 8 : activation_bits;
  return c;
}

}  // namespace

GruQuantConfig GruQuantConfig::int8(ScaleKind kind) { return uniform(8, kind); }
GruQuantConfig GruQuantConfig::int16(ScaleKind kind) { return uniform(16, kind); }

bool GruQuantConfig::is_base_name(std::string_view name) { return name == "int8" || name == "int16"; }

GruQuantConfig GruQuantConfig::base(std::string_view name, ScaleKind kind, std::string_view what) {
  require(is_base_name(name), what, " must be int8 or int16, got '", name, "'");
  return name == "int8" ? int8(kind) : int16(kind);
}

void GruQuantConfig::validate() const {
  for (int i = 0; i < kGruOpCount; ++i) {
    const int b = bits[static_cast<size_t>(i)];
    if (b != 8 && b != 16)
      fail("GRU operator ", to_string(static_cast<GruOp>(i)), " has ", b, " bits; each operator is 8 or 16 bits");
  }
}

namespace {
GruQuantConfig parse_config(const std::string& text);
}  // namespace

// Field access can raise nlohmann's type_error for a value of the wrong type (e.g.
// "version": "1"): a malformed config like any other, so it becomes a fixq::Error.
GruQuantConfig GruQuantConfig::from_json(const std::string& text) {
  try {
    return parse_config(text);
  } catch (const nlohmann::json::exception& e) {
    fail("GRU config: a field has the wrong type: ", e.what());
  }
}

GruQuantConfig GruQuantConfig::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail_io(errno, "GRU config ", path, ": cannot open");
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) fail_io(errno, "GRU config ", path, ": read error");
  return from_json(text.str());
}

namespace {

GruQuantConfig parse_config(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail("GRU config is not valid JSON: ", e.what());
  }
  require(j.is_object(), "GRU config must be a JSON object");
  for (const auto& [key, value] : j.items())
    if (key != "version" && key != "base" && key != "scales" && key != "bits")
      fail("GRU config has an unknown key '", key, "' (known: version, base, scales, bits)");
  const auto version = j.find("version");
  require(version != j.end() && version->is_number_integer() && *version == kConfigVersion,
          "GRU config version must be ", kConfigVersion);
  const std::string scales = j.value("scales", std::string("pow2"));
  const ScaleKind kind = parse_scale_kind(scales, "GRU config 'scales'");  // also the older "float"
  GruQuantConfig c = GruQuantConfig::base(j.value("base", std::string("int8")), kind, "GRU config 'base'");
  if (j.contains("bits")) {
    require(j["bits"].is_object(), "GRU config 'bits' must map operator names to 8 or 16");
    for (const auto& [name, value] : j["bits"].items()) {
      const GruOp op = parse_gru_op(name);
      require(value.is_number_integer(), "GRU config bits of '", name, "' must be an integer");
      const int64_t b = value.get<int64_t>();  // wide first: get<int> would wrap 2^32 + 8 to 8
      require(b == 8 || b == 16, "GRU operator ", name, " has ", b, " bits; each operator is 8 or 16 bits");
      c.bits[static_cast<size_t>(op)] = static_cast<int>(b);
    }
  }
  c.validate();
  return c;
}

}  // namespace

std::string GruQuantConfig::to_json() const {
  nlohmann::ordered_json j;
  j["version"] = kConfigVersion;
  j["base"] = "int8";
  j["scales"] = to_string(scale_kind);
  nlohmann::ordered_json b = nlohmann::ordered_json::object();
  for (int i = 0; i < kGruOpCount; ++i) b[to_string(static_cast<GruOp>(i))] = bits[static_cast<size_t>(i)];
  j["bits"] = b;
  return j.dump(2);
}

QuantScheme gru_op_scheme(GruOp op, const GruQuantConfig& config) {
  QuantScheme s;
  s.format = IntFormat::make(config.bits_of(op), true);
  s.scale_kind = config.scale_kind;
  switch (op) {
    case GruOp::W:
    case GruOp::R:
    case GruOp::Bx:
    case GruOp::Br:
      s.symmetry = Symmetry::Symmetric;
      s.granularity = Granularity::PerChannel;
      s.axis = 0;
      break;
    case GruOp::GOut:
      s.symmetry = Symmetry::Symmetric;
      break;
    default:
      s.symmetry = Symmetry::Asymmetric;
      break;
  }
  return s;
}

}  // namespace fixq
