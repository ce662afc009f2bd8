// fixq/qgru.h — the integer-only GRU (docs/spec.md).
//
// Every operator of the parameter table (GruOp, docs/spec.md 3.2) has its own quantization: x and h
// asymmetric per tensor; W and R symmetric per output channel; bx and br symmetric per
// channel; Wx, Rh, z_pre, r_pre, g_pre, z_out, r_out, Rh_add_br, rRh, old_contrib,
// new_contrib asymmetric per tensor; g_out symmetric. Each is 8 or 16 bits, signed. Scales
// are all powers of two (shifts only) or all free (fixed-point multipliers), one switch.
//
// After the input is quantized, the time loop is integer-only (its translation unit is
// compiled with -mgeneral-regs-only, so float code cannot exist there). Per step, with R()
// a FixedPointScale rescale rounding half up (fixq/arith.h) and sat() saturation to the
// target operator's range:
//   q_Wx  = sat(R_j(acc_Wx - Z_x * colsum_W[j]) + Z_Wx)          (GEMM, all steps at once)
//   q_Rh  = sat(R_j(acc_Rh - Z_h * colsum_R[j]) + Z_Rh)          (GEMM, per step)
//   q_z_pre = sat(R(q_Wx_z - Z_Wx) + R(q_Rh_z - Z_Rh) + B_z[j] + Z_z_pre)   B_z = R(q_bx) + R(q_br)
//   q_r_pre likewise;  q_z = LUT_sigmoid(q_z_pre);  q_r = LUT_sigmoid(q_r_pre)
//   q_Rh_add_br = sat(R(q_Rh_g - Z_Rh) + R(q_br_g) + Z_Rh_add_br)
//   q_rRh = sat(R((q_r - Z_r_out)(q_Rh_add_br - Z_Rh_add_br)) + Z_rRh)
//   q_g_pre = sat(R(q_Wx_g - Z_Wx) + R(q_rRh - Z_rRh) + R(q_bx_g) + Z_g_pre);  q_g = LUT_tanh(q_g_pre)
//   q_old = sat(R((q_z - Z_z_out)(q_h - Z_h)) + Z_old)
//   q_1m_z = (round(1 / S_z_out) + Z_z_out) - q_z + Z_z_out         (1 - z in z_out's scale)
//   q_new = sat(R((q_1m_z - Z_z_out)(q_g - Z_g_out)) + Z_new)
//   q_h'  = sat(R(q_old - Z_old) + R(q_new - Z_new) + Z_h)
// Bias terms are per-channel integer constants computed at build time (seed Step 2).
// Layers above the first take the layer below's q_h, rescaled into their x parameters.
//
// Activation tables: for an 8-bit input, table[q] = sat(round_half_even(f(deq(q)) / S_out)
// + Z_out) for all 256 q; for a 16-bit input, a table of f at every 2^s-th input (s the
// largest that meets the bound, chosen and verified exhaustively at build time) with
// integer linear interpolation, within 1 LSB of an 8-bit output and 2 LSB of a 16-bit one
// of the exact f(deq(q)) / S_out + Z_out.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fixq/calib.h"
#include "fixq/gru.h"
#include "fixq/quant.h"

namespace fixq {

// Bit widths per operator and the kind of scale, the knobs of the integer GRU.
struct GruQuantConfig {
  std::array<int, kGruOpCount> bits{};
  ScaleKind scale_kind = ScaleKind::PowerOfTwo;

  // All operators 8-bit.
  static GruQuantConfig int8(ScaleKind kind);
  // 8-bit weights (W, R), 16-bit everything else.
  static GruQuantConfig int16(ScaleKind kind);
  // A base configuration by name, "int8" or "int16" (the two above); throws fixq::Error
  // naming both for any other name (`what`: the option or field being read).
  static GruQuantConfig base(std::string_view name, ScaleKind kind, std::string_view what = "config");
  // Whether name is one of base()'s names.
  static bool is_base_name(std::string_view name);
  // {"version": 1, "base": "int8"|"int16", "scales": "pow2"|"multiplier",
  //  "bits": {"g_pre": 16, ...}}: a base configuration with operators overridden. Unknown
  // keys, unknown operators and bit widths other than 8 or 16 are fixq::Errors.
  static GruQuantConfig from_json(const std::string& text);
  // from_json of a JSON file's contents; a file that cannot be read is a fixq::IoError.
  static GruQuantConfig load(const std::string& path);
  std::string to_json() const;
  void validate() const;
  int bits_of(GruOp op) const { return bits[static_cast<size_t>(op)]; }
};

// The quantization scheme of one operator under a config (symmetry, granularity, bits,
// kind of scale) as the table above says.
QuantScheme gru_op_scheme(GruOp op, const GruQuantConfig& config);

// Quantization parameters of every operator of one layer direction. X is shared by the
// directions of a layer (both read the same input), so both cells of a layer hold the
// same X parameters.
struct GruCellParams {
  std::array<QuantParams, kGruOpCount> op;
  const QuantParams& operator[](GruOp o) const { return op[static_cast<size_t>(o)]; }
  QuantParams& operator[](GruOp o) { return op[static_cast<size_t>(o)]; }
};

struct GruQuantParams {
  GruQuantConfig config;
  std::vector<GruCellParams> cells;  // [layer * D + direction], as GruModel::cells

  // Versioned, human-readable JSON ({"version": 1, "config": ..., "cells": [...]}).
  std::string to_json() const;
  static GruQuantParams from_json(const std::string& text);
};

// The parameters of a weight or bias operator (W, R, bx, br) of one cell from its float
// values ([rows, n] row-major, rows = 3H): symmetric, per row, min/max, with the config's
// bits and kind of scale, as GruCalibrator derives them. A row of zeros gets the range
// [-1, 1] (any scale represents it exactly). Throws fixq::Error for another operator.
QuantParams gru_parameter_params(GruOp op, const GruQuantConfig& config, std::span<const float> values, int64_t rows);

// Streams calibration batches through the float GRU and records every operator's range
// with one Observer per operator and cell (per tensor; W, R, bx, br are taken from the
// model, per channel, by min/max). Every observe() call feeds each time step of each
// sequence as one observation, so EMA runs per time step (docs/spec.md 3.4): the forward
// direction in time order, the reverse direction in its own processing order (from the
// last step back), and the layer input x of both directions in time order, so both
// directions of a layer agree on x.
class GruCalibrator {
 public:
  GruCalibrator(const GruModel& model, const GruQuantConfig& config, const ObserverConfig& method);
  void observe(const float* x, const Shape& x_shape, const GruRunOptions& options = {});
  int64_t batches() const { return batches_; }
  // Parameters for every operator. Throws fixq::Error before any observe().
  GruQuantParams finalize() const;

 private:
  const GruModel* model_;
  GruQuantConfig config_;
  std::vector<std::array<Observer, kGruOpCount>> observers_;  // per cell; W..Br unused
  int64_t batches_ = 0;
};

// An activation lookup table from one operator's parameters to another's (see above).
// Its entries are computed once, when a model is quantized, and stored in the .fixq file
// (version 2): the file is the source of truth, so every machine that loads it runs the
// same integers whatever its libm (docs/spec.md 4.4 and 7.2).
class ActivationLut {
 public:
  enum class Fn { Sigmoid, Tanh };
  // Computes the entries from the parameters (docs/spec.md 4.4).
  static ActivationLut build(Fn fn, const QuantParams& in, const QuantParams& out);
  // A table read back from a file: the layout follows from the input's bit width and the
  // number of entries (256 direct entries for an 8-bit input; (65536 >> s) + 1 knots with
  // 12 fractional bits for a 16-bit one). Throws fixq::Error, naming `what`, for a size
  // that fits no layout or a direct entry outside the output range.
  static ActivationLut from_entries(const QuantParams& in, const QuantParams& out, std::vector<int32_t> entries,
                                    const std::string& what);
  int32_t operator()(int32_t q) const;  // integer only
  // Table layout, for documentation, tests and the vectorised GRU step, which evaluates
  // the same formula as operator() lane by lane.
  int shift() const { return shift_; }
  size_t entries() const { return table_.size(); }
  bool direct() const { return shift_ == 0 && frac_bits_ == 0; }  // table_[q - qmin], no interpolation
  int frac_bits() const { return frac_bits_; }
  int32_t input_min() const { return qmin_; }
  IntRange output_range() const { return {out_min_, out_max_}; }
  std::span<const int32_t> table() const { return table_; }

 private:
  // An empty table with the input's qmin and the output's range, the parameters checked.
  static ActivationLut with_ranges(const QuantParams& in, const QuantParams& out);

  int32_t qmin_ = 0;
  int shift_ = 0;      // 0: direct table; else interpolation step 2^shift inputs
  int frac_bits_ = 0;  // fractional bits of interpolated entries
  int32_t out_min_ = 0, out_max_ = 0;
  std::vector<int32_t> table_;
};

// Every integer constant of one cell as the build derives it (docs/spec.md section 4),
// for code that re-expresses the time step outside this library: fixq.torch.FakeQuantGRU
// simulates it in torch for quantization-aware training, and `fixq gru export-c` writes it
// out as C (fixq/export.h); both take these numbers from here rather than re-deriving them. Zero points and ranges are the parameters' own.
struct GruCellConstants {
  std::vector<int32_t> q_w, q_r, q_bx, q_br;        // integer weights [3H, C], [3H, H], [3H], [3H]
  std::vector<FixedPointScale> wx_scale, rh_scale;  // per row of the two GEMMs (spec 4.1)
  FixedPointScale wx_to_z, rh_to_z, wx_to_r, rh_to_r, rh_to_rhab, wx_to_g, rrh_to_g;
  FixedPointScale rrh_mul, old_mul, new_mul, old_to_h, new_to_h;
  std::vector<int32_t> bias_z, bias_r, bias_rhab, bias_g;  // [H] (spec 4.2)
  int32_t q_one = 0;                                       // spec 4.3
  ActivationLut sig_z, sig_r, tanh_g;                      // spec 4.4
  // The reset-before cell (spec 5.4): r * h -> h and Rh -> g_pre; bias_g then holds
  // bx_g + br_g, and rh_to_rhab, rrh_to_g, rrh_mul, bias_rhab are unused.
  GruCellKind cell_kind = GruCellKind::ResetAfter;
  FixedPointScale reset_mul, rh_to_g;
  // Layers above the first: per direction d of the layer below, the rescale of its h into
  // this cell's x parameters (spec 6.4); empty for layer 0.
  std::vector<FixedPointScale> x_from_below;
};

// The integer GRU, built once from a float model and its parameters.
class QuantizedGru {
 public:
  QuantizedGru(const GruModel& model, const GruQuantParams& params);
  ~QuantizedGru();
  QuantizedGru(QuantizedGru&&) noexcept;
  QuantizedGru& operator=(QuantizedGru&&) noexcept;

  const GruQuantParams& params() const;
  int64_t input_size() const;
  int64_t hidden_size() const;
  int num_layers() const;
  bool bidirectional() const;
  // The model's cell (fixq/gru.h GruCellKind), from the float model it was built from or
  // from the file. A reset-before model runs the reference loop on every CPU
  // (vectorized_cells() is all false); code that re-expresses the step (cell_constants)
  // must check it.
  GruCellKind cell_kind() const;
  // Per cell ([layer * directions + direction]): whether it runs the vectorised loop on
  // this CPU. Both loops compute the same integers; a cell stays on the reference loop
  // when its parameters could take an intermediate outside the vector lanes' int32.
  std::vector<bool> vectorized_cells() const;
  // The constants of cell c ([layer * directions + direction]); throws for c out of range.
  GruCellConstants cell_constants(size_t c) const;

  // Quantizes x with the first layer's x parameters, runs the integer loop, dequantizes
  // the top layer's h. Same tensor conventions and options as gru_forward (the tap is not
  // used). h0 is quantized with each cell's h parameters.
  GruOutput forward(const float* x, const Shape& x_shape, const GruRunOptions& options = {}) const;
  // The same results into `out`, whose vectors are resized and keep their storage: a loop
  // over batches of one shape allocates nothing after its first call (the returning form
  // hands the caller fresh megabytes each time, which the kernel zeroes page by page).
  void forward(const float* x, const Shape& x_shape, GruOutput& out, const GruRunOptions& options = {}) const;

  // The quantized model file: safetensors with the integer weights (I8/I16), the
  // activation tables (I32), and the parameters JSON plus the float model's shape in
  // __metadata__ ("fixq.format": "gru-quantized", "fixq.version": "2"). load() also reads
  // version 1 files (written before the tables were stored) by rebuilding their tables.
  // A reset-before model is written as version 3, version 2 plus "cell": "reset_before",
  // so that a fixq that reads only 1 and 2 refuses it rather than running the wrong cell.
  void save(const std::string& path) const;
  static QuantizedGru load(const std::string& path);

  // The activation tables of cell c ([layer * directions + direction]): sig_z, sig_r,
  // tanh_g, exactly as the integer loop uses them. Throws fixq::Error for c out of range.
  std::array<const ActivationLut*, 3> tables(size_t cell) const;

  struct Impl;  // opaque outside the library; code generators use cell_constants()

 private:
  friend class QuantizedGruStream;
  friend struct QuantizedGruAccess;  // the library's other backends (src/gru/int/model.h)
  explicit QuantizedGru(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Streaming inference for a unidirectional QuantizedGru: the state stays integer between
// frames, and a sequence of step() calls equals QuantizedGru::forward over the whole
// sequence bit for bit. The model must outlive the stream.
class QuantizedGruStream {
 public:
  // h0 [L, B, H] as in forward, or zeros. Throws fixq::Error for a bidirectional model
  // (its reverse direction needs the whole sequence) or batch < 1.
  QuantizedGruStream(const QuantizedGru& model, int64_t batch, const float* h0 = nullptr);
  // Advances every layer by one frame x [B, C]; returns the top layer's h [B, H].
  std::vector<float> step(const float* x);
  // The same step, writing the top layer's h [B, H] to h_out: a frame loop then allocates
  // nothing after its first call.
  void step(const float* x, float* h_out);
  // The state [L, B, H], dequantized.
  std::vector<float> state() const;

 private:
  const QuantizedGru* model_;
  int64_t batch_;
  std::vector<std::vector<char>> q_h_;  // per layer, [B, H] in that layer's h storage
};

}  // namespace fixq
