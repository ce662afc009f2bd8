// fixq/report.h — how a quantized GRU does against its float model, and the HTML page that
// shows it.
//
// evaluate_gru() runs the float GRU and the integer one over the same sequences and
// collects: the error of all outputs, of each time step, and of each operator's own
// quantization (its float values round-tripped through that operator's parameters); with
// value_histograms, also every operator's values against its quantizer's range (a second
// float pass, so that the histograms' bins span what the first pass saw).
//
// write_gru_report() turns an evaluation into one self-contained page (inline CSS and SVG,
// no script, no external URL): the model summary, the output metrics against float, the
// error per time step, SQNR per operator and, per operator of every cell, its calibrated
// range over the histogram of its values. `fixq gru eval --report` writes it.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fixq/gru.h"
#include "fixq/metrics.h"
#include "fixq/qgru.h"
#include "fixq/quant.h"

namespace fixq {

// dequantize(quantize(x)) under params, compared with x: the error that quantizing x costs.
ErrorStats quantization_error(const std::vector<float>& x, const Shape& shape, const QuantParams& params);

// A decibel figure as a report shows it: "%.2f", infinities as "inf" / "-inf" (an
// error-free SQNR is +inf).
std::string fmt_db(double db);

// The values one per-tensor operator takes in a float run, against its quantizer. Filled
// in two passes over the same data: observe() (count, min, max, how many saturate), then,
// after fix_bins(), bin() for the histogram, whose range covers both the values and the
// quantizer's range [dequantize(qmin), dequantize(qmax)].
class OpValueStats {
 public:
  OpValueStats() = default;
  // Throws fixq::Error unless params hold one (scale, zero point).
  explicit OpValueStats(const QuantParams& params);

  // Pass 1. A value saturates when round_half_even(x / scale) + zero_point lies outside
  // [qmin, qmax], i.e. exactly when fixq::quantize clamps it.
  void observe(const float* values, int64_t n);
  // Between the passes: `bins` equal bins over [min(min, range_lo), max(max, range_hi)].
  void fix_bins(int bins);
  // Pass 2: the same values again, into the bins (the last bin is closed on the right).
  void bin(const float* values, int64_t n);

  bool empty() const { return count_ == 0; }
  uint64_t count() const { return count_; }
  uint64_t below() const { return below_; }  // saturated at qmin
  uint64_t above() const { return above_; }  // saturated at qmax
  float min() const { return min_; }
  float max() const { return max_; }
  double range_lo() const { return range_lo_; }  // dequantize(qmin)
  double range_hi() const { return range_hi_; }  // dequantize(qmax)
  double bins_lo() const { return bins_lo_; }
  double bins_hi() const { return bins_hi_; }
  const std::vector<uint64_t>& bins() const { return bins_; }

 private:
  float scale_ = 1;
  int32_t zero_point_ = 0, qmin_ = 0, qmax_ = 0;
  double range_lo_ = 0, range_hi_ = 0;
  uint64_t count_ = 0, below_ = 0, above_ = 0;
  float min_ = 0, max_ = 0;
  double bins_lo_ = 0, bins_hi_ = 0;
  std::vector<uint64_t> bins_;
};

// Bins of each operator's histogram: enough to show a distribution's shape in a small chart.
constexpr int kReportHistogramBins = 40;

struct GruEvalOptions {
  // Also fill GruEvaluation::ops's histograms (kReportHistogramBins bins): one more float pass.
  bool value_histograms = false;
  // Sequences per forward call: bounds memory. Batch items never interact, in the float GRU
  // or the integer one, so the results do not depend on it.
  int64_t batch = 16;
  // x is [B, T, C] instead of [T, B, C].
  bool batch_first = false;
  // Called after every forward call with the sequences done so far and the total (both
  // passes count: total = 2 B with value_histograms, else B), e.g. for a progress bar.
  std::function<void(int64_t done, int64_t total)> progress;
};

struct GruEvaluation {
  ErrorStats output;                                       // quantized against float, all outputs
  std::vector<ErrorStats> per_step;                        // [T]
  std::vector<ErrorStats> per_op;                          // [kGruOpCount], all cells merged
  std::vector<std::array<OpValueStats, kGruOpCount>> ops;  // [cell][op]; empty() for W, R, bx, br
};

// x: float32 sequences [T, B, C] ([B, T, C] with options.batch_first), C = model.input_size.
// per_step is over the time steps either way. q must be a quantization
// of model (same input and hidden size, layers and directions); throws fixq::Error naming
// the mismatch otherwise.
GruEvaluation evaluate_gru(const GruModel& model, const QuantizedGru& q, const float* x, const Shape& x_shape,
                           const GruEvalOptions& options = {});

// What the page shows: the evaluation and where its inputs came from.
struct GruEvalReport {
  std::string model_path, float_path, input_path;
  int64_t T = 0, B = 0, C = 0;  // evaluation sequences [T, B, C]
  const GruModel* model = nullptr;
  const GruQuantParams* params = nullptr;
  const GruEvaluation* eval = nullptr;  // with value_histograms for the ranges section
};

// Throws fixq::Error unless a report can be written at path (its directory exists and is
// writable, and path is not a directory), so that a long evaluation does not end in a
// failed write.
void check_report_path(const std::string& path);

// Writes the page through a temporary file in the same directory and a rename, so that an
// existing file is replaced whole or not at all.
void write_gru_report(const std::string& path, const GruEvalReport& report);

}  // namespace fixq
