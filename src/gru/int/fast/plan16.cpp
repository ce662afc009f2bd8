// lanes16_form: the unit update evaluated on intervals a second time, now against int16
// lanes (Lanes16Form, gru/int/fast/loop.h; the domain is gru/int/interval_domain.h's).
#include <algorithm>

#include "gru/int/fast/loop.h"
#include "gru/int/interval.h"
#include "gru/int/interval_domain.h"
#include "gru/int/unit_update.h"

namespace fixq::gru_detail {

std::optional<Lanes16Form> lanes16_form(const CellPlan& p, const FastPlan& f) {
  if (!f.shifts) return std::nullopt;
  const CellRefs refs(p);
  Lanes16Form form;
  IntervalDomain<16> d{refs, f, &form};
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
  const UnitInputs<IntervalDomain<16>> in{wx, wx, wx, rh, rh, rh, h};
  unit_update(d, in);
  if (!d.ok) return std::nullopt;
  return form;
}

}  // namespace fixq::gru_detail
