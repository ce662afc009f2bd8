// Ranges by output error for the values around the GRUs (docs/spec.md 10.2): the best of
// the observers' ranges for all values, then coordinate descent over each free value,
// keeping every change that lowers the error of the model's outputs on the kept batches.
#include <cmath>
#include <cstdio>

#include "fixq/error.h"
#include "model/quant_state.h"

namespace fixq::model_detail {

namespace {

bool same(const ModelValueQuant& a, const ModelValueQuant& b) {
  return a.bits == b.bits && a.scale == b.scale && a.zero_point == b.zero_point;
}

Range represented(const ModelValueQuant& q, ScaleKind kind) {
  QuantParams p;
  p.scheme = QuantScheme::make(q.bits, true, Symmetry::Asymmetric, kind, Granularity::PerTensor);
  p.scale = q.scale;
  p.zero_point = q.zero_point;
  return ptq_detail::represented_range(p);
}

// Free values in the order the graph computes them.
std::vector<int> free_values(const Model& model) {
  std::vector<int> out;
  for (int v : model.inputs)
    if (free_range(model, v)) out.push_back(v);
  for (const ModelNode& n : model.nodes)
    if (free_range(model, n.outputs[0])) out.push_back(n.outputs[0]);
  return out;
}

std::string scaled(const std::string& base, double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, " x%g", f);
  return base + buf;
}

}  // namespace

Plan search_ranges(const Builder& b, const Plan& bits, int sweeps, Builder::Score* score) {
  const Calibration& cal = b.calibration();
  const Model& model = *cal.model;
  const ScaleKind kind = cal.config.scales;
  Plan best = observer_plan(cal, bits, 0);
  Builder::Score best_s = b.score(best);
  if (!cal.config.range_search) {
    if (score) *score = best_s;
    return best;
  }
  // Start: one method for every value, the one of least error (the observer's unless
  // another is strictly better).
  for (size_t k = 1; k < kObservers; ++k) {
    Plan p = observer_plan(cal, bits, k);
    const Builder::Score s = b.score(p);
    if (s.error < best_s.error) best = std::move(p), best_s = s;
  }
  std::vector<std::string> base(best.choice);  // the method each factor applies to
  std::vector<double> factor(model.values.size(), 1.0);
  const std::vector<int> order = free_values(model);
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    bool changed = false;
    for (int v : order) {
      const auto vi = static_cast<size_t>(v);
      struct Candidate {
        Range range;
        std::string base;
        double factor;
      };
      std::vector<Candidate> cands;
      if (sweep == 0) {
        for (size_t k = 0; k < kObservers; ++k)
          cands.push_back({observer_range(cal, v, best.bits[vi], k), observer_name(cal.config, k), 1.0});
        // The x parameters of a GRU reading the value: its integers then go in as they are.
        for (size_t n = 0; n < model.nodes.size(); ++n) {
          const ModelNode& node = model.nodes[n];
          if (node.op != ModelOp::Gru || node.inputs[0] != v) continue;
          const QuantParams& x = b.gru_result(n, best.bits[static_cast<size_t>(node.outputs[0])])->params.cells[0][GruOp::X];
          if (x.scheme.format.bits == best.bits[vi]) cands.push_back({ptq_detail::represented_range(x), "the GRU's x", 1.0});
        }
      }
      const ModelValueQuant now = b.free_params(best, v);
      const Range r = represented(now, kind);
      for (double f : ptq_detail::range_factors(kind))
        cands.push_back({{static_cast<float>(r.min * f), static_cast<float>(r.max * f)}, base[vi], factor[vi] * f});
      for (const Candidate& c : cands) {
        if (!std::isfinite(c.range.min) || !std::isfinite(c.range.max)) continue;
        Plan trial = best;
        trial.range[vi] = c.range;
        try {
          if (same(b.free_params(trial, v), b.free_params(best, v))) continue;
        } catch (const Error&) {
          continue;  // a range the format cannot represent
        }
        const Builder::Score s = b.score(trial);
        if (s.error < best_s.error) {
          trial.choice[vi] = c.factor == 1.0 ? c.base : scaled(c.base, c.factor);
          best = std::move(trial);
          best_s = s;
          base[vi] = c.base;
          factor[vi] = c.factor;
          changed = true;
        }
      }
    }
    if (!changed) break;
  }
  if (score) *score = best_s;
  return best;
}

}  // namespace fixq::model_detail
