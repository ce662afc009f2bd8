// Private: the pieces of whole-model quantization (QuantizedModel::quantize, docs/spec.md
// 10.2): what calibration keeps, the weights of Linear and Conv1d rounded once, and the
// plan (every value's bits and range) that build() turns into an integer model; the range
// search and auto-bits work on plans.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "fixq/calib.h"
#include "fixq/gru_ptq.h"
#include "fixq/model.h"
#include "gru/ptq/gru_ptq_state.h"
#include "model/quantized.h"

namespace fixq::model_detail {

// The range methods a value's candidates come from: index 0 is the config's observer, then
// MinMax, Ema, Percentile, Mse (ptq_detail::kMethods) with the config's parameters.
inline constexpr size_t kObservers = 1 + ptq_detail::kMethods.size();
std::string observer_name(const ModelQuantConfig& config, size_t k);

// Input statistics of a Linear / Conv1d: per group, the moments of the rows its weights
// multiply (Linear: the input frame; Conv1d: the frame's causal window of the group's
// channels, [i * kernel + j] as the weight rows, zeros before the first frame).
struct DenseStats {
  std::vector<ptq_detail::Moments> groups;
};
// Adds x [B, T, Cin] of the node's input to its statistics.
void observe_dense(const ModelNode& node, const float* x, int64_t B, int64_t T, DenseStats& stats);

// Weights of one Linear / Conv1d rounded once (they do not depend on any activation's
// parameters): int8 per output row, and the bias to quantize (corrected, in double; empty
// when the node has none and none was added).
struct DenseWeights {
  std::vector<int32_t> q_w;
  std::vector<float> w_scale;
  std::vector<double> bias;
};
DenseWeights round_dense(const ModelNode& node, const DenseStats& stats, const ModelQuantConfig& config);
// The int32 bias at the input scale s_x: round_half_even(b[o] / (s_x S_w[o])), saturated.
std::vector<int32_t> dense_bias(const DenseWeights& w, float s_x);

// What calibration keeps for the searches.
struct Calibration {
  const Model* model = nullptr;
  ModelQuantConfig config;
  std::vector<std::vector<Observer>> observers;  // per Sequence value, kObservers each (else empty)
  std::vector<DenseStats> dense;                 // per node (Linear, Conv1d)
  std::vector<std::unique_ptr<GruPtq>> gru;      // per node (Gru)
  std::vector<std::vector<ModelArray>> kept;     // batches the output error is measured on
  std::vector<std::vector<ModelArray>> reference;  // their float outputs
  // Observer ranges already derived, by (value, bits, observer): Mse's costs milliseconds.
  mutable std::map<std::tuple<int, int, size_t>, Range> range_cache;
};
// Observer k's range of value v for `bits`-bit parameters.
Range observer_range(const Calibration& cal, int v, int bits, size_t k);
Calibration calibrate(const Model& model, const std::vector<std::vector<ModelArray>>& batches,
                      const ModelQuantConfig& config);

// A value whose range the search may choose: a graph input Sequence or the output of
// Linear, Conv1d, Add, Mul or Concat.
bool free_range(const Model& model, int v);
// A value whose bits auto chooses (its producer's "operator bits"): a free one, a Tanh,
// Sigmoid or GRU output. Relu and Slice outputs take their input's, Softmax's the model's.
bool chosen_bits(const Model& model, int v);

// Every value's bits and (free values) range; how each range was chosen.
struct Plan {
  std::vector<int> bits;      // per value (chosen_bits ones; the others are derived)
  std::vector<Range> range;   // per value (free_range ones)
  std::vector<std::string> choice;
};

// The integer model of a plan, and its outputs' error on the kept batches.
class Builder {
 public:
  Builder(const Calibration& cal);
  std::unique_ptr<QuantizedModel::Impl> build(const Plan& plan) const;
  // The plan's parameters of value v (free values) at its bits.
  ModelValueQuant free_params(const Plan& plan, int v) const;
  struct Score {
    double error = 0.0;   // sum over outputs of squared error / squared reference
    double cosine = 0.0;  // the least output cosine
  };
  // +infinity error (and cosine -1) for a plan whose integer model cannot be built.
  Score score(const Plan& plan) const;
  Score score(const QuantizedModel::Impl& m) const;
  const Calibration& calibration() const { return *cal_; }
  // The PTQ of GRU node `node` at base config int8 / int16 (computed once).
  std::shared_ptr<const GruPtqResult> gru_result(size_t node, int bits) const;

 private:
  const Calibration* cal_;
  std::vector<DenseWeights> dense_;  // per node
  mutable std::map<std::pair<size_t, int>, std::shared_ptr<const GruPtqResult>> gru_;  // (node, bits)
};

// Per frame and batch item: the GEMMs' multiply-accumulates (twice at 16 bits), every
// other operator's output values (twice at 16 bits), every GRU's gru_bits_cost work.
int64_t model_work(const QuantizedModel::Impl& m);

// auto (docs/spec.md 10.2): from `start` (every chosen value at 8 bits, ranges searched),
// greedy promotions to 16 bits until the target cosine is met, then every promotion it
// does not need dropped. Returns the plan and its score.
Plan auto_bits(const Builder& b, const Plan& start, Builder::Score* score);

// The plan `bits` with every free range observer k's at its bits.
Plan observer_plan(const Calibration& cal, const Plan& bits, size_t k);
// A value's parameters from a range (widened to contain 0; width 0 becomes [-1, 1]).
ModelValueQuant value_params(const std::string& name, Range r, int bits, ScaleKind kind);
// The width of the GEMMs of an auto model: 16 when an input or output of a Linear or
// Conv1d is 16-bit (their kernels read and write one integer type), else 8.
int model_gemm_bits(const Model& model, const std::vector<int>& value_bits);
// Range search (docs/spec.md 10.2): from the best of the observers' plans at the plan's
// bits, coordinate descent over the free values; returns the plan and its score.
Plan search_ranges(const Builder& b, const Plan& start_bits, int sweeps, Builder::Score* score);

// The whole quantization under config (preset int8, int16 or auto).
std::unique_ptr<QuantizedModel::Impl> quantize_model(const Model& model,
                                                     const std::vector<std::vector<ModelArray>>& batches,
                                                     const ModelQuantConfig& config);

}  // namespace fixq::model_detail
