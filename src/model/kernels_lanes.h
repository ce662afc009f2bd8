// Private, for the model/kernels_<family>.cpp files only: the model kernels of kernels.h
// written once over a family's lane primitives L (src/simd/lanes_<family>.h), L::kLanes
// outputs per step and the ragged last block under a lane mask, each lane the scalar
// definition's steps (int_ops.cpp, requant_rows_scalar) in the same order.
#pragma once

#include <cstdint>

#include "arith/lane_scale_lanes.h"
#include "model/kernels.h"

namespace fixq::model_detail {

// (A template over L, whose family types have internal linkage: so have its instances.)
template <class L>
struct ModelLanes {
  using I = typename L::I;

  // Block by block of outputs, each block's constants in registers for every row. The
  // per-output arrays are padded to whole blocks of 16 (QNode::Lanes), so they load whole.
  template <bool Pow2>
  static void requant(const RequantRows& a) {
    const I lo = L::splat(a.lo), hi = L::splat(a.hi), zp = L::splat(a.zp);
    for (int64_t o = 0; o < a.n; o += L::kLanes) {
      const int64_t count = a.n - o;
      const I offset = L::load(a.offset + o);
      const LaneScaleRegs<L> s = lane_scale_regs<L>(L::load(a.m + o), L::load(a.left + o), L::load(a.right + o));
      for (int64_t r = 0; r < a.rows; ++r) {
        const I v = L::add(L::template load_widen_n<int32_t>(a.acc + r * a.n + o, count), offset);
        I q;
        if constexpr (Pow2) q = apply_pow2<L>(v, s);
        else q = apply_multiplier<L>(v, s);
        q = L::add(L::min(L::max(q, lo), hi), zp);
        L::template store_narrow_n<int32_t>(a.y + r * a.ldy + o, count, q);
      }
    }
  }

  // Lanes past n read entry 0, and are not stored.
  template <class Q>
  static void map8(const int32_t* x, int64_t n, const int32_t* table, const int8_t* bytes, int32_t qmin, Q* y) {
    const I lo = L::splat(qmin);
    auto index = [&](int64_t i, int64_t count) {
      return L::select(L::first_lanes(count), L::sub(L::template load_widen_n<int32_t>(x + i, count), lo), L::zero());
    };
    if constexpr (L::kByteTables) {
      if (bytes != nullptr) {
        const typename L::ByteTable t = L::load_byte_table(bytes);
        for (int64_t i = 0; i < n; i += L::kLanes)
          L::template store_narrow_n<Q>(y + i, n - i, L::lookup_bytes(t, index(i, n - i)));
        return;
      }
    }
    for (int64_t i = 0; i < n; i += L::kLanes) L::template store_narrow_n<Q>(y + i, n - i, L::gather(table, index(i, n - i)));
  }
};

template <class L>
constexpr ModelKernels model_kernels(const char* name) {
  return {name, &ModelLanes<L>::template requant<true>, &ModelLanes<L>::template requant<false>,
          &ModelLanes<L>::template map8<int32_t>, &ModelLanes<L>::template map8<int8_t>};
}

}  // namespace fixq::model_detail
