// build_fast_plan: the unit update (gru/int/unit_update.h) evaluated on intervals, from the
// operators' integer ranges: the interval of every intermediate, and the lane form of
// every scale (arith/lane_scale.h). A cell gets a plan only if every one fits int32.
#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "gemm/kernels.h"
#include "gru/int/fast/loop.h"
#include "gru/int/interval.h"
#include "gru/int/interval_domain.h"
#include "gru/int/unit_update.h"

namespace fixq::gru_detail {

namespace {

int64_t abs_row_sum(const std::vector<int32_t>& q, int64_t row, int64_t cols) {
  int64_t s = 0;
  for (int64_t k = 0; k < cols; ++k) s += std::abs(int64_t{q[static_cast<size_t>(row * cols + k)]});
  return s;
}

// The smallest v in [lo, hi] with pred(v), for a predicate that is monotone (false, then
// true); hi + 1 when there is none.
template <class P>
int64_t first_true(int64_t lo, int64_t hi, P pred) {
  int64_t a = lo, b = hi + 1;
  while (a < b) {
    const int64_t mid = a + (b - a) / 2;
    if (pred(mid)) b = mid;
    else a = mid + 1;
  }
  return a;
}

// The fused form of rows (gru/int/fast/loop.h) where every row allows it, or nothing. l[n] is row n's
// lane form on its window, rows n = g * H + j of the three gates.
std::optional<FusedRequant> fused_form(const RequantRows& r, const std::vector<LaneScale>& l,
                                       const std::vector<FixedPointScale>& scale, int64_t H, int64_t hp) {
  if (!r.pow2 || r.comp32.empty()) return std::nullopt;  // power-of-two plans, int32 accumulators
  FusedRequant f;
  // Padding lanes: x clamps to 0, y = (0 + zp) >> 0, the zero point as the other forms give.
  for (auto* v : {&f.lo_acc, &f.hi_acc, &f.shift}) v->assign(static_cast<size_t>(3 * hp), 0);
  f.add.assign(static_cast<size_t>(3 * hp), r.zp);
  for (int64_t g = 0; g < 3; ++g)
    for (int64_t j = 0; j < H; ++j) {
      const auto n = static_cast<size_t>(g * H + j), at = static_cast<size_t>(g * hp + j);
      if (l[n].m != 1 || l[n].left != 0 || l[n].right > 30) return std::nullopt;
      const int shift = l[n].right;
      const int64_t lo = int64_t{r.lo[n]} + r.comp32[n], hi = int64_t{r.hi[n]} + r.comp32[n];
      const int64_t add = (shift > 0 ? int64_t{1} << (shift - 1) : 0) - r.comp32[n] + (int64_t{r.zp} << shift);
      if (lo + add < kI32Min || hi + add > kI32Max) return std::nullopt;
      // Both ends inside the output range: the final clamp is the identity on the window.
      for (const int64_t v : {int64_t{r.lo[n]}, int64_t{r.hi[n]}}) {
        const int64_t y = scale[n].apply(v) + r.zp;
        if (y < r.out.qmin || y > r.out.qmax) return std::nullopt;
      }
      f.lo_acc[at] = static_cast<int32_t>(lo);
      f.hi_acc[at] = static_cast<int32_t>(hi);
      f.add[at] = static_cast<int32_t>(add);
      f.shift[at] = shift;
    }
  return f;
}

// Requantization rows of a GEMM with activations a (zero point zp_a, storage a_type) and
// integer weights q [3H, cols] to operator out with per-row scales.
std::optional<RequantRows> requant_rows(const OpQ& a, const std::vector<int32_t>& q, int64_t H, int64_t hp,
                                        int64_t cols, const std::vector<FixedPointScale>& scale, const OpQ& out,
                                        bool pow2, bool acc64) {
  const int64_t rows = 3 * H;
  std::vector<LaneScale> forms;
  RequantRows r;
  r.pow2 = pow2;
  r.zp = out.zp;
  r.out = out.range;
  const int64_t a_max = a.storage == IntType::S16 ? 32768 : 128;
  for (int64_t n = 0; n < rows; ++n) {
    const FixedPointScale& s = scale[static_cast<size_t>(n)];
    int64_t colsum = 0;
    for (int64_t k = 0; k < cols; ++k) colsum += q[static_cast<size_t>(n * cols + k)];
    const int64_t comp = int64_t{a.zp} * colsum;
    const int64_t acc_max = abs_row_sum(q, n, cols) * a_max;  // |acc| <= sum |w| * max |a|
    const Interval v{-acc_max - comp, acc_max - comp};
    if (!acc64 && (acc_max + std::abs(comp) > kI32Max)) return std::nullopt;  // acc - comp in int32
    auto y = [&](int64_t x) { return s.apply(x) + out.zp; };
    // y is monotone: saturated at qmax from hi on, at qmin up to lo.
    const int64_t hi = std::min(first_true(v.lo, v.hi, [&](int64_t x) { return y(x) >= out.range.qmax; }), v.hi);
    const int64_t lo = std::max(first_true(v.lo, v.hi, [&](int64_t x) { return y(x) > out.range.qmin; }) - 1, v.lo);
    const Interval window{std::min(lo, hi), hi};
    const std::optional<LaneScale> l = lane_form(s, window.lo, window.hi, pow2);
    if (!l) return std::nullopt;
    const Interval t = applied(s, window);
    if (!Interval{t.lo + out.zp, t.hi + out.zp}.in_int32() || !t.in_int32()) return std::nullopt;
    r.comp.push_back(comp);
    if (!acc64) r.comp32.push_back(static_cast<int32_t>(comp));  // |comp| <= acc_max + |comp| <= 2^31 - 1
    r.lo.push_back(static_cast<int32_t>(window.lo));
    r.hi.push_back(static_cast<int32_t>(window.hi));
    r.m.push_back(l->m);
    r.left.push_back(l->left);
    r.right.push_back(l->right);
    r.right_m1.push_back(std::max(l->right - 1, 0));
    r.bit.push_back(std::min(l->right, 1));
    forms.push_back(*l);
  }
  r.fused = fused_form(r, forms, scale, H, hp);
  // Padding rows: every value clamps to 0 and maps to the zero point.
  for (int64_t i = 0; i < kLanePadding; ++i) {
    r.comp.push_back(0);
    if (!acc64) r.comp32.push_back(0);
    r.lo.push_back(0);
    r.hi.push_back(0);
    r.m.push_back(pow2 ? 1 : 0);
    r.left.push_back(0);
    r.right.push_back(pow2 ? 0 : 1);
    r.right_m1.push_back(0);
    r.bit.push_back(pow2 ? 0 : 1);
  }
  return r;
}

// The bias of every unit plus the target's zero point, padded to hp with the zero point,
// and its interval; nothing if a value leaves int32.
std::optional<AlignedInts> unit_constants(const std::vector<int32_t>& bias, int32_t zp, int64_t hp, Interval* bound) {
  AlignedInts c(static_cast<size_t>(hp), zp);
  *bound = {zp, zp};
  for (size_t j = 0; j < bias.size(); ++j) {
    const int64_t v = int64_t{bias[j]} + zp;
    if (v < kI32Min || v > kI32Max) return std::nullopt;
    c[j] = static_cast<int32_t>(v);
    bound->lo = std::min(bound->lo, v);
    bound->hi = std::max(bound->hi, v);
  }
  return c;
}

}  // namespace

std::optional<FastPlan> build_fast_plan(const CellPlan& p) {
  FastPlan f;
  const int64_t H = p.hidden_size, C = p.input_size;
  f.hp = (H + kLanePadding - 1) / kLanePadding * kLanePadding;
  f.pow2 = p.wx_to_z.is_pow2() && p.rh_to_z.is_pow2();
  // Every scale must be of the plan's kind (power-of-two plans hold only shifts).
  for (const auto* v : {&p.wx_scale, &p.rh_scale})
    for (const FixedPointScale& s : *v)
      if (s.is_pow2() != f.pow2) return std::nullopt;

  // int32 accumulators where the GEMM can give them (its bound for A's type and these
  // weights) and acc - comp provably fits; else int64 (16-bit operands with long rows).
  auto rows = [&](const OpQ& a, const PackedB& w, const std::vector<int32_t>& q, int64_t cols,
                  const std::vector<FixedPointScale>& scale, const OpQ& out, bool& acc64) {
    acc64 = !gemm_detail::fits_int32(a.storage, w);
    auto r = requant_rows(a, q, H, f.hp, cols, scale, out, f.pow2, acc64);
    if (!r && !acc64) {
      acc64 = true;
      r = requant_rows(a, q, H, f.hp, cols, scale, out, f.pow2, acc64);
    }
    return r;
  };
  auto wx = rows(p.x, p.w, p.q_w, C, p.wx_scale, p.wx, f.acc64_x);
  auto rh = rows(p.h, p.r, p.q_r, H, p.rh_scale, p.rh, f.acc64_h);
  if (!wx || !rh) return std::nullopt;
  f.wx = std::move(*wx);
  f.rh = std::move(*rh);

  const CellRefs refs(p);
  IntervalDomain<32> d{refs, f};
  for (size_t b = 0; b < 4; ++b) {
    auto c = unit_constants(*refs.bias[b], refs.bias_zp[b], f.hp, &d.bias_bound[b]);
    if (!c) return std::nullopt;
    f.bias[b] = std::move(*c);
  }
  const Interval wx_range{p.wx.range.qmin, p.wx.range.qmax}, rh_range{p.rh.range.qmin, p.rh.range.qmax};
  const UnitInputs<IntervalDomain<32>> in{wx_range, wx_range, wx_range, rh_range, rh_range, rh_range,
                                      {p.h.range.qmin, p.h.range.qmax}};
  unit_update(d, in);
  if (!d.ok) return std::nullopt;
  f.shifts = f.pow2;
  for (size_t i = 0; i < f.lane.size(); ++i) {
    const LaneScale& l = f.lane[i];
    f.shifts = f.shifts && !f.wide[i] && (l.add_then_shift || (l.right == 0 && l.left > 0));
  }
  f.lanes16 = lanes16_form(p, f);
  // The inputs each table is read at: its operator's saturated range (unit_update).
  const Operand lut_input[3] = {Operand::ZPre, Operand::RPre, Operand::GPre};
  for (size_t l = 0; l < 3; ++l) {
    const ActivationLut& lut = *refs.lut[l];
    const IntRange in = refs.op(lut_input[l]).range;
    if (in.qmin != lut.input_min()) continue;  // not how build_plan pairs them: keep the knots
    if (auto t = expanded_table(lut, int64_t{in.qmax} - in.qmin + 1)) f.lut16[l] = std::move(*t);
  }
  return f;
}

std::optional<cpu::AlignedVector<int16_t>> expanded_table(const ActivationLut& lut, int64_t inputs) {
  const IntRange out = lut.output_range();
  const int64_t knot_inputs = (static_cast<int64_t>(lut.entries()) - 1) << lut.shift();
  if (lut.direct() || inputs < 1 || inputs > 65536 || inputs > knot_inputs || out.qmin < INT16_MIN ||
      out.qmax > INT16_MAX)
    return std::nullopt;
  cpu::AlignedVector<int16_t> t(static_cast<size_t>(inputs + 1), 0);
  for (int64_t i = 0; i < inputs; ++i)
    t[static_cast<size_t>(i)] = static_cast<int16_t>(lut(lut.input_min() + static_cast<int32_t>(i)));
  return t;
}

}  // namespace fixq::gru_detail
