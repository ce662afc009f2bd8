// Private, for kernel files only: the lane forms of arith/lane_scale.h on vectors, written
// once over a family's lane primitives L (src/simd/lanes_<family>.h) and compiled in each
// family's file, operation for operation as their scalar definitions in lane_scale.h (as
// gemmlowp's fixedpoint.h body serves its SIMD siblings). tests/arith holds every family's
// instantiation to those definitions.
#pragma once

#include <cstdint>

#include "arith/lane_scale.h"

namespace fixq {
namespace {

// A LaneScale in registers, per lane (per-row scales) or the same in every lane.
template <class L>
struct LaneScaleRegs {
  using I = typename L::I;
  I m, left, right, right_m1, bit;  // right_m1 = max(right - 1, 0); bit = min(right, 1)
  I right_even, right_odd;          // right as int64 lanes: of the even and the odd int32 lanes
  bool add_then_shift = false;
  I half;                           // 2^(right - 1) for add_then_shift scales
};

template <class L>
LaneScaleRegs<L> lane_scale_regs(typename L::I m, typename L::I left, typename L::I right) {
  LaneScaleRegs<L> s;
  s.m = m;
  s.left = left;
  s.right = right;
  s.right_m1 = L::max(L::sub(right, L::splat(1)), L::zero());
  s.bit = L::min(right, L::splat(1));
  s.right_even = L::bit_and(right, L::splat64(0xffffffff));
  s.right_odd = L::template srli64<32>(right);
  s.half = L::zero();
  return s;
}

template <class L>
LaneScaleRegs<L> lane_scale_regs(const LaneScale& l) {
  LaneScaleRegs<L> s = lane_scale_regs<L>(L::splat(l.m), L::splat(l.left), L::splat(l.right));
  s.add_then_shift = l.add_then_shift;
  s.half = L::splat(l.add_then_shift && l.right > 0 ? int32_t{1} << (l.right - 1) : 0);
  return s;
}

// lane_rounding_shift64 per int64 lane, s in [1, 62].
template <class L>
typename L::I rounding_shift64(typename L::I q, typename L::I s) {
  const auto half = L::sllv64(L::splat64(1), L::sub64(s, L::splat64(1)));
  return L::srav64(L::add64(q, half), s);
}

template <class L>
typename L::I apply_pow2(typename L::I x, const LaneScaleRegs<L>& s) {
  if (s.add_then_shift) return L::srav(L::add(x, s.half), s.right);
  x = L::sllv(x, s.left);
  const auto q = L::srav(x, s.right);
  return L::add(q, L::bit_and(L::srav(x, s.right_m1), s.bit));
}

template <class L>
typename L::I apply_multiplier(typename L::I x, const LaneScaleRegs<L>& s) {
  const auto even = L::mul_even(x, s.m);
  const auto odd = L::mul_even(L::template srli64<32>(x), L::template srli64<32>(s.m));
  return L::interleave_low(rounding_shift64<L>(even, s.right_even), rounding_shift64<L>(odd, s.right_odd));
}

template <class L>
typename L::I apply_wide_pow2(typename L::I a, typename L::I b, const LaneScaleRegs<L>& s) {
  auto part = [&](typename L::I pa, typename L::I pb) {
    const auto p = L::sllv64(L::mul_even(pa, pb), L::bit_and(s.left, L::splat64(0xffffffff)));
    const auto r = s.right_even;
    // right is the same in every lane of a per-tensor scale; right 0 keeps the product.
    return L::if_zero64(r, p, rounding_shift64<L>(p, L::max(r, L::splat64(1))));
  };
  return L::interleave_low(part(a, b), part(L::template srli64<32>(a), L::template srli64<32>(b)));
}

template <class L>
typename L::I apply_wide_multiplier(typename L::I a, typename L::I b, const LaneScaleRegs<L>& s) {
  const auto eight = L::splat64(8);
  auto part = [&](typename L::I pa, typename L::I pb, typename L::I r) {
    const auto p = L::mul_even(pa, pb);
    const auto hi = L::srav64(p, eight), lo = L::bit_and(p, L::splat64(0xff));
    const auto half = L::sllv64(L::splat64(1), L::sub64(r, L::splat64(1)));
    const auto low_part = L::template srli64<8>(L::add64(L::mul_even(lo, s.m), half));
    return L::srav64(L::add64(L::mul_even(hi, s.m), low_part), L::sub64(r, eight));
  };
  return L::interleave_low(part(a, b, s.right_even),
                           part(L::template srli64<32>(a), L::template srli64<32>(b), s.right_odd));
}

}  // namespace
}  // namespace fixq
