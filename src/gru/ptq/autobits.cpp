// Mixed precision under a target: GruPtq::auto_bits and the cost of a configuration.
#include <algorithm>
#include <cmath>
#include <limits>

#include "fixq/error.h"
#include "gru/ptq/gru_ptq_state.h"

namespace fixq {

using ptq_detail::is_parameter;

void GruAutoBitsOptions::validate() const {
  require(std::isfinite(target_cosine) && target_cosine > 0.0 && target_cosine <= 1.0,
          "auto bits: the target cosine must be in (0, 1], got ", target_cosine);
  if (max_work_ratio)
    require(std::isfinite(*max_work_ratio) && *max_work_ratio >= 1.0,
            "auto bits: the maximum cost ratio must be >= 1 (1 = the base config's cost), got ", *max_work_ratio);
}

GruBitsCost gru_bits_cost(const GruModel& model, const GruQuantConfig& config) {
  auto bits = [&](GruOp op) { return config.bits_of(op); };
  auto bytes = [&](GruOp op) { return int64_t{bits(op) / 8}; };
  GruBitsCost k;
  for (const GruCell& cell : model.cells) {
    const int64_t C = cell.input_size, H = cell.hidden_size, H3 = 3 * H;
    k.weight_bytes += H3 * C * bytes(GruOp::W) + H3 * H * bytes(GruOp::R) + H3 * (bytes(GruOp::Bx) + bytes(GruOp::Br));
    k.macs += H3 * (C + H);
    if (bits(GruOp::W) > 8 || bits(GruOp::X) > 8) k.wide_macs += H3 * C;
    if (bits(GruOp::R) > 8 || bits(GruOp::H) > 8) k.wide_macs += H3 * H;
    // Values computed per step and item: the layer input (quantized or rescaled), the two
    // GEMM outputs, and every per-unit operator.
    const std::pair<GruOp, int64_t> values[] = {
        {GruOp::X, C},        {GruOp::Wx, H3},      {GruOp::Rh, H3},          {GruOp::ZPre, H},       {GruOp::RPre, H},
        {GruOp::GPre, H},     {GruOp::ZOut, H},     {GruOp::ROut, H},         {GruOp::GOut, H},       {GruOp::RhAddBr, H},
        {GruOp::RRh, H},      {GruOp::OldContrib, H}, {GruOp::NewContrib, H}, {GruOp::H, H}};
    for (const auto& [op, n] : values) {
      k.elementwise += n;
      if (bits(op) > 8) k.wide_elementwise += n;
    }
  }
  return k;
}

namespace {

// A config the integer GRU can build: 16-bit W (R) needs 8-bit x (h).
bool buildable(const GruQuantConfig& c) {
  return !((c.bits_of(GruOp::W) > 8 && c.bits_of(GruOp::X) > 8) || (c.bits_of(GruOp::R) > 8 && c.bits_of(GruOp::H) > 8));
}

double work_ratio(const GruBitsCost& c, const GruBitsCost& base) {
  return static_cast<double>(c.work()) / static_cast<double>(std::max<int64_t>(1, base.work()));
}

}  // namespace

GruAutoBitsResult GruPtq::auto_bits(const GruQuantConfig& base, const GruAutoBitsOptions& options) const {
  const Impl& m = *impl_;
  options.validate();
  base.validate();
  require(buildable(base), "auto bits: the base config is not buildable (16-bit W or R needs 8-bit x or h)");
  const GruModel& model = *m.model;
  const ptq_detail::OutputError error(model, m.kept);
  GruAutoBitsResult out;
  out.base_cost = gru_bits_cost(model, base);
  GruQuantConfig cur = base;
  GruPtqResult res = quantize(cur);
  std::vector<GruOp> promoted;

  // The method each operator's range came from in the current result (its factor is not
  // carried over: a 16-bit operator rarely gains from clipping).
  auto method_of = [&](size_t c, GruOp op) {
    const std::string& s = res.choices[c][static_cast<size_t>(op)];
    return parse_calib_method(s.substr(0, s.find(' ')));
  };
  // Greedy promotion, ranked by a cheap evaluation: every other operator keeps its range
  // from the last full quantize(), the promoted one takes its method's range at 16 bits.
  // Once the cheap cosine meets the target, a full quantize() checks it.
  for (;;) {
    if (res.calib_cosine >= options.target_cosine) break;
    GruModel state_model = res.model;
    GruQuantParams state = res.params;
    double state_cos = res.calib_cosine;
    bool progressed = false;
    while (state_cos < options.target_cosine) {
      GruOp best_op = GruOp::Count;
      double best_cos = -std::numeric_limits<double>::infinity();
      GruModel best_model;
      GruQuantParams best_params;
      for (int i = 0; i < kGruOpCount; ++i) {
        const GruOp op = static_cast<GruOp>(i);
        if (cur.bits_of(op) > 8 || !gru_op_used(op, model.cell_kind)) continue;  // unused: widening changes nothing
        GruQuantConfig trial = cur;
        trial.bits[static_cast<size_t>(i)] = 16;
        if (!buildable(trial)) continue;
        if (options.max_work_ratio && work_ratio(gru_bits_cost(model, trial), out.base_cost) > *options.max_work_ratio)
          continue;
        GruModel rounded = is_parameter(op) ? m.round_and_correct(trial) : state_model;
        GruQuantParams p = state;
        p.config = trial;
        for (size_t c = 0; c < model.cells.size(); ++c) {
          const int64_t h3 = 3 * model.hidden_size;
          if (is_parameter(op)) {
            const GruCell& cell = model.cells[c];
            p.cells[c][GruOp::W] = gru_parameter_params(GruOp::W, trial, cell.W, h3);
            p.cells[c][GruOp::R] = gru_parameter_params(GruOp::R, trial, cell.R, h3);
            p.cells[c][GruOp::Bx] = gru_parameter_params(GruOp::Bx, trial, rounded.cells[c].bx, h3);
            p.cells[c][GruOp::Br] = gru_parameter_params(GruOp::Br, trial, rounded.cells[c].br, h3);
          } else {
            p.cells[c][op] = m.op_params(c, op, trial, method_of(c, op));
          }
        }
        double cos = 0.0;
        if (!std::isfinite(error(rounded, p, &cos))) continue;
        if (cos > best_cos) {
          best_cos = cos;
          best_op = op;
          best_model = std::move(rounded);
          best_params = std::move(p);
        }
      }
      if (best_op == GruOp::Count) break;  // nothing left to promote within the budget
      cur.bits[static_cast<size_t>(best_op)] = 16;
      promoted.push_back(best_op);
      state_model = std::move(best_model);
      state = std::move(best_params);
      state_cos = best_cos;
      progressed = true;
    }
    if (!progressed) break;
    res = quantize(cur);
  }
  out.target_met = res.calib_cosine >= options.target_cosine;
  // Drop the promotions the target does not need, the latest first.
  if (out.target_met)
    for (size_t k = promoted.size(); k-- > 0;) {
      GruQuantConfig trial = cur;
      trial.bits[static_cast<size_t>(promoted[k])] = base.bits_of(promoted[k]);
      GruPtqResult r = quantize(trial);
      if (r.calib_cosine >= options.target_cosine) {
        cur = trial;
        res = std::move(r);
        promoted.erase(promoted.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
  for (GruOp op : promoted) out.promoted.push_back(to_string(op));
  out.cost = gru_bits_cost(model, cur);
  out.result = std::move(res);
  return out;
}

}  // namespace fixq
