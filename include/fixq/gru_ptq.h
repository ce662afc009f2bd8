// fixq/gru_ptq.h — post-training quantization of the GRU beyond range calibration.
//
// GruPtq streams calibration batches through the float GRU like GruCalibrator, and keeps
// what three further steps need; quantize() then derives the integer model:
//   1. Weight rounding against the calibration data (GPTQ, Frantar et al. 2022): the rows
//      of W are rounded one input column at a time, each rounding error compensated on the
//      columns not yet rounded, so as to minimise sum_t |(W - W_q) x_t|^2 over the
//      calibration inputs x_t; R likewise over the states h_t. The input statistics are
//      the second moments E[x x^T] and E[h h^T] recorded during calibration. Columns go in
//      order of decreasing E[x_k^2] ("act order"), with damping 1% of the mean diagonal.
//      Rows are independent under this error, so every row keeps whichever of its GPTQ and
//      round-to-nearest roundings has the smaller error: the layer's calibration error is
//      never above round-to-nearest's.
//   2. Bias correction (Nagel et al. 2019, "Data-Free Quantization", empirical form): the
//      expected error that weight rounding adds to each gate pre-activation,
//      (W_q - W) E[x] and (R_q - R) E[h], is subtracted from bx and br.
//   3. Ranges chosen per operator by output error: every activation operator of every
//      cell starts from the one method (minmax, ema, percentile, mse) whose parameters,
//      applied to all operators, give the least squared error of the GRU's output on the
//      calibration data; then coordinate descent over the operators, trying for each the
//      other methods' ranges and the current range widened or narrowed (power-of-two
//      scales: one exponent either way; multipliers: x0.7, x0.8, x0.9, x0.95, x1.05,
//      x1.125, x1.25, x1.4), keeps every change that lowers that output error, for up to
//      search_sweeps passes (fewer when a pass changes nothing). Narrowing clips: pre-activations gain
//      resolution where the tables are steep and lose nothing where they are flat.
// Steps 1 and 2 change only the float weights the integer ones are rounded from: the
// result is a GruModel whose W and R lie on their integer grids (QuantizedGru(model,
// params) reproduces exactly the chosen integers) and whose biases are corrected. Nothing
// about the integer GRU itself changes: the .fixq file and docs/spec.md are as before.
//
// auto_bits() chooses per-operator bit widths: starting from a base config it promotes,
// greedily, the operator whose promotion to 16 bits raises the output cosine on the
// calibration data most, until a target cosine is met (or a cost budget is spent), then
// drops every promotion the target does not need.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fixq/calib.h"
#include "fixq/gru.h"
#include "fixq/qgru.h"

namespace fixq {

enum class WeightRounding { Nearest, Gptq };

// "nearest", "gptq"; the inverse throws fixq::Error naming the accepted spellings.
std::string to_string(WeightRounding r);
WeightRounding parse_weight_rounding(const std::string& name);

// How GruPtqOptions::method picks the ranges, by name: "auto" (std::nullopt: each
// operator's by the output error) or a name of to_string(CalibMethod) (that method for
// every operator). The inverse throws fixq::Error naming all of them (and `what`, the
// option or field being read).
std::string range_method_name(const std::optional<CalibMethod>& method);
std::optional<CalibMethod> parse_range_method(std::string_view name, std::string_view what = "method");

struct GruPtqOptions {
  // Ranges: std::nullopt = per operator by output error (step 3); a method = that method
  // for every operator, exactly as GruCalibrator.
  std::optional<CalibMethod> method;
  WeightRounding rounding = WeightRounding::Gptq;  // step 1
  bool bias_correction = true;                     // step 2
  double gptq_damp = 0.01;                         // GPTQ damping, times the mean of diag(E[x x^T])
  int search_sweeps = 3;                           // coordinate-descent passes over the operators (at most)
  // Calibration sequences kept for the output-error searches, in sequence steps (T * B of
  // each batch; batches are kept whole while they fit, later ones only feed statistics).
  int64_t max_search_steps = 1 << 14;
  double ema_decay = 0.9;    // as ObserverConfig
  double percentile = 99.99;
  int bins = 2048;

  void validate() const;
};

// Cost of a configuration for one model (auto_bits prints it).
struct GruBitsCost {
  int64_t weight_bytes = 0;  // integer W, R, bx, br of every cell
  int64_t macs = 0;          // multiply-accumulates of the two GEMMs per time step and batch item
  int64_t wide_macs = 0;     // of which with a 16-bit operand
  int64_t elementwise = 0;   // operator values computed per step and item (3H per GEMM, H per other operator)
  int64_t wide_elementwise = 0;  // of which 16-bit
  // The per-step work estimate: MACs and element-wise values, 16-bit ones counting twice
  // (half as many lanes per vector register).
  int64_t work() const { return macs + wide_macs + elementwise + wide_elementwise; }
};
GruBitsCost gru_bits_cost(const GruModel& model, const GruQuantConfig& config);

struct GruPtqResult {
  GruModel model;         // weights on the integer grid, corrected biases
  GruQuantParams params;  // QuantizedGru(model, params) is the integer model
  // Per cell, how each operator's range was chosen ("mse", "percentile x0.5", ...; the
  // weight operators say "minmax"); the X entry of a reverse cell repeats the forward one.
  std::vector<std::array<std::string, kGruOpCount>> choices;
  double calib_mse = 0.0;     // squared error of the output per element, calibration data
  double calib_cosine = 0.0;  // cosine of the output against float, calibration data
};

struct GruAutoBitsOptions {
  double target_cosine = 0.9999;         // in (0, 1]
  std::optional<double> max_work_ratio;  // work() of the result / work() of the base, >= 1
  void validate() const;
};

struct GruAutoBitsResult {
  GruPtqResult result;               // the chosen config, quantized with quantize()
  GruBitsCost cost, base_cost;
  bool target_met = false;
  std::vector<std::string> promoted;  // operators at 16 bits that the base has at 8, in promotion order
};

class GruPtq {
 public:
  GruPtq(const GruModel& model, const GruPtqOptions& options = {});
  ~GruPtq();
  GruPtq(GruPtq&&) noexcept;
  GruPtq& operator=(GruPtq&&) noexcept;

  // As GruCalibrator::observe. Throws fixq::Error for bad input (nothing is recorded then).
  void observe(const float* x, const Shape& x_shape, const GruRunOptions& options = {});
  int64_t batches() const;
  const GruPtqOptions& options() const;

  // The integer model under config. Throws fixq::Error before any observe(). With
  // rounding Nearest, no bias correction and a method, equals GruCalibrator with that
  // method (same parameters, the model unchanged).
  GruPtqResult quantize(const GruQuantConfig& config) const;
  // Mixed precision from `base` (see the header comment).
  GruAutoBitsResult auto_bits(const GruQuantConfig& base, const GruAutoBitsOptions& options) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// GPTQ (step 1) on its own, for one weight matrix: w [rows, cols] row-major, hessian the
// [cols, cols] second moment of the inputs (E[x x^T], symmetric positive semidefinite),
// scale[r] the row's quantization step, integers in [qmin, qmax]. Returns the integer
// weights; every row keeps the better (under `hessian`) of GPTQ and round-to-nearest.
std::vector<int32_t> gptq_round(const std::vector<float>& w, int64_t rows, int64_t cols, const std::vector<double>& hessian,
                                const std::vector<float>& scale, int32_t qmin, int32_t qmax, double damp = 0.01);

}  // namespace fixq
