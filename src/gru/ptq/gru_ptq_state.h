// Private: the state of a GruPtq (fixq/gru_ptq.h) and the pieces its steps share.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "fixq/gru_ptq.h"

namespace fixq {

namespace ptq_detail {

// The four range methods, in the order candidates are tried.
constexpr std::array<CalibMethod, 4> kMethods{CalibMethod::MinMax, CalibMethod::Ema, CalibMethod::Percentile,
                                              CalibMethod::Mse};

// W, R, bx, br: the operators whose values are parameters, not activations.
bool is_parameter(GruOp op);

// A range params_from_ranges accepts: a constant v becomes [min(v, 0), max(v, 0)] (zero is
// always representable, so nothing is lost), and an all-zero slot [-1, 1] (any scale
// represents it exactly; this one keeps the ratios to other scales sane).
Range usable(Range r);

// One calibration batch kept for the output-error searches, time-major.
struct KeptBatch {
  std::vector<float> x;  // [T, B, C]
  Shape shape;
  std::vector<int64_t> lengths;  // empty: all T
  std::vector<float> h0;         // empty: zeros
};

// Second moments of one cell's GEMM inputs: sum over observations of v v^T (upper
// triangle while accumulating) and of v.
struct Moments {
  int64_t n = 0;
  std::vector<double> sum_outer;  // [d, d]
  std::vector<double> sum;        // [d]
  void add(const float* rows, int64_t count, int64_t d);
  std::vector<double> second_moment() const;  // E[v v^T], symmetric
  std::vector<double> mean() const;
};

// A candidate's parameters for every activation operator, and how each was chosen.
struct OpChoice {
  CalibMethod method = CalibMethod::MinMax;
  double factor = 1.0;  // the method's range widened (> 1) or narrowed (< 1)
  std::string describe() const;
};

// Evaluates parameters on the kept calibration batches against the float outputs.
class OutputError {
 public:
  OutputError(const GruModel& reference, const std::vector<KeptBatch>& kept);
  // Squared output error per element of QuantizedGru(model, params); +infinity when the
  // parameters cannot be built (a ratio out of range). Fills the cosine when asked.
  double operator()(const GruModel& model, const GruQuantParams& params, double* cosine = nullptr) const;

 private:
  const std::vector<KeptBatch>* kept_;
  std::vector<std::vector<float>> reference_;  // float outputs per kept batch
};

// The real range [S (qmin - Z), S (qmax - Z)] that per-tensor parameters represent.
Range represented_range(const QuantParams& p);
// The factors the range searches scale a current range by (search.cpp says why these);
// the whole-model search (src/model/quant_search.cpp) uses the same.
std::vector<double> range_factors(ScaleKind kind);

// Step 3: coordinate descent over the activation operators' ranges (fixq/gru_ptq.h).
// `start` holds every method's parameters per cell (as from_method); returns the chosen
// parameters and fills `choices` per cell and operator.
GruQuantParams search_ranges(const GruModel& model, const GruQuantConfig& config,
                             const std::array<GruQuantParams, kMethods.size()>& by_method, const OutputError& error,
                             int sweeps, std::vector<std::array<OpChoice, kGruOpCount>>& choices);

}  // namespace ptq_detail

struct GruPtq::Impl {
  const GruModel* model = nullptr;
  GruPtqOptions options;
  int64_t batches = 0;
  // [cell][op][method]: activation operators only (X of a reverse cell stays empty: it
  // uses the forward cell's, as GruCalibrator).
  std::vector<std::vector<std::vector<Observer>>> observers;
  std::vector<ptq_detail::Moments> x_moments, h_moments;  // per cell (x: forward cells only)
  std::vector<ptq_detail::KeptBatch> kept;
  int64_t kept_steps = 0;
  // Ranges already derived, by (cell, operator, method, bits, kind of scale): the mse
  // method's search costs milliseconds per operator, and auto_bits asks many times.
  mutable std::map<std::tuple<size_t, int, int, int, int>, std::vector<Range>> range_cache;
  mutable std::mutex cache_mutex;

  // One activation operator's parameters in cell c from one method's statistics.
  QuantParams op_params(size_t c, GruOp op, const GruQuantConfig& config, CalibMethod method) const;
  // Parameters of every activation operator from one method, weights from `model`.
  GruQuantParams from_method(const GruModel& model, const GruQuantConfig& config, CalibMethod method) const;
  // Steps 1 and 2: the model with rounded weights and corrected biases.
  GruModel round_and_correct(const GruQuantConfig& config) const;
};

}  // namespace fixq
