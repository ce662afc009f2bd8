// The quantized model file: integer weights as I8 / I16 safetensors tensors, parameters
// and shape in __metadata__, so a Q.fixq file is all an integer-only runtime needs.
#include <cstring>
#include <deque>

#include "fixq/error.h"
#include "fixq/file_kind.h"
#include "fixq/safetensors.h"
#include "gru/int/model.h"
#include "io/fixq_files.h"

namespace fixq {

namespace {

const std::string kFormat = to_string(FileKind::GruQuantized);
// Version 1 (no "fixq.version" key) stored no activation tables: a loader rebuilt them
// from the parameters with the host's libm. Version 2 stores them (docs/spec.md 7.2).
// Version 3 is version 2 with the metadata "cell" (GruCellKind): it is written only for
// reset-before models, so that readers of versions 1 and 2, which know only the
// reset-after cell, refuse them by their version; reset-after models stay version 2.
constexpr int kVersion = 2;
constexpr int kVersionWithCell = 3;
constexpr const char* kCellKey = "cell";
constexpr const char* kTableNames[3] = {"sig_z", "sig_r", "tanh_g"};

std::string tensor_name(size_t cell, const char* what) { return "cell" + std::to_string(cell) + "." + what; }

// Narrow integer weights to their storage type's bytes.
std::vector<std::byte> narrow(const std::vector<int32_t>& v, int bits) {
  std::vector<std::byte> out(v.size() * (bits <= 8 ? 1 : 2));
  for (size_t i = 0; i < v.size(); ++i) {
    if (bits <= 8) {
      out[i] = static_cast<std::byte>(static_cast<int8_t>(v[i]));
    } else {
      const auto s = static_cast<int16_t>(v[i]);
      std::memcpy(out.data() + 2 * i, &s, 2);
    }
  }
  return out;
}

int file_version(const std::map<std::string, std::string>& m, const std::string& path) {
  const auto it = m.find("fixq.version");
  if (it == m.end()) return 1;
  if (it->second == "1" || it->second == "2" || it->second == "3") return it->second[0] - '0';
  fail("quantized GRU ", path, ": file version '", it->second, "' is not one this fixq reads (1, 2 or 3); a newer fixq wrote it");
}

// Version 3 names the cell; earlier versions are all reset-after.
GruCellKind file_cell_kind(const std::map<std::string, std::string>& m, int version, const std::string& path) {
  const auto it = m.find(kCellKey);
  if (version < kVersionWithCell) {
    if (it != m.end())
      fail("quantized GRU ", path, ": metadata '", kCellKey, "' belongs to file version 3, not ", version);
    return GruCellKind::ResetAfter;
  }
  if (it == m.end()) fail("quantized GRU ", path, ": a version 3 file must name its cell in metadata '", kCellKey, "'");
  return parse_gru_cell_kind(it->second, "quantized GRU " + path + ": metadata '" + std::string(kCellKey) + "'");
}

std::vector<int32_t> read_table(const SafetensorsFile& f, const std::string& name) {
  const SafetensorsTensorInfo& info = f.info(name);
  if (info.shape.size() != 1)
    fail("quantized GRU ", f.path(), ": table '", name, "' has shape ", shape_str(info.shape), ", expected 1-D");
  return f.read_i32(name);
}

std::vector<int32_t> read_ints(const SafetensorsFile& f, const std::string& name, int bits, const Shape& shape) {
  const SafetensorsTensorInfo& info = f.info(name);
  if (info.shape != shape)
    fail("quantized GRU ", f.path(), ": tensor '", name, "' has shape ", shape_str(info.shape), ", expected ", shape_str(shape));
  std::vector<int32_t> out;
  if (bits <= 8) {
    for (int8_t v : f.read_i8(name)) out.push_back(v);
  } else {
    for (int16_t v : f.read_i16(name)) out.push_back(v);
  }
  return out;
}

int64_t meta_int(const std::map<std::string, std::string>& m, const std::string& key, const std::string& path) {
  const auto it = m.find(key);
  if (it == m.end()) fail("quantized GRU ", path, ": metadata lacks '", key, "'");
  try {
    size_t used = 0;
    const long long v = std::stoll(it->second, &used);
    if (used != it->second.size() || v < 0 || v > (int64_t{1} << 24)) throw std::invalid_argument("range");
    return v;
  } catch (const std::exception&) {
    fail("quantized GRU ", path, ": metadata '", key, "' = '", it->second, "' is not a valid count");
  }
}

}  // namespace

void QuantizedGru::save(const std::string& path) const {
  const Impl& m = *impl_;
  const GruQuantConfig& cfg = m.params.config;
  // Each view points into its buffer: a deque keeps every buffer where it is as more are added.
  std::deque<std::vector<std::byte>> bufs;
  std::vector<SafetensorsTensorView> views;
  auto add = [&](const std::string& name, const std::vector<int32_t>& v, int bits, Shape shape) {
    bufs.push_back(narrow(v, bits));
    views.push_back({name, bits <= 8 ? SafetensorsDtype::I8 : SafetensorsDtype::I16, std::move(shape), bufs.back()});
  };
  for (size_t c = 0; c < m.plans.size(); ++c) {
    const gru_detail::CellPlan& p = m.plans[c];
    const int64_t H3 = 3 * p.hidden_size;
    add(tensor_name(c, "W"), p.q_w, cfg.bits_of(GruOp::W), {H3, p.input_size});
    add(tensor_name(c, "R"), p.q_r, cfg.bits_of(GruOp::R), {H3, p.hidden_size});
    add(tensor_name(c, "bx"), p.q_bx, cfg.bits_of(GruOp::Bx), {H3});
    add(tensor_name(c, "br"), p.q_br, cfg.bits_of(GruOp::Br), {H3});
    const ActivationLut* luts[3] = {&p.sig_z, &p.sig_r, &p.tanh_g};
    for (int t = 0; t < 3; ++t) {
      const auto e = luts[t]->table();
      bufs.emplace_back(e.size() * sizeof(int32_t));
      std::memcpy(bufs.back().data(), e.data(), bufs.back().size());  // little-endian hosts only (the library's premise)
      views.push_back({tensor_name(c, kTableNames[t]), SafetensorsDtype::I32, Shape{static_cast<int64_t>(e.size())}, bufs.back()});
    }
  }
  const bool reset_after = m.cell_kind == GruCellKind::ResetAfter;
  std::map<std::string, std::string> meta{{kFixqFormatKey, kFormat},
                                          {"fixq.version", std::to_string(reset_after ? kVersion : kVersionWithCell)},
                                          {"input_size", std::to_string(m.input_size)},
                                          {"hidden_size", std::to_string(m.hidden_size)},
                                          {"num_layers", std::to_string(m.num_layers)},
                                          {"bidirectional", m.bidirectional ? "true" : "false"},
                                          {"params", m.params.to_json()}};
  if (!reset_after) meta[kCellKey] = to_string(m.cell_kind);
  save_safetensors(path, views, meta);
}

QuantizedGru QuantizedGru::load(const std::string& path) {
  const SafetensorsFile f(path);
  const auto& meta = f.metadata();
  const auto format = meta.find(kFixqFormatKey);
  if (format == meta.end() || format->second != kFormat)
    fail("quantized GRU ", path, ": not a fixq quantized GRU (metadata 'fixq.format' must be '", kFormat, "')");
  const int version = file_version(meta, path);
  auto impl = std::make_unique<Impl>();
  impl->cell_kind = file_cell_kind(meta, version, path);
  impl->input_size = meta_int(meta, "input_size", path);
  impl->hidden_size = meta_int(meta, "hidden_size", path);
  impl->num_layers = static_cast<int>(meta_int(meta, "num_layers", path));
  const auto bidi = meta.find("bidirectional");
  require(bidi != meta.end() && (bidi->second == "true" || bidi->second == "false"), "quantized GRU ", path,
          ": metadata 'bidirectional' must be true or false");
  impl->bidirectional = bidi->second == "true";
  require(impl->input_size >= 1 && impl->hidden_size >= 1 && impl->num_layers >= 1, "quantized GRU ", path,
          ": sizes must be >= 1");
  const auto params = meta.find("params");
  require(params != meta.end(), "quantized GRU ", path, ": metadata lacks 'params'");
  try {
    impl->params = GruQuantParams::from_json(params->second);
  } catch (const Error& e) {
    fail("quantized GRU ", path, ": metadata 'params': ", e.what());  // name the file
  }
  const int D = impl->directions();
  const size_t cells = static_cast<size_t>(impl->num_layers * D);
  require(impl->params.cells.size() == cells, "quantized GRU ", path, ": parameters describe ",
          impl->params.cells.size(), " cells, the shape needs ", cells);
  const GruQuantConfig& cfg = impl->params.config;
  const int64_t H = impl->hidden_size, H3 = 3 * H;
  for (size_t c = 0; c < cells; ++c) {
    const int64_t C = c < static_cast<size_t>(D) ? impl->input_size : D * H;
    const GruCellParams& p = impl->params.cells[c];
    require(p[GruOp::W].size() == static_cast<size_t>(H3) && p[GruOp::R].size() == static_cast<size_t>(H3) &&
                p[GruOp::Bx].size() == static_cast<size_t>(H3) && p[GruOp::Br].size() == static_cast<size_t>(H3),
            "quantized GRU ", path, ": cell ", c, " parameters are not per channel of 3H = ", H3);
    // Version 2: the tables as stored. Version 1: rebuilt from the parameters.
    gru_detail::StoredTables stored;
    if (version >= 2) {
      stored.sig_z = read_table(f, tensor_name(c, kTableNames[0]));
      stored.sig_r = read_table(f, tensor_name(c, kTableNames[1]));
      stored.tanh_g = read_table(f, tensor_name(c, kTableNames[2]));
      stored.file = path;
      stored.cell = c;
    }
    impl->plans.push_back(gru_detail::build_plan(p, cfg, C, H, read_ints(f, tensor_name(c, "W"), cfg.bits_of(GruOp::W), {H3, C}),
                                                 read_ints(f, tensor_name(c, "R"), cfg.bits_of(GruOp::R), {H3, H}),
                                                 read_ints(f, tensor_name(c, "bx"), cfg.bits_of(GruOp::Bx), {H3}),
                                                 read_ints(f, tensor_name(c, "br"), cfg.bits_of(GruOp::Br), {H3}),
                                                 version >= 2 ? &stored : nullptr, impl->cell_kind));
  }
  impl->finish();
  return QuantizedGru(std::move(impl));
}

std::array<const ActivationLut*, 3> QuantizedGru::tables(size_t cell) const {
  require(cell < impl_->plans.size(), "GRU cell ", cell, " does not exist (the model has ", impl_->plans.size(), ")");
  const gru_detail::CellPlan& p = impl_->plans[cell];
  return {&p.sig_z, &p.sig_r, &p.tanh_g};
}

}  // namespace fixq
