// fixq/calib.h — calibration observers: streamed statistics of float tensors that become
// the ranges from which quantization parameters are derived.
//
// Usage: construct an Observer from an ObserverConfig, call observe() once per batch of
// calibration data (the data set is never held in memory), then
//   params_from_ranges(target, shape, observer.ranges(target))
// gives the calibrated parameters. Four methods:
//   MinMax      running minimum and maximum;
//   Ema         per batch min / max smoothed over batches: m = d * m_old + (1 - d) * m_batch
//               ("0.9 x old + 0.1 x new" for d = 0.9, docs/spec.md 3.4); the first batch seeds m;
//   Percentile  the [100 - p, p] percentiles of a streamed histogram (|x| percentile for
//               symmetric targets);
//   Mse         the clipping range that minimises the expected squared quantization error
//               of the streamed histogram under the target scheme (bits, symmetry, kind of
//               scale), as params_from_ranges will realise it. ranges() scores a few
//               thousand candidates per channel, each in O(non-empty bins): about 2-25 ms
//               per channel with 2048 filled bins.
// Granularity: one range for the whole tensor, or one per index along `axis` (any axis).
// Every error (bad configuration, NaN / Inf data, shape changes, ranges() before any
// data) throws fixq::Error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fixq/quant.h"
#include "fixq/tensor.h"

namespace fixq {

enum class CalibMethod { MinMax, Ema, Percentile, Mse };
inline constexpr CalibMethod kCalibMethods[] = {CalibMethod::MinMax, CalibMethod::Ema, CalibMethod::Percentile,
                                                CalibMethod::Mse};

// "minmax", "ema", "percentile", "mse".
std::string to_string(CalibMethod method);
// The inverse of to_string; throws fixq::Error naming the accepted spellings otherwise.
CalibMethod parse_calib_method(std::string_view name);

struct ObserverConfig {
  CalibMethod method = CalibMethod::MinMax;
  bool per_channel = false;   // one range per index along axis, else one range in all
  int axis = 0;               // per_channel only; negative counts from the end
  double ema_decay = 0.9;     // Ema: weight of the old value, in (0, 1)
  double percentile = 99.99;  // Percentile: p in (50, 100]; 100 is exactly MinMax
  int bins = 2048;            // Percentile, Mse: histogram bins per channel, [64, 2^20]

  // Throws fixq::Error naming the first field outside its domain. Every field is checked,
  // whatever the method, so that a typo in an unused field still surfaces.
  void validate() const;
};

// Streamed calibration statistics, one set per channel. A value type: copies are
// independent observers; a moved-from observer is as if reset().
//
// Histograms (Percentile, Mse) have `bins` equal bins per channel whose span grows as
// data arrives: when a batch falls outside, the grid is re-laid with the bin width times
// 2^k (the least k >= 0 that fits; k = 0 is a pure shift), each aligned group of 2^k old
// bins becoming one new bin, placed to centre the data. Counts are therefore never split
// or redistributed (no approximation beyond the resolution itself), and the observed data
// always spans more than half of the bins minus one. Within a bin, values are modelled as
// spread uniformly; this is the only approximation of the Percentile and Mse methods,
// so their results are accurate to about one bin width.
class Observer {
 public:
  // Throws fixq::Error for an invalid config.
  explicit Observer(const ObserverConfig& config);
  ~Observer();
  Observer(const Observer& other);
  Observer& operator=(const Observer& other);
  Observer(Observer&& other) noexcept;
  Observer& operator=(Observer&& other) noexcept;

  // Accumulates one batch: x holds numel(shape) floats, row-major. Throws fixq::Error,
  // leaving the observer unchanged, for: an empty tensor; a NaN or +-Inf element (the
  // message names its flat index); per-channel, an axis out of range, or a rank or
  // channel count different from the earlier batches'. Each call is one EMA time step.
  void observe(const float* x, const Shape& shape);

  // One range per channel (per_channel: per index along axis, in order; else a single
  // range), such that params_from_ranges(target, tensor_shape, ranges(target)) gives the
  // calibrated parameters. The target's granularity must match the observer's: PerTensor
  // for a per-tensor observer, PerChannel along the same axis for a per-channel one.
  // MinMax, Ema and Percentile ranges lie within the observed [min, max]; Mse ranges
  // contain 0 (params_from_ranges widens every range to 0 anyway) and, for power-of-two
  // targets, are exactly the representable range of the chosen (exponent, zero point),
  // so params_from_ranges reproduces that choice. A channel whose values were all equal
  // gets the zero-width range [v, v] unchanged (params_from_ranges rejects it, naming
  // the slot). Throws fixq::Error "no data observed" before the first observe().
  std::vector<Range> ranges(const QuantScheme& target) const;

  // Forgets every observation; the config is kept.
  void reset();

  // The number of ranges ranges() returns: 1 for a per-tensor observer; for a per-channel
  // one, the extent along axis of the observed batches (0 before the first batch).
  size_t channels() const;
  // The number of successful observe() calls since construction or reset().
  int64_t batches() const;
  const ObserverConfig& config() const { return config_; }

 private:
  struct State;
  ObserverConfig config_;
  std::unique_ptr<State> state_;
};

// The parameters of one tensor x (numel(shape) floats) under `scheme`, its ranges taken by
// `method` from x alone (one observation): by an Observer for per-tensor and per-channel
// schemes, whose slots observers model; per-group and per-token schemes take their ranges
// from a min/max pass (params_from_tensor) and accept only CalibMethod::MinMax, else a
// fixq::Error says so. What `fixq quant-error --calib` computes for each bit width.
QuantParams params_from_tensor(const float* x, const Shape& shape, const QuantScheme& scheme, CalibMethod method);

}  // namespace fixq
