// Private, for the gru/int/fast/kernels_<family>.cpp files only: the lane kernels of the fast GRU step,
// written once over a family's lane primitives L (src/simd/lanes_<family>.h): L::kLanes
// hidden units per vector in int32 lanes, the same integers as the reference
// (build_fast_plan proved every lane fits, gru/int/fast/loop.h). The products before them run on the
// GEMM's kernels. Each family's file compiles its own copy with its own flags (everything
// here has internal linkage, so no copy can stand in for another at link time).
//
// The families differ only in their primitives, among them how they read the activation
// tables (gru/int/lut_eval.h): gathers, or for a family whose L::kByteTables is set, the direct
// tables of 8-bit operators whose entries fit a byte from four registers (vpermi2b).
#pragma once

#include <algorithm>
#include <array>
#include <new>
#include <type_traits>

#include "arith/lane_scale_lanes.h"
#include "gru/int/fast/loop.h"
#include "gru/int/lut_eval.h"
#include "gru/int/unit_update.h"

namespace fixq::gru_detail {
namespace {

template <class L>
typename L::I clamp_lanes(typename L::I v, typename L::I lo, typename L::I hi) {
  return L::min(L::max(v, lo), hi);
}

// activation_lookup's operations on L's lanes (gru/int/lut_eval.h).
template <class L>
struct LutOps {
  using V = typename L::I;
  const typename L::ByteTable* bytes = nullptr;  // the table's entries as bytes, or null: gather
  V splat(int32_t v) const { return L::splat(v); }
  V add(V a, V b) const { return L::add(a, b); }
  V sub(V a, V b) const { return L::sub(a, b); }
  V shr(V v, int s) const { return L::srlv(v, L::splat(s)); }
  V mask(V v, int32_t m) const { return L::bit_and(v, L::splat(m)); }
  V gather(const int32_t* table, V i) const {
    if constexpr (L::kByteTables) {
      if (bytes != nullptr) return L::lookup_bytes(*bytes, i);
    }
    return L::gather(table, i);
  }
  // Both knots of a lane in one 8-byte gather element, table[k] | table[k + 1] << 32 (the
  // last knot has no successor to read: k < knots - 1): half the gathered elements of two
  // int32 gathers, and the pairs already sit in int64 lanes.
  V interp_knots(const int32_t* table, V k, V fr, int shift, int total) const {
    const V pow_shift = L::splat(int32_t{1} << shift), t = L::splat64(total);
    const V half = L::splat64(int64_t{1} << (total - 1));
    auto part = [&](V p, V fr64) {
      const V d = L::sub(L::template srli64<32>(p), p);  // low halves: table[k + 1] - table[k]
      // fr >= 0: widened with sign or without alike.
      const V v = L::add64(L::mul_even(p, pow_shift), L::mul_even(d, fr64));
      return L::srav64(L::add64(v, half), t);  // its low 32 bits, as the lanes hold
    };
    return L::narrow_halves(part(L::template gather_pairs<0>(table, k), L::template widen_half<0>(fr)),
                            part(L::template gather_pairs<1>(table, k), L::template widen_half<1>(fr)));
  }
  V clamp(V v, int32_t lo, int32_t hi) const { return clamp_lanes<L>(v, L::splat(lo), L::splat(hi)); }
};

// Everything a step reads, prepared once per run: the operators' constants and the unit
// update's scales in registers' form, and the plan's per-row and per-unit arrays.
template <class L>
struct State {
  using I = typename L::I;
  // Plain arrays of vectors: std::array of a vector type drops its alignment attribute.
  I zp[13], qmin[13], qmax[13];  // [Operand]
  std::array<LaneScaleRegs<L>, kUnitScales> scale;
  std::array<bool, kUnitScales> wide;
  std::array<LutView, 3> lut;
  // [UnitLut]: a direct table's 256 entries as bytes, where they fit (L::kByteTables).
  typename L::ByteTable bytes[3];
  std::array<bool, 3> has_bytes{};
  // [UnitLut]: FastPlan::lut16's entries, or null.
  std::array<const int16_t*, 3> lut16{};
  I q_one;
  const FastPlan* fast;
  int64_t H, hp;
  IntType h_storage;
};

template <class L>
void prepare(const CellPlan& plan, const FastPlan& f, void* storage) {
  // Kept in raw storage that is freed without a destructor call (PreparedLaneStates).
  static_assert(std::is_trivially_destructible_v<State<L>>);
  const CellRefs c(plan);
  State<L>* s = new (storage) State<L>;
  for (size_t o = 0; o < std::size(s->zp); ++o) {
    s->zp[o] = L::splat(c.operand[o]->zp);
    s->qmin[o] = L::splat(c.operand[o]->range.qmin);
    s->qmax[o] = L::splat(c.operand[o]->range.qmax);
  }
  for (size_t i = 0; i < s->scale.size(); ++i) s->scale[i] = lane_scale_regs<L>(f.lane[i]);
  s->wide = f.wide;
  for (size_t l = 0; l < s->lut.size(); ++l) {
    s->lut[l] = lut_view(*c.lut[l]);
    if constexpr (L::kByteTables) {
      const std::span<const int32_t> t = c.lut[l]->table();
      alignas(64) int8_t b[256] = {};
      bool fits = c.lut[l]->direct() && t.size() <= 256;
      for (size_t i = 0; fits && i < t.size(); ++i) {
        fits = t[i] >= -128 && t[i] <= 127;
        if (fits) b[i] = static_cast<int8_t>(t[i]);
      }
      s->has_bytes[l] = fits;
      s->bytes[l] = L::load_byte_table(b);
    }
  }
  for (size_t l = 0; l < 3; ++l) s->lut16[l] = f.lut16[l].empty() ? nullptr : f.lut16[l].data();
  s->q_one = L::splat(c.q_one);
  s->fast = &f;
  s->H = plan.hidden_size;
  s->hp = f.hp;
  s->h_storage = plan.h.storage;
}

// The unit update (gru/int/unit_update.h) on L's int32 lanes. Shifts: the plan's scales are all
// one addition and one shift or a left shift (FastPlan::shifts).
template <class L, bool Pow2, bool Shifts = false>
struct LaneDomain {
  using V = typename L::I;
  const State<L>& s;
  int64_t j;  // first unit of the vector

  V sub(V a, V b) const { return L::sub(a, b); }
  V add(V a, V b) const { return L::add(a, b); }
  V less_zp(Operand o, V v) const { return L::sub(v, s.zp[static_cast<size_t>(o)]); }
  V plus_zp(Operand o, V v) const { return L::add(v, s.zp[static_cast<size_t>(o)]); }
  V sat(Operand o, V v) const { return clamp_lanes<L>(v, s.qmin[static_cast<size_t>(o)], s.qmax[static_cast<size_t>(o)]); }
  V scale(UnitScale u, V v) const {
    const LaneScaleRegs<L>& r = s.scale[static_cast<size_t>(u)];
    if constexpr (Shifts) {
      if (s.fast->lane[static_cast<size_t>(u)].left > 0) [[unlikely]]  // rare (lanes16_avx512.h)
        return L::sllv(v, r.left);
      return L::srav(L::add(v, r.half), r.right);
    }
    if constexpr (Pow2) return apply_pow2<L>(v, r);
    else return apply_multiplier<L>(v, r);
  }
  V product(UnitScale u, V a, V b) const {
    const auto i = static_cast<size_t>(u);
    if constexpr (Shifts) return scale(u, L::mullo(a, b));
    if (!s.wide[i]) return scale(u, L::mullo(a, b));
    if constexpr (Pow2) return apply_wide_pow2<L>(a, b, s.scale[i]);
    else return apply_wide_multiplier<L>(a, b, s.scale[i]);
  }
  V bias(UnitBias b) const { return L::load_aligned(s.fast->bias[static_cast<size_t>(b)].data() + j); }
  V lut(UnitLut l, V v) const {
    const auto i = static_cast<size_t>(l);
    // An interpolated table's every value, where the plan has them: the same integers.
    if (s.lut16[i] != nullptr) return L::gather_i16(s.lut16[i], L::sub(v, L::splat(s.lut[i].input_min)));
    LutOps<L> ops;
    if (s.has_bytes[i]) ops.bytes = &s.bytes[i];
    return activation_lookup(ops, s.lut[i], v);
  }
  V one_in_z_out() const { return s.q_one; }
};

// acc - comp for L::kLanes rows from n: int32 accumulators (where acc - comp fits int32,
// build_fast_plan) or int64 ones, clamped to the window where the output is not saturated.
template <class L>
typename L::I window(const RequantRows& r, const int32_t* acc, int64_t n) {
  const auto at = static_cast<size_t>(n);
  return clamp_lanes<L>(L::sub(L::load(acc + n), L::load(&r.comp32[at])), L::load(&r.lo[at]), L::load(&r.hi[at]));
}
template <class L>
typename L::I window(const RequantRows& r, const int64_t* acc, int64_t n) {
  auto half = [&](int64_t o) {
    const auto at = static_cast<size_t>(n + o);
    const auto v = L::sub64(L::load64(acc + n + o), L::load64(&r.comp[at]));
    return L::min64(L::max64(v, L::load_widen_half(&r.lo[at])), L::load_widen_half(&r.hi[at]));
  };
  return L::narrow_halves(half(0), half(L::kLanes / 2));  // in int32 now: exact
}

// L::kLanes rows of a GEMM requantized to their operator: sat(R_n(window) + zp).
template <class L, bool Pow2, class Acc>
typename L::I requant(const RequantRows& r, const Acc* acc, int64_t n) {
  const auto v = window<L>(r, acc, n);
  const auto at = static_cast<size_t>(n);
  LaneScaleRegs<L> s;
  s.m = L::load(&r.m[at]);
  s.left = L::load(&r.left[at]);
  s.right = L::load(&r.right[at]);
  s.right_m1 = L::load(&r.right_m1[at]);
  s.bit = L::load(&r.bit[at]);
  s.add_then_shift = false;
  typename L::I y;
  if constexpr (Pow2) {
    y = apply_pow2<L>(v, s);
  } else {
    s.right_even = L::bit_and(s.right, L::splat64(0xffffffff));
    s.right_odd = L::template srli64<32>(s.right);
    y = apply_multiplier<L>(v, s);
  }
  return clamp_lanes<L>(L::add(y, L::splat(r.zp)), L::splat(r.out.qmin), L::splat(r.out.qmax));
}

// L::kLanes rows in the fused form (gru/int/fast/loop.h): acc points at row g * H + j, at = g * hp + j.
template <class L>
typename L::I requant_fused(const FusedRequant& f, const int32_t* acc, int64_t at) {
  const auto i = static_cast<size_t>(at);
  const auto x = clamp_lanes<L>(L::load(acc), L::load_aligned(&f.lo_acc[i]), L::load_aligned(&f.hi_acc[i]));
  return L::srav(L::add(x, L::load_aligned(&f.add[i])), L::load_aligned(&f.shift[i]));
}

template <class L, class Acc>
void requant_wx(const void* state, const Acc* acc, int16_t* out) {
  const State<L>& s = *static_cast<const State<L>*>(state);
  const RequantRows& r = s.fast->wx;
  // In Wx's 8- or 16-bit range: the narrowing stores are exact.
  if constexpr (std::is_same_v<Acc, int32_t>) {
    if (r.fused) {
      for (int64_t g = 0; g < 3; ++g)
        for (int64_t j = 0; j < s.hp; j += L::kLanes)
          L::store_narrow(out + g * s.hp + j, requant_fused<L>(*r.fused, acc + g * s.H + j, g * s.hp + j));
      return;
    }
  }
  for (int64_t g = 0; g < 3; ++g)
    for (int64_t j = 0; j < s.hp; j += L::kLanes)
      L::store_narrow(out + g * s.hp + j,
                      r.pow2 ? requant<L, true>(r, acc, g * s.H + j) : requant<L, false>(r, acc, g * s.H + j));
}

// h as int32 lanes from its storage; lanes past H are 0 (never stored back).
template <class L>
typename L::I load_h(const void* h, IntType t, int64_t j, int64_t H) {
  if (t == IntType::S16) return L::load_widen_n(static_cast<const int16_t*>(h) + j, H - j);
  return L::load_widen_n(static_cast<const int8_t*>(h) + j, H - j);
}

// Values are in h's range: the narrowing stores are exact.
template <class L>
void store_h(void* y, IntType t, int64_t j, int64_t H, typename L::I v) {
  if (t == IntType::S16) L::store_narrow_n(static_cast<int16_t*>(y) + j, H - j, v);
  else L::store_narrow_n(static_cast<int8_t*>(y) + j, H - j, v);
}

template <class L, bool Pow2, bool Fused, bool Shifts = false, class Acc>
[[gnu::flatten]] void step_units(const State<L>& s, const Acc* acc, const int16_t* wx, const void* h, void* y) {
  const RequantRows& r = s.fast->rh;
  const int64_t H = s.H, hp = s.hp;
  auto rh = [&](int64_t g, int64_t j) {
    if constexpr (Fused) return requant_fused<L>(*r.fused, acc + g * H + j, g * hp + j);
    else return requant<L, Pow2>(r, acc, g * H + j);
  };
  using D = LaneDomain<L, Pow2, Shifts>;
  // The update in two passes over blocks of kBlock vectors (unit_gates, then unit_finish,
  // z and g_pre kept in L1 between them): each pass's table lookups depend on no other
  // vector's, so many gathers are in flight at once, where one pass chained each vector's
  // tanh lookup behind its two sigmoid lookups (int16 plans, whose tables are 128 KiB and
  // answer from L2: 58% of the step kernel's time sat on the three gathers).
  constexpr int64_t kBlock = 16;
  alignas(64) int32_t z_of[kBlock * L::kLanes], g_pre_of[kBlock * L::kLanes];
  for (int64_t j0 = 0; j0 < H; j0 += kBlock * L::kLanes) {
    const int64_t j1 = std::min(H, j0 + kBlock * L::kLanes);
    for (int64_t j = j0; j < j1; j += L::kLanes) {
      D d{s, j};
      const UnitInputs<D> in{L::load_widen(wx + j), L::load_widen(wx + hp + j), L::load_widen(wx + 2 * hp + j),
                             rh(0, j),              rh(1, j),                   rh(2, j),
                             load_h<L>(h, s.h_storage, j, H)};
      const UnitGates<D> gates = unit_gates(d, in);
      L::store(z_of + (j - j0), gates.z);
      L::store(g_pre_of + (j - j0), gates.g_pre);
    }
    for (int64_t j = j0; j < j1; j += L::kLanes) {
      D d{s, j};
      const UnitGates<D> gates{L::load(z_of + (j - j0)), L::load(g_pre_of + (j - j0))};
      store_h<L>(y, s.h_storage, j, H, unit_finish(d, gates, load_h<L>(h, s.h_storage, j, H)));
    }
  }
}

template <class L, class Acc>
void step(const void* state, const Acc* acc, const int16_t* wx, const void* h, void* y) {
  const State<L>& s = *static_cast<const State<L>*>(state);
  if constexpr (std::is_same_v<Acc, int32_t>) {
    if (s.fast->rh.fused) {  // fused: a power-of-two plan
      if (s.fast->shifts) return step_units<L, true, true, true>(s, acc, wx, h, y);
      return step_units<L, true, true>(s, acc, wx, h, y);
    }
  }
  if (s.fast->pow2) step_units<L, true, false>(s, acc, wx, h, y);
  else step_units<L, false, false>(s, acc, wx, h, y);
}

// The lane kernels of family L, named `name`.
template <class L>
constexpr GruLaneKernels lane_kernels(const char* name) {
  return {name,           L::kLanes,         sizeof(State<L>),    prepare<L>,
          requant_wx<L, int32_t>, requant_wx<L, int64_t>, step<L, int32_t>, step<L, int64_t>};
}

}  // namespace
}  // namespace fixq::gru_detail
