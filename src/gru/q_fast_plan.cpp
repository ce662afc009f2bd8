// build_fast_plan: the interval of every intermediate of the unit update, from the
// operators' integer ranges, and the lane form of every scale (see q_fast.h).
#include <algorithm>
#include <cstdlib>

#include "gru/q_fast.h"

namespace fixq::gru_detail {

namespace {

constexpr int64_t kI32Min = INT32_MIN, kI32Max = INT32_MAX;

struct Interval {
  int64_t lo = 0, hi = 0;
  bool in_int32() const { return lo >= kI32Min && hi <= kI32Max; }
  int64_t magnitude() const { return std::max(std::abs(lo), std::abs(hi)); }
};

Interval diff(const OpQ& q) { return {int64_t{q.range.qmin} - q.zp, int64_t{q.range.qmax} - q.zp}; }

Interval product(Interval a, Interval b) {
  const int64_t c[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};  // |each| <= 2^34
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

// The lane form of s, or nothing when lanes cannot evaluate it exactly on inputs in x.
std::optional<LaneScale> lane_scale(const FixedPointScale& s, Interval x, bool pow2) {
  if (!x.in_int32()) return std::nullopt;
  LaneScale l;
  if (pow2) {
    if (s.m != 1) return std::nullopt;
    if (s.shift < 0) {  // a left shift must not leave int32
      if (-s.shift > 30 || x.magnitude() > (kI32Max >> -s.shift)) return std::nullopt;
      l.left = -s.shift;
    } else {
      l.right = std::min(s.shift, 32);  // >= 32: every int32 input rounds to 0, as with 32
    }
    return l;
  }
  if (s.m < 1 || s.shift < 1) return std::nullopt;
  if (s.shift > 62) {  // |x * m| < 2^62 < 2^(shift-1): the term is 0
    l.m = 0;
    l.right = 1;
    return l;
  }
  l.m = s.m;
  l.right = s.shift;
  return l;
}

// A term s(x) for x in the interval: its lane form and output interval (apply is monotone).
struct Term {
  LaneScale lane;
  Interval out;
};

std::optional<Term> term(const FixedPointScale& s, Interval x, bool pow2) {
  std::optional<LaneScale> l = lane_scale(s, x, pow2);
  if (!l) return std::nullopt;
  if (pow2 && l->left == 0 && l->right <= 30 && x.magnitude() + ((int64_t{1} << l->right) >> 1) <= kI32Max)
    l->add_then_shift = true;
  Term t{*l, {s.apply(x.lo), s.apply(x.hi)}};
  if (!t.out.in_int32()) return std::nullopt;
  return t;
}

// A product term s(a * b). A product that may leave int32 (*wide) is computed in 64 bits:
// power-of-two plans shift it (right <= 62); multiplier plans split it as
// p = hi * 2^8 + lo (hi fits int32 while |p| < 2^38) and round (hi * m * 2^8 + lo * m)
// / 2^right in 64 bits, which needs right in [9, 62].
std::optional<Term> product_term(const FixedPointScale& s, Interval a, Interval b, bool pow2, bool* wide) {
  const Interval p = product(a, b);
  *wide = !p.in_int32();
  if (!*wide) return term(s, p, pow2);
  if (s.shift > 62 || p.magnitude() >= (int64_t{1} << 38)) return std::nullopt;
  if (pow2 != s.is_pow2() || (!pow2 && s.shift < 9)) return std::nullopt;
  if (s.shift < 0 && (-s.shift > 30 || p.magnitude() > (int64_t{1} << (62 + s.shift)))) return std::nullopt;
  Term t{LaneScale{s.m, std::max(-s.shift, 0), std::max(s.shift, 0)}, {s.apply(p.lo), s.apply(p.hi)}};
  if (!t.out.in_int32()) return std::nullopt;
  return t;
}

// Terms plus a constant interval summed in int32 lanes: every partial sum must fit.
bool sum_fits(std::initializer_list<Interval> parts) {
  int64_t total = 0;
  for (const Interval& i : parts) total += i.magnitude();  // each <= 2^31, so no overflow
  return total <= kI32Max;
}

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

// Requantization rows of a GEMM with activations a (zero point zp_a, storage a_type) and
// integer weights q [rows, cols] to operator out with per-row scales.
std::optional<RequantRows> requant_rows(const OpQ& a, const std::vector<int32_t>& q, int64_t rows, int64_t cols,
                                        const std::vector<FixedPointScale>& scale, const OpQ& out, bool pow2,
                                        bool acc64) {
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
    const std::optional<Term> t = term(s, window, pow2);
    if (!t || !sum_fits({t->out, {out.zp, out.zp}})) return std::nullopt;
    r.comp.push_back(comp);
    r.lo.push_back(static_cast<int32_t>(window.lo));
    r.hi.push_back(static_cast<int32_t>(window.hi));
    r.m.push_back(t->lane.m);
    r.left.push_back(t->lane.left);
    r.right.push_back(t->lane.right);
  }
  // Padding rows: every value clamps to 0 and maps to the zero point.
  for (int i = 0; i < 8; ++i) {
    r.comp.push_back(0);
    r.lo.push_back(0);
    r.hi.push_back(0);
    r.m.push_back(pow2 ? 1 : 0);
    r.left.push_back(0);
    r.right.push_back(pow2 ? 0 : 1);
  }
  return r;
}

std::optional<std::vector<int32_t>> unit_constants(const std::vector<int32_t>& bias, int32_t zp, int64_t hp,
                                                   Interval* bound) {
  std::vector<int32_t> c(static_cast<size_t>(hp), zp);
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
  f.hp = (H + 7) / 8 * 8;
  f.pow2 = p.wx_to_z.is_pow2() && p.rh_to_z.is_pow2();
  f.acc64_x = p.x.storage == IntType::S16 || p.w.type() == IntType::S16;
  f.acc64_h = p.h.storage == IntType::S16 || p.r.type() == IntType::S16;
  // Every scale must be of the plan's kind (power-of-two plans hold only shifts).
  for (const auto* v : {&p.wx_scale, &p.rh_scale})
    for (const FixedPointScale& s : *v)
      if (s.is_pow2() != f.pow2) return std::nullopt;

  auto wx = requant_rows(p.x, p.q_w, 3 * H, C, p.wx_scale, p.wx, f.pow2, f.acc64_x);
  auto rh = requant_rows(p.h, p.q_r, 3 * H, H, p.rh_scale, p.rh, f.pow2, f.acc64_h);
  if (!wx || !rh) return std::nullopt;
  f.wx = std::move(*wx);
  f.rh = std::move(*rh);

  Interval cz, cr, crhab, cg;
  auto c_z = unit_constants(p.bias_z, p.z_pre.zp, f.hp, &cz);
  auto c_r = unit_constants(p.bias_r, p.r_pre.zp, f.hp, &cr);
  auto c_rhab = unit_constants(p.bias_rhab, p.rh_add_br.zp, f.hp, &crhab);
  auto c_g = unit_constants(p.bias_g, p.g_pre.zp, f.hp, &cg);
  if (!c_z || !c_r || !c_rhab || !c_g) return std::nullopt;
  f.c_z = std::move(*c_z);
  f.c_r = std::move(*c_r);
  f.c_rhab = std::move(*c_rhab);
  f.c_g = std::move(*c_g);

  const bool k = f.pow2;
  const auto wz = term(p.wx_to_z, diff(p.wx), k), rz = term(p.rh_to_z, diff(p.rh), k);
  const auto wr = term(p.wx_to_r, diff(p.wx), k), rr = term(p.rh_to_r, diff(p.rh), k);
  const auto rab = term(p.rh_to_rhab, diff(p.rh), k);
  const auto rrh = product_term(p.rrh_mul, diff(p.r_out), diff(p.rh_add_br), k, &f.wide_rrh);
  const auto wg = term(p.wx_to_g, diff(p.wx), k), rg = term(p.rrh_to_g, diff(p.rrh), k);
  const auto old_c = product_term(p.old_mul, diff(p.z_out), diff(p.h), k, &f.wide_old);
  const Interval one_minus_z{int64_t{p.q_one} - p.z_out.range.qmax, int64_t{p.q_one} - p.z_out.range.qmin};
  const auto new_c = product_term(p.new_mul, one_minus_z, diff(p.g_out), k, &f.wide_new);
  const auto oh = term(p.old_to_h, diff(p.old_c), k), nh = term(p.new_to_h, diff(p.new_c), k);
  if (!wz || !rz || !wr || !rr || !rab || !rrh || !wg || !rg || !old_c || !new_c || !oh || !nh) return std::nullopt;
  if (!one_minus_z.in_int32()) return std::nullopt;
  // The sums of q_step_intonly.cpp, each with its constant.
  if (!sum_fits({wz->out, rz->out, cz}) || !sum_fits({wr->out, rr->out, cr}) || !sum_fits({rab->out, crhab}) ||
      !sum_fits({rrh->out, {p.rrh.zp, p.rrh.zp}}) || !sum_fits({wg->out, rg->out, cg}) ||
      !sum_fits({old_c->out, {p.old_c.zp, p.old_c.zp}}) || !sum_fits({new_c->out, {p.new_c.zp, p.new_c.zp}}) ||
      !sum_fits({oh->out, nh->out, {p.h.zp, p.h.zp}}))
    return std::nullopt;
  f.wx_to_z = wz->lane;
  f.rh_to_z = rz->lane;
  f.wx_to_r = wr->lane;
  f.rh_to_r = rr->lane;
  f.rh_to_rhab = rab->lane;
  f.rrh_mul = rrh->lane;
  f.wx_to_g = wg->lane;
  f.rrh_to_g = rg->lane;
  f.old_mul = old_c->lane;
  f.new_mul = new_c->lane;
  f.old_to_h = oh->lane;
  f.new_to_h = nh->lane;
  // Interpolated tables: lanes take hi - lo in int32 and the rest in 64 bits.
  for (const ActivationLut* lut : {&p.sig_z, &p.sig_r, &p.tanh_g}) {
    if (lut->direct()) continue;
    const auto t = lut->table();
    for (size_t i = 0; i + 1 < t.size(); ++i)
      if (std::abs(int64_t{t[i + 1]} - t[i]) > kI32Max) return std::nullopt;
    if (lut->frac_bits() + lut->shift() > 40) return std::nullopt;
  }
  return f;
}

}  // namespace fixq::gru_detail
