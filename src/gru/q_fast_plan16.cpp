// lanes16_form: the unit update (q_unit_update.h) evaluated on intervals a second time,
// now against int16 lanes (Lanes16Form, q_fast.h). The int32 plan already holds every
// ratio's add-then-shift form; here each value, each value plus its rounding constant, and
// each product operand shifted for vpmulhrsw must stay inside int16.
#include <algorithm>

#include "gru/q_fast.h"
#include "gru/q_interval.h"
#include "gru/q_unit_update.h"

namespace fixq::gru_detail {

namespace {

struct Int16Domain {
  using V = Interval;
  const CellRefs& c;
  const FastPlan& f;
  Lanes16Form& form;
  std::array<Interval, 4> bias_bound{};
  bool ok = true;

  V check(V v) {
    ok = ok && v.in_int16();
    return v;
  }
  V sub(V a, V b) { return check({a.lo - b.hi, a.hi - b.lo}); }
  V add(V a, V b) { return check({a.lo + b.lo, a.hi + b.hi}); }
  V less_zp(Operand o, V v) { return check({v.lo - c.op(o).zp, v.hi - c.op(o).zp}); }
  V plus_zp(Operand o, V v) { return check({v.lo + c.op(o).zp, v.hi + c.op(o).zp}); }
  V sat(Operand o, V v) {
    const IntRange r = c.op(o).range;
    return check({std::clamp<int64_t>(v.lo, r.qmin, r.qmax), std::clamp<int64_t>(v.hi, r.qmin, r.qmax)});
  }
  // (v + 2^(r-1)) >> r: the sum must fit too; or v << left.
  V scale(UnitScale s, V v) {
    if (f.lane[static_cast<size_t>(s)].left > 0) return check(applied(c.ratio(s), v));
    const int r = f.lane[static_cast<size_t>(s)].right;
    if (r > 15) return fail();
    const int64_t half = r > 0 ? int64_t{1} << (r - 1) : 0;
    check({v.lo + half, v.hi + half});
    return check(applied(c.ratio(s), v));
  }
  // vpmulhrsw(a << pre_a, b << pre_b): a takes the largest shift it can, b the rest.
  V product(UnitScale s, V a, V b) {
    const auto i = static_cast<size_t>(s);
    const int r = f.lane[i].right;
    if (r > 15 || f.lane[i].left > 0) return fail();
    int pre_a = 15 - r;
    while (pre_a > 0 && !Interval{a.lo * (int64_t{1} << pre_a), a.hi * (int64_t{1} << pre_a)}.in_int16()) --pre_a;
    const int pre_b = 15 - r - pre_a;
    check({a.lo * (int64_t{1} << pre_a), a.hi * (int64_t{1} << pre_a)});
    check({b.lo * (int64_t{1} << pre_b), b.hi * (int64_t{1} << pre_b)});
    form.pre_a[i] = pre_a;
    form.pre_b[i] = pre_b;
    return check(applied(c.ratio(s), gru_detail::product(a, b)));
  }
  V bias(UnitBias b) { return bias_bound[static_cast<size_t>(b)]; }
  // Direct tables whose entries are bytes: the lanes read them with vpermi2b.
  V lut(UnitLut l, V) {
    const ActivationLut& t = c.table(l);
    if (!t.direct() || t.table().size() > 256) return fail();
    for (const int32_t e : t.table())
      if (e < -128 || e > 127) return fail();
    return check({t.output_range().qmin, t.output_range().qmax});
  }
  V one_in_z_out() { return check({c.q_one, c.q_one}); }

  V fail() {
    ok = false;
    return {0, 0};
  }
};

}  // namespace

std::optional<Lanes16Form> lanes16_form(const CellPlan& p, const FastPlan& f) {
  if (!f.shifts) return std::nullopt;
  const CellRefs refs(p);
  Lanes16Form form;
  Int16Domain d{refs, f, form};
  for (size_t b = 0; b < 4; ++b) {
    const AlignedInts& c = f.bias[b];
    auto& out = form.bias[b];
    out.assign(c.size() + 32, 0);  // a 32-lane load from any unit below hp stays inside
    Interval bound{c.front(), c.front()};
    for (size_t j = 0; j < c.size(); ++j) {
      bound = {std::min<int64_t>(bound.lo, c[j]), std::max<int64_t>(bound.hi, c[j])};
      out[j] = static_cast<int16_t>(std::clamp<int32_t>(c[j], INT16_MIN, INT16_MAX));
    }
    d.bias_bound[b] = d.check(bound);
  }
  const Interval wx{p.wx.range.qmin, p.wx.range.qmax}, rh{p.rh.range.qmin, p.rh.range.qmax};
  const Interval h{p.h.range.qmin, p.h.range.qmax};
  d.check(wx);
  d.check(rh);
  d.check(h);
  const UnitInputs<Int16Domain> in{wx, wx, wx, rh, rh, rh, h};
  unit_update(d, in);
  if (!d.ok) return std::nullopt;
  return form;
}

}  // namespace fixq::gru_detail
