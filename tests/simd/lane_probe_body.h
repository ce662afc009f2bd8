// The body of lane_probe_<family>.cpp, written once over the family's primitives L.
#pragma once

#include <bit>
#include <cstring>

#include "lane_probe.h"

namespace fixq::lane_probe {

template <class L>
struct Prober {
  using I = typename L::I;
  using F = typename L::F;
  static constexpr int N = L::kLanes;
  const Inputs& in;
  Results r;

  void put(const std::string& name, const int32_t* v, int n) {
    for (int i = 0; i < n; ++i) r[name].push_back(static_cast<uint32_t>(v[i]));
  }
  void put_i(const std::string& name, I v) {
    alignas(64) int32_t t[N];
    L::store(t, v);
    put(name, t, N);
  }
  void put_i64(const std::string& name, I v) {
    alignas(64) int64_t t[N / 2];
    std::memcpy(t, &v, sizeof t);
    for (int64_t e : t) r[name].push_back(static_cast<uint64_t>(e));
  }
  void put_f(const std::string& name, F v) {
    alignas(64) float t[N];
    L::fstore(t, v);
    for (float f : t) r[name].push_back(std::bit_cast<uint32_t>(f));
  }
  // A mask as 0 / 1 lanes.
  void put_m(const std::string& name, typename L::M m) { put_i(name, L::select(m, L::splat(1), L::zero())); }

  void run() {
    r["lanes"].push_back(N);
    for (int o = 0; o < kCount; o += N) {
      const I a = L::load(in.a.data() + o), b = L::load(in.b.data() + o), n = L::load(in.counts.data() + o);
      const I a64 = L::load64(in.a64.data() + o / 2), b64 = L::load64(in.b64.data() + o / 2);
      const I n64 = L::load64(in.counts64.data() + o / 2);
      const F x = L::fload(in.x.data() + o), y = L::fload(in.y.data() + o);
      put_i("add", L::add(a, b));
      put_i("sub", L::sub(a, b));
      put_i("mullo", L::mullo(a, b));
      put_i("min", L::min(a, b));
      put_i("max", L::max(a, b));
      put_i("max_u", L::max_u(a, b));
      put_i("bit_and", L::bit_and(a, b));
      put_i("bit_or", L::bit_or(a, b));
      put_i("bit_xor", L::bit_xor(a, b));
      put_i("and_or", L::and_or(a, b, n));
      put_i("sllv", L::sllv(a, n));
      put_i("srlv", L::srlv(a, n));
      put_i("srav", L::srav(a, n));
      put_i("slli3", L::template slli<3>(a));
      put_i("srli5", L::template srli<5>(a));
      put_i("srai7", L::template srai<7>(a));
      put_i("gather", L::gather(in.table.data(), L::bit_and(a, L::splat(255))));
      put_m("gt", L::gt(a, b));
      put_m("eq", L::eq(a, L::bit_and(b, L::splat(3))));
      put_i("select", L::select(L::gt(a, b), a, b));
      put_m("mask_or", L::mask_or(L::gt(a, b), L::eq(n, L::splat(0))));
      put_m("mask_and", L::mask_and(L::gt(a, b), L::gt(n, L::splat(20))));
      put_m("mask_and_not", L::mask_and_not(L::gt(a, b), L::gt(n, L::splat(20))));
      const int32_t any = L::any(L::gt(a, L::splat(in.a[static_cast<size_t>(o)]))) ? 1 : 0;
      put("any", &any, 1);
      const int32_t first = L::first(L::gt(a, L::splat(in.a[static_cast<size_t>(o + N / 2)])));
      put("first", &first, 1);
      put_i("add64", L::add64(a64, b64));
      put_i("sub64", L::sub64(a64, b64));
      put_i("sllv64", L::sllv64(a64, n64));
      put_i("srav64", L::srav64(a64, n64));
      put_i("srli64_9", L::template srli64<9>(a64));
      put_i64("min64", L::min64(a64, b64));
      put_i64("max64", L::max64(a64, b64));
      put_i64("if_zero64", L::if_zero64(L::bit_and(a64, L::splat64(1)), a64, b64));
      put_i64("mul_even", L::mul_even(a, b));
      put_i("interleave_low", L::interleave_low(a64, b64));
      put_i64("widen_half0", L::template widen_half<0>(a));
      put_i64("widen_half1", L::template widen_half<1>(a));
      put_i64("load_widen_half", L::load_widen_half(in.a.data() + o));
      put_i("narrow_halves", L::narrow_halves(a64, b64));
      const I k = L::bit_and(a, L::splat(255));
      put_i64("gather_pairs0", L::template gather_pairs<0>(in.table.data(), k));
      put_i64("gather_pairs1", L::template gather_pairs<1>(in.table.data(), k));
      put_i("lookup_hi16_64", L::template lookup_hi16<64>(in.table16.data(), L::bit_and(a, L::splat(63))));
      put_i("lookup_hi16_256", L::template lookup_hi16<256>(in.table16.data(), k));
      put_f("fadd", L::fadd(x, y));
      put_f("fsub", L::fsub(x, y));
      put_f("fmul", L::fmul(x, y));
      // Finite multiplicand and addend: a NaN comes only from x, so its payload is defined.
      put_f("ffma", L::ffma(x, L::fload(in.dots.data() + o), L::fload(in.dots2.data() + o)));
      put_f("fdiv", L::fdiv(x, y));
      put_f("fmin", L::fmin(x, y));
      put_f("fmax", L::fmax(x, y));
      put_f("round_even", L::round_even(x));
      put_i("truncate", L::truncate(x));
      put_f("to_float", L::to_float(a));
      put_m("fless", L::fless(x, y));
      put_m("fnan", L::fnan(x));
      put_f("fselect", L::fselect(L::fless(x, y), x, y));
      put_f("load_halfs", L::load_halfs(in.halfs.data() + o));
      const uint32_t hmax = L::hmax_u(a);
      put("hmax_u", reinterpret_cast<const int32_t*>(&hmax), 1);
      // Widening loads and narrowing stores of every storage type, whole and ragged.
      probe_storage<int8_t>("s8", o);
      probe_storage<uint8_t>("u8", o);
      probe_storage<int16_t>("s16", o);
      probe_storage<uint16_t>("u16", o);
      probe_storage<int32_t>("s32", o);
    }
    // The lane masks and the ragged float loads and stores, for every count.
    for (int64_t n = -1; n <= N + 1; ++n) {
      put_m("first_lanes", L::first_lanes(n));
      put_f("fload_n", L::fload_n(in.x.data(), n));
      put_f("load_halfs_n", L::load_halfs_n(in.halfs.data(), n));
      alignas(64) float out[N + 1];
      for (float& f : out) f = -7.0f;
      L::fstore_n(out, n, L::fload(in.y.data()));
      for (float f : out) r["fstore_n"].push_back(std::bit_cast<uint32_t>(f));
    }
  }

  template <class Q>
  void probe_storage(const std::string& name, int o) {
    alignas(64) Q buf[N];
    for (int i = 0; i < N; ++i) std::memcpy(&buf[i], in.b.data() + o + i, sizeof(Q));  // the low bytes, any value
    put_i("load_widen_" + name, L::load_widen(buf));
    const int64_t n = o / N % N;  // 0 .. N - 1 over the vectors
    put_i("load_widen_n_" + name, L::load_widen_n(buf, n));
    // In Q's range (the contract): the loaded values themselves.
    const I v = L::load_widen(buf);
    alignas(64) Q out[N + 1];
    L::store_narrow(out, v);
    for (int i = 0; i < N; ++i) r["store_narrow_" + name].push_back(static_cast<uint32_t>(static_cast<int32_t>(out[i])));
    for (Q& q : out) q = static_cast<Q>(99);
    L::store_narrow_n(out, n, v);
    for (Q q : out) r["store_narrow_n_" + name].push_back(static_cast<uint32_t>(static_cast<int32_t>(q)));
  }
};

template <class L>
Results probe_lanes(const Inputs& in) {
  Prober<L> p{in, {}};
  p.run();
  return p.r;
}

}  // namespace fixq::lane_probe
