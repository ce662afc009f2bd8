// Step 3 of GruPtq: every activation operator's range chosen by the error of the GRU's
// output on the kept calibration batches (coordinate descent, fixq/gru_ptq.h).
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "fixq/error.h"
#include "gru/ptq/gru_ptq_state.h"
#include "metrics/error_sums.h"

namespace fixq::ptq_detail {

std::string OpChoice::describe() const {
  std::string s = to_string(method);
  if (factor != 1.0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " x%g", factor);
    s += buf;
  }
  return s;
}

namespace {

GruRunOptions run_options(const KeptBatch& k) {
  GruRunOptions o;
  o.lengths = k.lengths;
  o.h0 = k.h0.empty() ? nullptr : k.h0.data();
  return o;
}

}  // namespace

OutputError::OutputError(const GruModel& reference, const std::vector<KeptBatch>& kept) : kept_(&kept) {
  for (const KeptBatch& k : kept) reference_.push_back(gru_forward(reference, k.x.data(), k.shape, run_options(k)).y);
}

double OutputError::operator()(const GruModel& model, const GruQuantParams& params, double* cosine) const {
  std::optional<QuantizedGru> q;
  try {
    q.emplace(model, params);
  } catch (const Error&) {
    return std::numeric_limits<double>::infinity();  // e.g. a ratio of scales beyond 2^20
  }
  metrics_detail::ErrorSums e;
  for (size_t i = 0; i < kept_->size(); ++i) {
    const KeptBatch& k = (*kept_)[i];
    const GruOutput out = q->forward(k.x.data(), k.shape, run_options(k));
    e.add(reference_[i].data(), out.y.data(), out.y.size());
  }
  if (cosine != nullptr) *cosine = e.finite() ? e.cosine() : -1.0;
  return e.finite() ? e.mse() : std::numeric_limits<double>::infinity();
}

// The real range [S (qmin - Z), S (qmax - Z)] that parameters represent, in double.
Range represented_range(const QuantParams& p) {
  const double s = p.scale[0];
  const int32_t z = p.zero_point[0];
  return {static_cast<float>(s * (p.scheme.format.qmin() - z)), static_cast<float>(s * (p.scheme.format.qmax() - z))};
}

// Scaled versions of the current range: one exponent either way for powers of two (the
// only other scales they have); for multipliers, steps from 5% to 40% either way. The
// fine steps (x0.95, x1.05) were added for issue 34: on both embedded models (char-LM and
// speech enhancement) they lower the output error on the calibration data and on the
// held-out data alike (tools/ptq_ablation.py; docs/speech_model.md has the figures).
std::vector<double> range_factors(ScaleKind kind) {
  if (kind == ScaleKind::PowerOfTwo) return {0.5, 2.0};
  return {0.7, 0.8, 0.9, 0.95, 1.05, 1.125, 1.25, 1.4};
}

namespace {

bool same(const QuantParams& a, const QuantParams& b) { return a.scale == b.scale && a.zero_point == b.zero_point; }

// The operators in the order one step computes them.
constexpr GruOp kOrder[] = {GruOp::X,       GruOp::H,       GruOp::Wx,      GruOp::Rh,   GruOp::ZPre,
                            GruOp::RPre,    GruOp::GPre,    GruOp::ZOut,    GruOp::ROut, GruOp::GOut,
                            GruOp::RhAddBr, GruOp::RRh,     GruOp::OldContrib, GruOp::NewContrib};

}  // namespace

GruQuantParams search_ranges(const GruModel& model, const GruQuantConfig& config,
                             const std::array<GruQuantParams, kMethods.size()>& by_method, const OutputError& error,
                             int sweeps, std::vector<std::array<OpChoice, kGruOpCount>>& choices) {
  const size_t cells = model.cells.size();
  const size_t dirs = static_cast<size_t>(model.directions());
  // Start: the best single method for all operators.
  size_t best = 0;
  double best_err = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < kMethods.size(); ++i) {
    const double e = error(model, by_method[i]);
    if (e < best_err) best_err = e, best = i;
  }
  GruQuantParams cur = by_method[best];
  double cur_err = best_err;
  choices.assign(cells, {});
  for (auto& cell : choices)
    for (OpChoice& ch : cell) ch.method = kMethods[best];

  // Sets operator op of cell c (and, for x, of every direction of c's layer).
  auto assign = [&](GruQuantParams& p, size_t c, GruOp op, const QuantParams& v) {
    if (op == GruOp::X)
      for (size_t d = 0; d < dirs; ++d) p.cells[c - c % dirs + d][op] = v;
    else
      p.cells[c][op] = v;
  };
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    bool changed = false;
    for (size_t c = 0; c < cells; ++c)
      for (GruOp op : kOrder) {
        if (op == GruOp::X && c % dirs != 0) continue;
        if (!gru_op_used(op, model.cell_kind)) continue;  // a placeholder nothing reads
        // A 16-bit operator's error is far below the 8-bit ones': its method's range stays.
        if (config.bits_of(op) > 8) continue;
        const QuantScheme scheme = gru_op_scheme(op, config);
        struct Candidate {
          QuantParams params;
          OpChoice choice;
        };
        std::vector<Candidate> cands;
        // The other methods' ranges in the first sweep; then only steps from the current one.
        if (sweep == 0)
          for (size_t i = 0; i < kMethods.size(); ++i) cands.push_back({by_method[i].cells[c][op], {kMethods[i], 1.0}});
        const OpChoice now = choices[c][static_cast<size_t>(op)];
        const Range r = represented_range(cur.cells[c][op]);
        for (double f : range_factors(config.scale_kind)) {
          const Range scaled{static_cast<float>(r.min * f), static_cast<float>(r.max * f)};
          if (!(scaled.min < scaled.max) || !std::isfinite(scaled.min) || !std::isfinite(scaled.max)) continue;
          try {
            cands.push_back({params_from_ranges(scheme, Shape{1}, std::span<const Range>(&scaled, 1)),
                             {now.method, now.factor * f}});
          } catch (const Error&) {
            // a range beyond what the format can represent: not a candidate
          }
        }
        for (const Candidate& cand : cands) {
          if (same(cand.params, cur.cells[c][op])) continue;
          GruQuantParams trial = cur;
          assign(trial, c, op, cand.params);
          const double e = error(model, trial);
          if (e < cur_err) {
            cur = std::move(trial);
            cur_err = e;
            changed = true;
            for (size_t d = 0; d < (op == GruOp::X ? dirs : 1); ++d)
              choices[op == GruOp::X ? c + d : c][static_cast<size_t>(op)] = cand.choice;
          }
        }
      }
    if (!changed) break;
  }
  return cur;
}

}  // namespace fixq::ptq_detail
