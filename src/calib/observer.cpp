// The calibration Observer (fixq/calib.h): validation, per-channel statistics, dispatch.
#include <algorithm>
#include <cmath>
#include <limits>

#include "calib/binned_mass.h"
#include "calib/histogram.h"
#include "calib/mse_search.h"
#include "calib/percentile.h"
#include "fixq/calib.h"
#include "fixq/error.h"

namespace fixq {

// Per-channel statistics; channel c of every vector belongs to index c along the axis.
struct Observer::State {
  int rank = 0;  // of the first batch: per-channel observers require it to stay
  int axis = 0;  // normalized against rank
  size_t channels = 0;
  int64_t batches = 0;
  std::vector<float> min, max;                         // exact running extremes, every method
  std::vector<double> ema_min, ema_max;                // Ema
  std::vector<calib_detail::StreamingHistogram> hist;  // Percentile, Mse
};

namespace {

bool uses_histogram(CalibMethod m) { return m == CalibMethod::Percentile || m == CalibMethod::Mse; }

const char* describe_non_finite(float v) { return std::isnan(v) ? "NaN" : (v > 0 ? "+Inf" : "-Inf"); }

// Visits the tensor channel by channel: f(channel, pointer to a contiguous run, length).
template <class F>
void for_each_run(const float* x, const AxisSplit& s, F&& f) {
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t c = 0; c < s.extent; ++c)
      f(static_cast<size_t>(c), x + (o * s.extent + c) * s.inner, s.inner);
}

}  // namespace

Observer::Observer(const ObserverConfig& config) : config_(config), state_(std::make_unique<State>()) {
  config_.validate();
}

Observer::~Observer() = default;
Observer::Observer(const Observer& other)
    : config_(other.config_), state_(other.state_ ? std::make_unique<State>(*other.state_) : nullptr) {}
Observer& Observer::operator=(const Observer& other) {
  if (this != &other) *this = Observer(other);
  return *this;
}
// A moved-from observer holds no State; every member treats that as "nothing observed".
Observer::Observer(Observer&& other) noexcept = default;
Observer& Observer::operator=(Observer&& other) noexcept = default;

void Observer::reset() { state_ = std::make_unique<State>(); }

size_t Observer::channels() const {
  if (!config_.per_channel) return 1;
  return state_ ? state_->channels : 0;
}

int64_t Observer::batches() const { return state_ ? state_->batches : 0; }

void Observer::observe(const float* x, const Shape& shape) {
  // Everything that can reject the batch runs before any state changes.
  const int64_t n = numel(shape);
  // Messages are built only on failure: observe() runs once per time step in calibration.
  if (n <= 0) fail("observe: empty tensor of shape ", shape_str(shape), ": a calibration batch needs data");
  if (x == nullptr) fail("observe: null data pointer for shape ", shape_str(shape));
  const int rank = static_cast<int>(shape.size());
  AxisSplit split{1, 1, n};
  if (config_.per_channel) {
    split = split_at_axis(shape, config_.axis);
    if (batches() > 0) {
      if (rank != state_->rank)
        fail("observe: tensor of shape ", shape_str(shape), " has rank ", rank, ", earlier batches had rank ",
             state_->rank, ": a per-channel observer needs one rank");
      if (static_cast<size_t>(split.extent) != state_->channels)
        fail("observe: channel count mismatch: shape ", shape_str(shape), " has ", split.extent,
             " channels along axis ", config_.axis, ", earlier batches had ", state_->channels);
    }
  }
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i]))
      fail("observe: element ", i, " (flat index) of the tensor of shape ", shape_str(shape), " is ",
           describe_non_finite(x[i]), ": calibration data must be finite");

  const size_t channels = static_cast<size_t>(split.extent);
  std::vector<float> bmin(channels, std::numeric_limits<float>::infinity());
  std::vector<float> bmax(channels, -std::numeric_limits<float>::infinity());
  for_each_run(x, split, [&](size_t c, const float* p, int64_t len) {
    const auto [lo, hi] = std::minmax_element(p, p + len);
    bmin[c] = std::min(bmin[c], *lo);
    bmax[c] = std::max(bmax[c], *hi);
  });

  if (!state_) state_ = std::make_unique<State>();
  State& s = *state_;
  if (s.batches == 0) {
    s.rank = rank;
    s.axis = config_.per_channel ? normalize_axis(config_.axis, rank) : 0;
    s.channels = channels;
    s.min = bmin;
    s.max = bmax;
    s.ema_min.assign(bmin.begin(), bmin.end());
    s.ema_max.assign(bmax.begin(), bmax.end());
    if (uses_histogram(config_.method))
      s.hist.assign(channels, calib_detail::StreamingHistogram(config_.bins));
  } else {
    const double d = config_.ema_decay;
    for (size_t c = 0; c < channels; ++c) {
      s.min[c] = std::min(s.min[c], bmin[c]);
      s.max[c] = std::max(s.max[c], bmax[c]);
      s.ema_min[c] = d * s.ema_min[c] + (1.0 - d) * bmin[c];
      s.ema_max[c] = d * s.ema_max[c] + (1.0 - d) * bmax[c];
    }
  }
  if (uses_histogram(config_.method)) {
    for (size_t c = 0; c < channels; ++c) s.hist[c].cover(bmin[c], bmax[c]);
    for_each_run(x, split, [&](size_t c, const float* p, int64_t len) {
      for (int64_t i = 0; i < len; ++i) s.hist[c].add(p[i]);
    });
  }
  ++s.batches;
}

std::vector<Range> Observer::ranges(const QuantScheme& target) const {
  require(batches() > 0, "ranges: no data observed; call observe() with at least one batch first");
  const State& s = *state_;
  target.validate();
  if (!config_.per_channel) {
    require(target.granularity == Granularity::PerTensor,
            "ranges: the observer is per-tensor but the target is ", to_string(target.granularity),
            "; configure the observer per_channel to match");
  } else {
    require(target.granularity == Granularity::PerChannel,
            "ranges: the observer is per-channel but the target is ", to_string(target.granularity));
    require(normalize_axis(target.axis, s.rank) == s.axis, "ranges: the observer is per-channel along axis ",
            s.axis, " but the target along axis ", target.axis);
  }
  const bool symmetric = target.symmetry == Symmetry::Symmetric;
  std::vector<Range> out(s.channels);
  for (size_t c = 0; c < s.channels; ++c) {
    const float lo = s.min[c], hi = s.max[c];
    switch (config_.method) {
      case CalibMethod::MinMax:
        out[c] = {lo, hi};
        break;
      case CalibMethod::Ema:
        out[c] = {static_cast<float>(s.ema_min[c]), static_cast<float>(s.ema_max[c])};
        break;
      case CalibMethod::Percentile:
      case CalibMethod::Mse: {
        // A constant channel has nothing to clip.
        if (lo == hi) {
          out[c] = {lo, hi};
          break;
        }
        const calib_detail::BinnedMass mass(s.hist[c], lo, hi);
        out[c] = config_.method == CalibMethod::Percentile
                     ? calib_detail::percentile_range(mass, lo, hi, config_.percentile, symmetric)
                     : calib_detail::mse_range(mass, lo, hi, target);
        break;
      }
    }
  }
  return out;
}

}  // namespace fixq
