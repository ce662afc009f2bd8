// export_gru_c: the integer constants of a QuantizedGru (docs/spec.md section 4, as
// QuantizedGru::cell_constants gives them) and its parameters written out as C99 constants
// around the model-independent operator code of c_gru_code.cpp.
#include <array>
#include <cstdio>
#include <utility>
#include <string>
#include <vector>

#include "export/c_gru_code.h"
#include "export/c_text.h"
#include "fixq/error.h"
#include "fixq/export.h"
#include "fixq/qgru.h"
#include "io/atomic_file.h"

namespace fixq {

namespace {

using export_detail::c_array_body;
using export_detail::c_float;
using export_detail::c_int;
using export_detail::c_macro_int;

// The largest element count the generated int32 indices and size_t products handle on
// every target (a 16-bit size_t aside).
constexpr int64_t kMaxArray = int64_t{1} << 30;

const char* c_type(int bits) { return bits <= 8 ? "int8_t" : "int16_t"; }

// One per-tensor operator as the generated code holds it: its zero point and integer
// range, both its parameters' own; stored in 8 bits up to 8-bit operators, else 16.
struct OpQ {
  int32_t zp = 0;
  IntRange range;
  bool narrow = true;
};

OpQ op_q(const QuantParams& p) { return {p.zero_point[0], p.scheme.format.range(), p.scheme.format.bits <= 8}; }

std::string op_init(const OpQ& q) {
  return "{" + c_int(q.zp) + ", " + c_int(q.range.qmin) + ", " + c_int(q.range.qmax) + "}";
}

std::string scale_init(const FixedPointScale& s) {
  char real[40];
  std::snprintf(real, sizeof real, "%.9g", s.real());
  return "{" + c_int(s.m) + ", " + c_int(s.shift) + "} /* " + real + " */";
}

std::string scale_array(const std::vector<FixedPointScale>& v) {
  std::string out = "{";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i % 6 == 0) out += "\n  ";
    out += "{" + c_int(v[i].m) + ", " + c_int(v[i].shift) + "}";
    if (i + 1 < v.size()) out += i % 6 == 5 ? "," : ", ";
  }
  return out + "\n}";
}

template <class T>
std::string array_def(const std::string& type, const std::string& name, const std::vector<T>& v, const std::string& what) {
  return "/* " + what + " */\nstatic const " + type + " " + name + "[" + std::to_string(v.size()) + "] = " +
         c_array_body(std::span<const T>(v)) + ";\n";
}

std::vector<int32_t> row_sums(const std::vector<int32_t>& q, int64_t rows, int64_t cols) {
  std::vector<int32_t> s(static_cast<size_t>(rows));
  for (int64_t j = 0; j < rows; ++j) {
    int64_t sum = 0;
    for (int64_t k = 0; k < cols; ++k) sum += q[static_cast<size_t>(j * cols + k)];
    s[static_cast<size_t>(j)] = static_cast<int32_t>(sum);  // |sum| <= 2^30 * 2^15 / ... checked by the caller
  }
  return s;
}

// One table's array and its act_table initializer.
struct TableText {
  std::string array, init;
};

TableText table_text(const ActivationLut& t, const std::string& name, const std::string& what, const OpQ& out) {
  const auto e = t.table();
  std::vector<int32_t> v(e.begin(), e.end());
  TableText r;
  std::string field;
  if (t.direct()) {
    const bool narrow = out.narrow;
    r.array = array_def(narrow ? "int8_t" : "int16_t", name, v, what + ": direct, entry q - (" + c_int(t.input_min()) + ")");
    field = narrow ? ".direct8 = " : ".direct16 = ";
  } else {
    r.array = array_def("int32_t", name, v,
                        what + ": knots every 2^" + std::to_string(t.shift()) + " inputs, " + std::to_string(t.frac_bits()) +
                            " fractional bits");
    field = ".knots = ";
  }
  r.init = "{" + field + name + ", .qmin_in = " + c_int(t.input_min()) + ", .shift = " + std::to_string(t.shift()) +
           ", .frac = " + std::to_string(t.frac_bits()) + ", .out = " + op_init(out) + "}";
  return r;
}

struct Model {
  const GruQuantParams* params;
  std::vector<GruCellConstants> cells;  // [layer * D + direction]
  int L, D;
  int64_t C, H;
  int bits_x, bits_h, bits_w, bits_r;
  OpQ op(size_t cell, GruOp o) const { return op_q(params->cells[cell][o]); }
  int64_t input_size(size_t cell) const { return static_cast<int64_t>(cells[cell].q_w.size()) / (3 * H); }
};

// The twelve fixed-point ratios of a cell, by their names in the generated code.
std::array<std::pair<const char*, const FixedPointScale*>, 12> ratios(const GruCellConstants& k) {
  return {{{"wx_to_z", &k.wx_to_z},       {"rh_to_z", &k.rh_to_z}, {"wx_to_r", &k.wx_to_r}, {"rh_to_r", &k.rh_to_r},
           {"rh_to_rhab", &k.rh_to_rhab}, {"wx_to_g", &k.wx_to_g}, {"rrh_to_g", &k.rrh_to_g}, {"rrh_mul", &k.rrh_mul},
           {"old_mul", &k.old_mul},       {"new_mul", &k.new_mul}, {"old_to_h", &k.old_to_h}, {"new_to_h", &k.new_to_h}}};
}

Model model_of(const QuantizedGru& q) {
  // The generated step is the reset-after cell's (docs/spec.md 7.4); the reset-before one
  // (5.4) has a third product per step that the generator does not write yet.
  if (q.cell_kind() != GruCellKind::ResetAfter)
    fail("C export: the model's cell is ", to_string(q.cell_kind()), "; export-c writes only the reset_after cell "
         "(torch.nn.GRU, ONNX linear_before_reset = 1); run this model with `fixq gru run` or the library");
  const GruQuantConfig& cfg = q.params().config;
  Model r{&q.params(), {}, q.num_layers(), q.bidirectional() ? 2 : 1, q.input_size(), q.hidden_size(),
          cfg.bits_of(GruOp::X), cfg.bits_of(GruOp::H), cfg.bits_of(GruOp::W), cfg.bits_of(GruOp::R)};
  const int64_t widest = std::max(r.C, r.D * r.H);
  if (3 * r.H * widest > kMaxArray || 3 * r.H * r.H > kMaxArray)
    fail("C export: a weight matrix of 3 x ", r.H, " x ", widest, " elements exceeds the generator's limit of 2^30 elements; ",
         "a model this size does not fit a microcontroller or DSP anyway");
  for (size_t c = 0; c < static_cast<size_t>(r.L * r.D); ++c) r.cells.push_back(q.cell_constants(c));
  for (const GruCellConstants& k : r.cells)
    for (const auto& [name, s] : ratios(k))
      if (s->m <= 0) fail("C export: a fixed-point multiplier ", s->m, " is not positive; the model file is damaged");
  return r;
}

// Whether sum_k a_k b_k over n terms of the given widths is exact in int32.
bool int32_dot(int64_t n, int bits_a, int bits_b) {
  return n * (int64_t{1} << (bits_a - 1)) * (int64_t{1} << (bits_b - 1)) <= INT32_MAX;
}

std::string describe(const Model& mo) {
  const GruQuantConfig& cfg = mo.params->config;
  std::string bits;
  for (int i = 0; i < kGruOpCount; ++i)
    bits += std::string(i ? ", " : "") + to_string(static_cast<GruOp>(i)) + " " + std::to_string(cfg.bits[static_cast<size_t>(i)]);
  return "input " + std::to_string(mo.C) + ", hidden " + std::to_string(mo.H) + ", " + std::to_string(mo.L) + " layer(s), " +
         (mo.D == 2 ? "bidirectional" : "unidirectional") + ", " +
         to_string(cfg.scale_kind) + " scales;\n * bits: " + bits;
}

std::string header_text(const Model& mo, const CExportOptions& o) {
  const QuantParams& xp = mo.params->cells[0][GruOp::X];
  const OpQ x = mo.op(0, GruOp::X);
  std::string s = "/* $p.h: an integer-only GRU as standalone C99, generated by `fixq gru export-c`";
  s += o.source.empty() ? ".\n" : " from\n * " + o.source + ".\n";
  s += " * Do not edit: regenerate it from the .fixq file. It computes the integers of fixq's GRU\n"
       " * (docs/spec.md) bit for bit.\n *\n * Model: " + describe(mo) + "\n *\n";
  if (mo.D == 1)
    s += " * Streaming, one frame at a time:\n"
         " *   $p_state s;  $p_reset(&s);\n"
         " *   per frame: $p_quantize_x(x, x_q);  $p_step(&s, x_q, h_q);  $p_dequantize_h(h_q, h);\n";
  else
    s += " * Bidirectional, so whole sequences (the reverse direction starts from the last step):\n"
         " *   $p_state s;  $p_reset(&s);\n"
         " *   $p_sequence(&s, x_q, steps, y_q, scratch);   x_q [steps][INPUT_SIZE], y_q [steps][OUTPUT_SIZE]\n";
  s += " * On a target without float, define $U_NO_FLOAT and quantize the input as $U_X_SCALE and\n"
       " * $U_X_ZERO_POINT say: x_q = clamp(round_half_even(x / SCALE) + ZERO_POINT, X_MIN, X_MAX).\n"
       " */\n"
       "#ifndef $U_H\n#define $U_H\n\n#include <stddef.h>\n#include <stdint.h>\n\n"
       "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  s += "#define $U_INPUT_SIZE " + std::to_string(mo.C) + "\n";
  s += "#define $U_HIDDEN_SIZE " + std::to_string(mo.H) + "\n";
  s += "#define $U_NUM_LAYERS " + std::to_string(mo.L) + "\n";
  s += "#define $U_DIRECTIONS " + std::to_string(mo.D) + "\n";
  s += "#define $U_NUM_CELLS ($U_NUM_LAYERS * $U_DIRECTIONS)\n";
  s += "#define $U_OUTPUT_SIZE ($U_DIRECTIONS * $U_HIDDEN_SIZE)\n\n";
  s += "/* Layer 0's input quantization (docs/spec.md 3.1): real x = (x_q - ZERO_POINT) * SCALE. */\n";
  s += "#define $U_X_ZERO_POINT " + c_macro_int(x.zp) + "\n";
  s += "#define $U_X_SCALE " + c_float(xp.scale[0]) + "\n";
  s += "#define $U_X_MIN " + c_macro_int(x.range.qmin) + "\n";
  s += "#define $U_X_MAX " + c_macro_int(x.range.qmax) + "\n\n";
  s += "typedef " + std::string(c_type(mo.bits_x)) + " $p_x_t; /* x: " + std::to_string(mo.bits_x) + " bits */\n";
  s += "typedef " + std::string(c_type(mo.bits_h)) + " $p_h_t; /* h: " + std::to_string(mo.bits_h) + " bits */\n\n";
  s += "/* The recurrent state, owned by the caller: each cell's h ([layer * DIRECTIONS + direction])\n"
       " * in that cell's h parameters. */\n"
       "typedef struct $p_state {\n  $p_h_t h[$U_NUM_CELLS][$U_HIDDEN_SIZE];\n} $p_state;\n\n";
  s += "/* Every state to real 0 (its zero point), as fixq's forward pass without h0. */\n"
       "void $p_reset($p_state* s);\n";
  if (mo.D == 1)
    s += "/* One frame x_q [INPUT_SIZE] through every layer; writes the top layer's new h [HIDDEN_SIZE]. */\n"
         "void $p_step($p_state* s, const $p_x_t* x_q, $p_h_t* h_q);\n";
  else
    s += "/* A whole sequence x_q [steps][INPUT_SIZE] from the states in s (left holding h_n): writes\n"
         " * y_q [steps][OUTPUT_SIZE], each row the forward then the reverse direction's h. scratch holds\n"
         " * steps * OUTPUT_SIZE values (the input of the layers above the first); NULL for one layer. */\n"
         "void $p_sequence($p_state* s, const $p_x_t* x_q, size_t steps, $p_h_t* y_q, $p_x_t* scratch);\n";
  s += "\n#ifndef $U_NO_FLOAT\n"
       "/* Host helpers, the only float code: the same floats as fixq (docs/spec.md 3.1). */\n"
       "/* x [INPUT_SIZE] quantized with layer 0's x parameters (NaN gives the zero point). */\n"
       "void $p_quantize_x(const float* x, $p_x_t* x_q);\n"
       "/* h_q [OUTPUT_SIZE] (one output row) dequantized with the top cells' h parameters. */\n"
       "void $p_dequantize_h(const $p_h_t* h_q, float* h);\n#endif\n\n"
       "#ifdef __cplusplus\n}\n#endif\n\n#endif /* $U_H */\n";
  return s;
}

std::string cell_text(const Model& mo, int c, std::string* init) {
  const size_t cell = static_cast<size_t>(c);
  const GruCellConstants& k = mo.cells[cell];
  const int64_t H = mo.H, C = mo.input_size(cell), H3 = 3 * H;
  const std::string n = "cell" + std::to_string(c) + "_";
  const int layer = c / mo.D, dir = c % mo.D;
  std::string s = "\n/* ---- cell " + std::to_string(c) + ": layer " + std::to_string(layer) + ", " +
                  (dir == 0 ? "forward" : "reverse") + " ---- */\n";
  s += array_def(c_type(mo.bits_w), n + "w", k.q_w, "q_W [3H][" + std::to_string(C) + "], rows z, r, g");
  s += array_def(c_type(mo.bits_r), n + "r", k.q_r, "q_R [3H][H], rows z, r, g");
  s += array_def("int32_t", n + "w_colsum", row_sums(k.q_w, H3, C), "row sums of q_W");
  s += array_def("int32_t", n + "r_colsum", row_sums(k.q_r, H3, H), "row sums of q_R");
  s += "/* S_W[j] S_x / S_Wx per row, {m, shift} */\nstatic const fx_scale " + n + "wx_scale[" + std::to_string(H3) +
       "] = " + scale_array(k.wx_scale) + ";\n";
  s += "/* S_R[j] S_h / S_Rh per row */\nstatic const fx_scale " + n + "rh_scale[" + std::to_string(H3) + "] = " +
       scale_array(k.rh_scale) + ";\n";
  s += array_def("int32_t", n + "bias_z", k.bias_z, "bias_z [H] in z_pre's LSBs");
  s += array_def("int32_t", n + "bias_r", k.bias_r, "bias_r [H] in r_pre's LSBs");
  s += array_def("int32_t", n + "bias_rhab", k.bias_rhab, "bias_rhab [H] in Rh_add_br's LSBs");
  s += array_def("int32_t", n + "bias_g", k.bias_g, "bias_g [H] in g_pre's LSBs");
  const TableText tz = table_text(k.sig_z, n + "sig_z", "sig_z: z_pre -> z_out", mo.op(cell, GruOp::ZOut));
  const TableText tr = table_text(k.sig_r, n + "sig_r", "sig_r: r_pre -> r_out", mo.op(cell, GruOp::ROut));
  const TableText tg = table_text(k.tanh_g, n + "tanh_g", "tanh_g: g_pre -> g_out", mo.op(cell, GruOp::GOut));
  s += tz.array + tr.array + tg.array;

  // 6.4: into the next layer's x parameters, with the library's own rescale.
  std::string next = "{1, 0}", next_x = "{0, 0, 0}";
  if (layer + 1 < mo.L) {
    const size_t up = static_cast<size_t>((layer + 1) * mo.D);
    next = scale_init(mo.cells[up].x_from_below[static_cast<size_t>(dir)]);
    next_x = op_init(mo.op(up, GruOp::X));
  }
  std::string& i = *init;
  i += "  { /* cell " + std::to_string(c) + " */\n";
  i += "    .input_size = " + std::to_string(C) + ",\n";
  i += "    /* operators: {zero point, qmin, qmax} */\n";
  const std::pair<const char*, GruOp> ops[] = {
      {"x", GruOp::X},         {"h", GruOp::H},         {"wx", GruOp::Wx},       {"rh", GruOp::Rh},
      {"z_pre", GruOp::ZPre},  {"r_pre", GruOp::RPre},  {"g_pre", GruOp::GPre},  {"z_out", GruOp::ZOut},
      {"r_out", GruOp::ROut},  {"g_out", GruOp::GOut},  {"rh_add_br", GruOp::RhAddBr}, {"rrh", GruOp::RRh},
      {"old_c", GruOp::OldContrib}, {"new_c", GruOp::NewContrib}};
  for (const auto& [name, o] : ops) i += "    ." + std::string(name) + " = " + op_init(mo.op(cell, o)) + ",\n";
  i += "    .w = " + n + "w,\n    .r = " + n + "r,\n    .w_colsum = " + n + "w_colsum,\n    .r_colsum = " + n + "r_colsum,\n";
  i += "    .wx_scale = " + n + "wx_scale,\n    .rh_scale = " + n + "rh_scale,\n";
  i += "    /* ratios of scales: {m, shift} = m * 2^-shift */\n";
  for (const auto& [name, sc] : ratios(k)) i += "    ." + std::string(name) + " = " + scale_init(*sc) + ",\n";
  i += "    .bias_z = " + n + "bias_z,\n    .bias_r = " + n + "bias_r,\n    .bias_rhab = " + n + "bias_rhab,\n    .bias_g = " +
       n + "bias_g,\n";
  i += "    .q_one = " + c_int(k.q_one) + ",\n";
  i += "    .sig_z = " + tz.init + ",\n    .sig_r = " + tr.init + ",\n    .tanh_g = " + tg.init + ",\n";
  i += "    .h_to_next_x = " + next + ",\n    .next_x = " + next_x + "\n  }";
  return s;
}

std::string api_text(const Model& mo) {
  std::string s = "\n/* ==== Part 4: the API ($p.h) ========================================================= */\n\n";
  s += "void $p_reset($p_state* s) {\n  int32_t c, j;\n  for (c = 0; c < $U_NUM_CELLS; ++c)\n"
       "    for (j = 0; j < $U_HIDDEN_SIZE; ++j) s->h[c][j] = ($p_h_t)cells[c].h.zp;\n}\n\n";
  if (mo.D == 1 && mo.L == 1) {
    s += "void $p_step($p_state* s, const $p_x_t* x_q, $p_h_t* h_q) {\n"
         "  cell_advance(&cells[0], x_q, s->h[0]);\n  memcpy(h_q, s->h[0], sizeof s->h[0]);\n}\n";
  } else if (mo.D == 1) {
    s += "void $p_step($p_state* s, const $p_x_t* x_q, $p_h_t* h_q) {\n"
         "  $p_x_t layer_x[$U_HIDDEN_SIZE]; /* 6.4: the input of the layers above the first */\n"
         "  const $p_x_t* in = x_q;\n  int32_t l, j;\n"
         "  for (l = 0; l < $U_NUM_LAYERS; ++l) {\n    cell_advance(&cells[l], in, s->h[l]);\n"
         "    if (l + 1 < $U_NUM_LAYERS) {\n"
         "      for (j = 0; j < $U_HIDDEN_SIZE; ++j) layer_x[j] = to_next_layer(&cells[l], s->h[l][j]);\n"
         "      in = layer_x;\n    }\n  }\n"
         "  memcpy(h_q, s->h[$U_NUM_LAYERS - 1], sizeof s->h[0]);\n}\n";
  } else {
    s += "void $p_sequence($p_state* s, const $p_x_t* x_q, size_t steps, $p_h_t* y_q, $p_x_t* scratch) {\n"
         "  const $p_x_t* in = x_q;\n  size_t in_size = $U_INPUT_SIZE, i, t;\n  int32_t l, d;\n";
    if (mo.L > 1) s += "  int32_t j;\n";
    else s += "  (void)scratch; /* one layer: no input for a layer above */\n";
    s += "  for (l = 0; l < $U_NUM_LAYERS; ++l) {\n"
         "    for (d = 0; d < 2; ++d) {\n"
         "      const gru_cell* c = &cells[2 * l + d];\n      $p_h_t* h = s->h[2 * l + d];\n"
         "      for (i = 0; i < steps; ++i) {\n"
         "        t = d == 0 ? i : steps - 1 - i; /* 6.2: the reverse direction from the last step back */\n"
         "        cell_advance(c, in + t * in_size, h);\n"
         "        memcpy(y_q + t * $U_OUTPUT_SIZE + (size_t)d * $U_HIDDEN_SIZE, h, sizeof s->h[0]);\n"
         "      }\n    }\n";
    if (mo.L > 1)
      s += "    if (l + 1 < $U_NUM_LAYERS) { /* 6.4: both directions' h in the next layer's x parameters */\n"
           "      for (t = 0; t < steps; ++t)\n        for (d = 0; d < 2; ++d)\n"
           "          for (j = 0; j < $U_HIDDEN_SIZE; ++j) {\n"
           "            const size_t at = t * $U_OUTPUT_SIZE + (size_t)d * $U_HIDDEN_SIZE + (size_t)j;\n"
           "            scratch[at] = to_next_layer(&cells[2 * l + d], y_q[at]);\n          }\n"
           "      in = scratch;\n      in_size = $U_OUTPUT_SIZE;\n    }\n";
    s += "  }\n}\n";
  }
  s += export_detail::kQuantizeC;
  s += "\n#ifndef $U_NO_FLOAT\nvoid $p_quantize_x(const float* x, $p_x_t* x_q) {\n  size_t k;\n"
       "  for (k = 0; k < $U_INPUT_SIZE; ++k)\n"
       "    x_q[k] = ($p_x_t)quantize_value(x[k], $U_X_SCALE, $U_X_ZERO_POINT, $U_X_MIN, $U_X_MAX);\n}\n\n";
  s += "/* 3.1: x = fl32(float(q - Z) * S) with each top cell's h parameters. */\n"
       "void $p_dequantize_h(const $p_h_t* h_q, float* h) {\n  static const float scale[$U_DIRECTIONS] = {";
  for (int d = 0; d < mo.D; ++d) {
    const QuantParams& hp = mo.params->cells[static_cast<size_t>((mo.L - 1) * mo.D + d)][GruOp::H];
    s += std::string(d ? ", " : "") + c_float(hp.scale[0]);
  }
  s += "};\n  size_t d, j;\n  for (d = 0; d < $U_DIRECTIONS; ++d)\n    for (j = 0; j < $U_HIDDEN_SIZE; ++j) {\n"
       "      const size_t i = d * $U_HIDDEN_SIZE + j;\n"
       "      h[i] = (float)((int32_t)h_q[i] - cells[($U_NUM_LAYERS - 1) * $U_DIRECTIONS + d].h.zp) * scale[d];\n"
       "    }\n}\n#endif\n";
  return s;
}

std::string source_text(const Model& mo, const CExportOptions& o) {
  std::string s = "/* $p.c: generated by `fixq gru export-c`";
  s += o.source.empty() ? "" : " from " + o.source;
  s += "; the API is in $p.h. Do not edit.\n *\n"
       " * Part 1 holds the primitives of docs/spec.md section 2, Part 2 one function per operator of\n"
       " * sections 4 and 5, Part 3 the model's constants, Part 4 the API. Integer arithmetic only,\n"
       " * except $p_quantize_x and $p_dequantize_h (removed by defining $U_NO_FLOAT). Portable\n"
       " * C99: no heap, no libm, no implementation-defined shifts of negative numbers.\n */\n"
       "#include \"$p.h\"\n\n#include <string.h>\n\n";
  const bool w32 = int32_dot(std::max(mo.C, mo.D * mo.H), mo.bits_w, mo.bits_x);
  const bool r32 = int32_dot(mo.H, mo.bits_r, mo.bits_h);
  s += "/* Storage of the weights, and accumulators wide enough that every dot product is exact\n"
       " * (input size x largest |q_W| x largest |q_x| below 2^31 for int32). */\n";
  s += "typedef " + std::string(c_type(mo.bits_w)) + " w_t;\ntypedef " + c_type(mo.bits_r) + " r_t;\n";
  s += std::string("typedef ") + (w32 ? "int32_t" : "int64_t") + " acc_w_t;\n";
  s += std::string("typedef ") + (r32 ? "int32_t" : "int64_t") + " acc_r_t;\n\n";
  s += export_detail::kPrimitivesC;
  s += export_detail::kOperatorsC;
  if (mo.L > 1) s += export_detail::kNextLayerC;
  s += "\n/* ==== Part 3: the model's constants (docs/spec.md section 4) ======================== */\n";
  std::string init = "\nstatic const gru_cell cells[$U_NUM_CELLS] = {\n";
  const int cells = static_cast<int>(mo.cells.size());
  for (int c = 0; c < cells; ++c) {
    s += cell_text(mo, c, &init);
    init += c + 1 < cells ? ",\n" : "\n";
  }
  s += init + "};\n";
  s += api_text(mo);
  return s;
}

}  // namespace

CExportFiles export_gru_c(const QuantizedGru& model, const CExportOptions& options) {
  validate_c_name(options.name);
  const Model mo = model_of(model);
  // Row sums must fit the int32 arrays: |q| <= 2^15 over at most 2^16 columns is 2^31;
  // checked exactly here rather than assumed.
  for (size_t c = 0; c < mo.cells.size(); ++c)
    for (const auto* q : {&mo.cells[c].q_w, &mo.cells[c].q_r}) {
      const int64_t cols = q == &mo.cells[c].q_w ? mo.input_size(c) : mo.H;
      for (int64_t j = 0; j < 3 * mo.H; ++j) {
        int64_t sum = 0;
        for (int64_t k = 0; k < cols; ++k) sum += (*q)[static_cast<size_t>(j * cols + k)];
        if (sum < INT32_MIN || sum > INT32_MAX)
          fail("C export: a weight row sums to ", sum, ", beyond int32; the generator cannot express this model");
      }
    }
  CExportFiles f;
  f.header = export_detail::with_prefix(header_text(mo, options), options.name);
  f.source = export_detail::with_prefix(source_text(mo, options), options.name);
  return f;
}

void write_gru_c(const QuantizedGru& model, const std::string& dir, const CExportOptions& options) {
  const CExportFiles f = export_gru_c(model, options);
  const std::string folder = dir.empty() ? std::string(".") : dir;
  make_directories(folder, "C export");
  const std::string base = folder + "/" + options.name;
  write_file_atomically(base + ".h", {{f.header.data(), f.header.size()}}, "C export");
  write_file_atomically(base + ".c", {{f.source.data(), f.source.size()}}, "C export");
}

}  // namespace fixq
