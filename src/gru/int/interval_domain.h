// Private: the unit update (gru/int/unit_update.h) evaluated on intervals, the proof that vector
// lanes of Bits bits hold every intermediate exactly. One domain for both lane widths:
//   Bits = 32: build_fast_plan (gru/int/fast/plan.cpp) chooses each ratio's lane form on its input
//              interval (arith/lane_scale.h) and writes it into the plan;
//   Bits = 16: lanes16_form (gru/int/fast/plan16.cpp) takes the int32 plan's forms (a plan of
//              shifts) and checks that each value, each value plus its rounding constant,
//              and each product operand shifted for vpmulhrsw stays inside int16.
// Every operation the lanes perform is checked to stay in the lane width (ok turns false
// otherwise).
#pragma once

#include <algorithm>
#include <array>
#include <cstdlib>
#include <optional>
#include <type_traits>

#include "gru/int/fast/loop.h"
#include "gru/int/interval.h"
#include "gru/int/unit_update.h"

namespace fixq::gru_detail {

template <int Bits>
struct IntervalDomain {
  static_assert(Bits == 16 || Bits == 32);
  using V = Interval;
  const CellRefs& c;
  std::conditional_t<Bits == 32, FastPlan&, const FastPlan&> f;
  Lanes16Form* form = nullptr;  // Bits 16: receives the products' pre-shifts
  std::array<Interval, 4> bias_bound{};
  bool ok = true;

  V check(V v) {
    ok = ok && (Bits == 32 ? v.in_int32() : v.in_int16());
    return v;
  }
  V fail() {
    ok = false;
    return {0, 0};
  }
  V sub(V a, V b) { return check({a.lo - b.hi, a.hi - b.lo}); }
  V add(V a, V b) { return check({a.lo + b.lo, a.hi + b.hi}); }
  V less_zp(Operand o, V v) { return check({v.lo - c.op(o).zp, v.hi - c.op(o).zp}); }
  V plus_zp(Operand o, V v) { return check({v.lo + c.op(o).zp, v.hi + c.op(o).zp}); }
  // No check: a saturated value lies in its operator's range, of at most 16 signed bits,
  // which both lane widths hold.
  V sat(Operand o, V v) {
    const IntRange r = c.op(o).range;
    return {std::clamp<int64_t>(v.lo, r.qmin, r.qmax), std::clamp<int64_t>(v.hi, r.qmin, r.qmax)};
  }
  V bias(UnitBias b) { return bias_bound[static_cast<size_t>(b)]; }
  V one_in_z_out() { return check({c.q_one, c.q_one}); }

  V scale(UnitScale s, V v) {
    const auto i = static_cast<size_t>(s);
    if constexpr (Bits == 32) {
      const std::optional<LaneScale> l = lane_form(c.ratio(s), v.lo, v.hi, f.pow2);
      if (!l) return fail();
      f.lane[i] = *l;
      f.wide[i] = false;
    } else {
      // (v + 2^(r-1)) >> r: the sum must fit too; or v << left.
      if (f.lane[i].left == 0) {
        const int r = f.lane[i].right;
        if (r > 15) return fail();
        const int64_t half = r > 0 ? int64_t{1} << (r - 1) : 0;
        check({v.lo + half, v.hi + half});
      }
    }
    return check(applied(c.ratio(s), v));
  }

  V product(UnitScale s, V a, V b) {
    const Interval p = gru_detail::product(a, b);
    const auto i = static_cast<size_t>(s);
    if constexpr (Bits == 32) {
      if (p.in_int32()) return scale(s, p);
      const std::optional<LaneScale> l = wide_product_form(c.ratio(s), p.lo, p.hi, f.pow2);
      if (!l) return fail();
      f.lane[i] = *l;
      f.wide[i] = true;
    } else {
      // vpmulhrsw(a << pre_a, b << pre_b): a takes the largest shift it can, b the rest.
      const int r = f.lane[i].right;
      if (r > 15 || f.lane[i].left > 0) return fail();
      auto shifted = [](V x, int n) { return Interval{x.lo * (int64_t{1} << n), x.hi * (int64_t{1} << n)}; };
      int pre_a = 15 - r;
      while (pre_a > 0 && !shifted(a, pre_a).in_int16()) --pre_a;
      const int pre_b = 15 - r - pre_a;
      check(shifted(a, pre_a));
      check(shifted(b, pre_b));
      form->pre_a[i] = pre_a;
      form->pre_b[i] = pre_b;
    }
    return check(applied(c.ratio(s), p));
  }

  V lut(UnitLut l, V) {
    const ActivationLut& t = c.table(l);
    if constexpr (Bits == 32) {
      // Interpolated tables: lanes take hi - lo in int32 and the rest in 64 bits.
      if (!t.direct()) {
        const auto e = t.table();
        for (size_t k = 0; k + 1 < e.size(); ++k)
          if (std::abs(int64_t{e[k + 1]} - e[k]) > kI32Max) return fail();
        if (t.frac_bits() + t.shift() > 40) return fail();
      }
    } else {
      // Direct tables whose entries are bytes: the lanes read them with vpermi2b.
      if (!t.direct() || t.table().size() > 256) return fail();
      for (const int32_t e : t.table())
        if (e < -128 || e > 127) return fail();
    }
    return {t.output_range().qmin, t.output_range().qmax};
  }
};

}  // namespace fixq::gru_detail
