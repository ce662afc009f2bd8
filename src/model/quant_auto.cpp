// The "auto" preset: per operator 8 or 16 bits, the cheapest assignment found that meets
// the target output cosine on the calibration data (docs/spec.md 10.2).
#include <algorithm>
#include <limits>

#include "fixq/error.h"
#include "model/quant_state.h"

namespace fixq::model_detail {

namespace {

struct Scored {
  Builder::Score score;
  int64_t work = 0;
  bool ok = false;
};

Scored evaluate(const Builder& b, const Plan& p) {
  Scored s;
  std::unique_ptr<QuantizedModel::Impl> m;
  try {
    m = b.build(p);
  } catch (const Error&) {
    return s;  // parameters the integer operators cannot take
  }
  s.score = b.score(*m);
  s.work = model_work(*m);
  s.ok = true;
  return s;
}

}  // namespace

Plan auto_bits(const Builder& b, const Plan& start, Builder::Score* score) {
  const Calibration& cal = b.calibration();
  const Model& model = *cal.model;
  const double target = cal.config.target_cosine;
  std::vector<int> units;  // the values whose bits are chosen
  for (size_t v = 0; v < model.values.size(); ++v)
    if (chosen_bits(model, static_cast<int>(v))) units.push_back(static_cast<int>(v));
  Plan cur = start;
  Builder::Score cur_s = b.score(cur);
  std::vector<int> promoted;
  // Greedy promotion ranked by cheap evaluations (every other range kept, the promoted
  // value's real range kept at 16 bits, a GRU's int16 PTQ): the most cosine gained per
  // unit of work added; where nothing gains, the best cosine. Once the cheap cosine meets
  // the target, the ranges are searched again at the new bits and the target checked.
  while (cur_s.cosine < target) {
    Plan state = cur;
    Scored state_s = evaluate(b, state);
    bool progressed = false;
    while (state_s.ok && state_s.score.cosine < target) {
      int best = -1;
      double best_rank = -std::numeric_limits<double>::infinity(), best_cos = best_rank;
      bool best_gains = false;
      Scored best_s;
      for (int u : units) {
        if (state.bits[static_cast<size_t>(u)] > 8) continue;
        Plan trial = state;
        trial.bits[static_cast<size_t>(u)] = 16;
        const Scored s = evaluate(b, trial);
        if (!s.ok) continue;
        const double gain = s.score.cosine - state_s.score.cosine;
        const double rank = gain / static_cast<double>(std::max<int64_t>(1, s.work - state_s.work));
        const bool gains = gain > 0.0;
        if ((gains && (!best_gains || rank > best_rank)) || (!gains && !best_gains && s.score.cosine > best_cos)) {
          best = u, best_rank = rank, best_cos = s.score.cosine, best_gains = gains, best_s = s;
        }
      }
      if (best < 0) break;  // every operator at 16 bits
      state.bits[static_cast<size_t>(best)] = 16;
      promoted.push_back(best);
      state_s = best_s;
      progressed = true;
    }
    if (!progressed) break;
    cur = search_ranges(b, state, cal.config.search_sweeps, &cur_s);
  }
  // Drop the promotions the target does not need, the latest first (each checked with its
  // ranges searched again).
  if (cur_s.cosine >= target)
    for (size_t k = promoted.size(); k-- > 0;) {
      Plan trial = cur;
      trial.bits[static_cast<size_t>(promoted[k])] = 8;
      Builder::Score s;
      Plan searched = search_ranges(b, trial, cal.config.search_sweeps, &s);
      if (s.cosine >= target) cur = std::move(searched), cur_s = s;
    }
  if (score) *score = cur_s;
  return cur;
}

}  // namespace fixq::model_detail
