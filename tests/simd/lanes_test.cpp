// Every family's lane primitives (src/simd/lanes_<family>.h) against the scalar statement of
// their contract, lane by lane, on extreme values: the kernels' bodies are written once over
// these names, so a primitive that is wrong in one family would be wrong in all of that
// family's kernels. The AVX-512 family also runs through SIMDe (its primitives compiled a
// second time, lane_probe_avx512.cpp), so a CPU without AVX-512 proves them too.
//
// The float primitives follow the x86 instructions: minps / maxps return the second operand
// when either is NaN, cvttps2dq gives INT32_MIN out of range, vcvtph2ps is exact. The inputs
// hold no signalling NaN for the fp16 conversion, whose quieting SIMDe may not reproduce.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fixq/cpu.h"
#include "fixq/lowp.h"
#include "simd/lane_probe.h"

namespace fixq {
namespace {

using lane_probe::Inputs;
using lane_probe::kCount;
using lane_probe::Results;

Inputs make_inputs() {
  Inputs in;
  std::mt19937 rng(17);
  const int32_t edges[] = {0, 1, -1, 2, -2, 127, -128, 128, 255, 256, 32767, -32768, 65535, INT32_MAX, INT32_MIN,
                           INT32_MAX - 1, INT32_MIN + 1, 0x40000000, -0x40000000, 0x12345678};
  for (int i = 0; i < kCount; ++i) {
    const auto r = static_cast<int32_t>(rng());
    in.a.push_back(i < 20 ? edges[i] : r >> (rng() % 31));
    in.b.push_back(i < 20 ? edges[(i * 7 + 3) % 20] : static_cast<int32_t>(rng()) >> (rng() % 31));
    in.counts.push_back(static_cast<int32_t>(i % 41));
  }
  for (int i = 0; i < kCount / 2; ++i) {
    const int64_t edge64[] = {0, -1, 1, INT64_MIN, INT64_MAX, int64_t{1} << 40, -(int64_t{1} << 40), 0x123456789abcdefLL};
    in.a64.push_back(i < 8 ? edge64[i] : static_cast<int64_t>((uint64_t{rng()} << 32) | rng()) >> (rng() % 63));
    in.b64.push_back(i < 8 ? edge64[(i + 3) % 8] : static_cast<int64_t>((uint64_t{rng()} << 32) | rng()) >> (rng() % 63));
    in.counts64.push_back(i * 2 % 64);
  }
  const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1.5f, 2.5f, -2.5f, 1e-40f, -1e-40f,
                            3e9f, -3e9f, 2147483520.0f, -2147483648.0f, INFINITY, -INFINITY, NAN, -NAN, 1e38f, 8388609.5f};
  std::normal_distribution<float> g(0.0f, 100.0f);
  for (int i = 0; i < kCount; ++i) {
    in.x.push_back(i < 20 ? specials[i] : g(rng));
    in.y.push_back(i < 20 ? specials[(i * 3 + 5) % 20] : g(rng));
    in.dots.push_back(g(rng) / 7.0f);
    in.dots2.push_back(g(rng) * 3.0f);
  }
  for (int i = 0; i < 257; ++i) {
    in.table.push_back(static_cast<int32_t>(rng()));
    in.table16.push_back(static_cast<uint16_t>(rng()));
  }
  const uint16_t half_specials[] = {0x0000, 0x8000, 0x3C00, 0xBC00, 0x0001, 0x8001, 0x03FF, 0x7BFF,
                                    0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x3555, 0x0400, 0x7FFF};
  for (int i = 0; i < kCount; ++i) in.halfs.push_back(i < 16 ? half_specials[i] : static_cast<uint16_t>(rng() & 0x7BFF));
  return in;
}

uint64_t u32(int32_t v) { return static_cast<uint32_t>(v); }
uint64_t u32f(float v) { return std::bit_cast<uint32_t>(v); }
uint64_t u64(int64_t v) { return static_cast<uint64_t>(v); }
int32_t wrap(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }
float x86_min(float a, float b) { return a < b ? a : b; }
float x86_max(float a, float b) { return a > b ? a : b; }
int32_t x86_truncate(float v) {
  return std::isnan(v) || v >= 2147483648.0f || v < -2147483648.0f ? INT32_MIN : static_cast<int32_t>(v);
}
int64_t sra64(int64_t v, int64_t n) { return v >> std::min<int64_t>(n, 63); }
float half_to_float(uint16_t h) { return lowp_decode(LowpType::Fp16, h); }

// The scalar statement of every primitive, for a family of `lanes` lanes.
Results expected(const Inputs& in, int lanes) {
  Results e;
  e["lanes"] = {static_cast<uint64_t>(lanes)};
  auto each = [&](const std::string& name, auto f) {
    for (int i = 0; i < kCount; ++i) e[name].push_back(f(i));
  };
  const auto& a = in.a;
  const auto& b = in.b;
  const auto& n = in.counts;
  auto at = [](const auto& v, int i) { return v[static_cast<size_t>(i)]; };
  each("add", [&](int i) { return u32(wrap(int64_t{at(a, i)} + at(b, i))); });
  each("sub", [&](int i) { return u32(wrap(int64_t{at(a, i)} - at(b, i))); });
  each("mullo", [&](int i) { return u32(wrap(int64_t{at(a, i)} * at(b, i))); });
  each("min", [&](int i) { return u32(std::min(at(a, i), at(b, i))); });
  each("max", [&](int i) { return u32(std::max(at(a, i), at(b, i))); });
  each("max_u", [&](int i) { return std::max(u32(at(a, i)), u32(at(b, i))); });
  each("bit_and", [&](int i) { return u32(at(a, i) & at(b, i)); });
  each("bit_or", [&](int i) { return u32(at(a, i) | at(b, i)); });
  each("bit_xor", [&](int i) { return u32(at(a, i) ^ at(b, i)); });
  each("and_or", [&](int i) { return u32((at(a, i) & at(b, i)) | at(n, i)); });
  each("sllv", [&](int i) { return at(n, i) > 31 ? 0 : u32(wrap(int64_t{static_cast<uint32_t>(at(a, i))} << at(n, i))); });
  each("srlv", [&](int i) { return at(n, i) > 31 ? 0 : u32(static_cast<int32_t>(static_cast<uint32_t>(at(a, i)) >> at(n, i))); });
  each("srav", [&](int i) { return u32(at(a, i) >> std::min(at(n, i), 31)); });
  each("slli3", [&](int i) { return u32(wrap(int64_t{static_cast<uint32_t>(at(a, i))} << 3)); });
  each("srli5", [&](int i) { return u32(static_cast<int32_t>(static_cast<uint32_t>(at(a, i)) >> 5)); });
  each("srai7", [&](int i) { return u32(at(a, i) >> 7); });
  each("gather", [&](int i) { return u32(at(in.table, at(a, i) & 255)); });
  each("gt", [&](int i) { return uint64_t{at(a, i) > at(b, i)}; });
  each("eq", [&](int i) { return uint64_t{at(a, i) == (at(b, i) & 3)}; });
  each("select", [&](int i) { return u32(at(a, i) > at(b, i) ? at(a, i) : at(b, i)); });
  each("mask_or", [&](int i) { return uint64_t{at(a, i) > at(b, i) || at(n, i) == 0}; });
  each("mask_and", [&](int i) { return uint64_t{at(a, i) > at(b, i) && at(n, i) > 20}; });
  each("mask_and_not", [&](int i) { return uint64_t{at(a, i) > at(b, i) && !(at(n, i) > 20)}; });
  for (int o = 0; o < kCount; o += lanes) {
    bool any = false;
    int first = -1;
    for (int l = 0; l < lanes; ++l) {
      any = any || at(a, o + l) > at(a, o);
      if (first < 0 && at(a, o + l) > at(a, o + lanes / 2)) first = l;
    }
    e["any"].push_back(uint64_t{any});
    e["first"].push_back(u32(first));
    uint32_t hmax = 0;
    for (int l = 0; l < lanes; ++l) hmax = std::max(hmax, static_cast<uint32_t>(at(a, o + l)));
    e["hmax_u"].push_back(hmax);
  }
  // int64 lanes: lane i of the vectors is a64[i].
  const auto& a64 = in.a64;
  const auto& b64 = in.b64;
  const auto& n64 = in.counts64;
  auto each64 = [&](const std::string& name, auto f) {
    for (int i = 0; i < kCount / 2; ++i) {
      const int64_t v = f(i);
      e[name].push_back(u32(static_cast<int32_t>(static_cast<uint64_t>(v))));
      e[name].push_back(u32(static_cast<int32_t>(static_cast<uint64_t>(v) >> 32)));
    }
  };
  each64("add64", [&](int i) { return static_cast<int64_t>(static_cast<uint64_t>(at(a64, i)) + static_cast<uint64_t>(at(b64, i))); });
  each64("sub64", [&](int i) { return static_cast<int64_t>(static_cast<uint64_t>(at(a64, i)) - static_cast<uint64_t>(at(b64, i))); });
  each64("sllv64", [&](int i) { return static_cast<int64_t>(static_cast<uint64_t>(at(a64, i)) << at(n64, i)); });
  each64("srav64", [&](int i) { return sra64(at(a64, i), at(n64, i)); });
  each64("srli64_9", [&](int i) { return static_cast<int64_t>(static_cast<uint64_t>(at(a64, i)) >> 9); });
  for (int i = 0; i < kCount / 2; ++i) {
    e["min64"].push_back(u64(std::min(at(a64, i), at(b64, i))));
    e["max64"].push_back(u64(std::max(at(a64, i), at(b64, i))));
    e["if_zero64"].push_back(u64((at(a64, i) & 1) == 0 ? at(a64, i) : at(b64, i)));
    e["mul_even"].push_back(u64(int64_t{at(a, 2 * i)} * at(b, 2 * i)));
  }
  each("interleave_low", [&](int i) {
    const int64_t v = i % 2 == 0 ? at(a64, i / 2) : at(b64, i / 2);
    return u32(static_cast<int32_t>(static_cast<uint64_t>(v)));
  });
  for (int o = 0; o < kCount; o += lanes) {
    const int h = lanes / 2;
    for (int l = 0; l < h; ++l) {
      e["widen_half0"].push_back(u64(at(a, o + l)));
      e["load_widen_half"].push_back(u64(at(a, o + l)));
    }
    for (int l = 0; l < h; ++l) e["widen_half1"].push_back(u64(at(a, o + h + l)));
    // narrow_halves(a64 vector, b64 vector): the low halves of lo's lanes, then of hi's.
    for (int l = 0; l < h; ++l) e["narrow_halves"].push_back(u32(static_cast<int32_t>(static_cast<uint64_t>(at(a64, o / 2 + l)))));
    for (int l = 0; l < h; ++l) e["narrow_halves"].push_back(u32(static_cast<int32_t>(static_cast<uint64_t>(at(b64, o / 2 + l)))));
    for (int half = 0; half < 2; ++half)
      for (int l = 0; l < h; ++l) {
        const int k = at(a, o + half * h + l) & 255;
        const uint64_t pair = static_cast<uint32_t>(at(in.table, k)) | (uint64_t{static_cast<uint32_t>(at(in.table, k + 1))} << 32);
        e[half == 0 ? "gather_pairs0" : "gather_pairs1"].push_back(pair);
      }
  }
  each("lookup_hi16_64", [&](int i) { return uint64_t{at(in.table16, at(a, i) & 63)} << 16; });
  each("lookup_hi16_256", [&](int i) { return uint64_t{at(in.table16, at(a, i) & 255)} << 16; });
  const auto& x = in.x;
  const auto& y = in.y;
  each("fadd", [&](int i) { return u32f(at(x, i) + at(y, i)); });
  each("fsub", [&](int i) { return u32f(at(x, i) - at(y, i)); });
  each("fmul", [&](int i) { return u32f(at(x, i) * at(y, i)); });
  // One rounding (IEEE fusedMultiplyAdd); the inputs must tell it from two.
  each("ffma", [&](int i) { return u32f(std::fma(at(x, i), at(in.dots, i), at(in.dots2, i))); });
  int fused_differs = 0;
  for (int i = 0; i < kCount; ++i)
    fused_differs += std::fma(at(x, i), at(in.dots, i), at(in.dots2, i)) != at(x, i) * at(in.dots, i) + at(in.dots2, i);
  EXPECT_GE(fused_differs, 4) << "the inputs do not tell a fused multiply-add from a multiply and an add";
  each("fdiv", [&](int i) { return u32f(at(x, i) / at(y, i)); });
  each("fmin", [&](int i) { return u32f(x86_min(at(x, i), at(y, i))); });
  each("fmax", [&](int i) { return u32f(x86_max(at(x, i), at(y, i))); });
  each("round_even", [&](int i) { return u32f(std::nearbyint(at(x, i))); });
  each("truncate", [&](int i) { return u32(x86_truncate(at(x, i))); });
  each("to_float", [&](int i) { return u32f(static_cast<float>(at(a, i))); });
  each("fless", [&](int i) { return uint64_t{at(x, i) < at(y, i)}; });
  each("fnan", [&](int i) { return uint64_t{std::isnan(at(x, i))}; });
  each("fselect", [&](int i) { return u32f(at(x, i) < at(y, i) ? at(x, i) : at(y, i)); });
  each("load_halfs", [&](int i) { return u32f(half_to_float(at(in.halfs, i))); });
  // Storage types: the low bytes of b, widened, and stored back.
  auto storage = [&]<class Q>(const std::string& name, Q) {
    for (int o = 0; o < kCount; o += lanes) {
      const int64_t cnt = o / lanes % lanes;
      std::vector<Q> v;
      for (int l = 0; l < lanes; ++l) {
        Q q;
        std::memcpy(&q, &in.b[static_cast<size_t>(o + l)], sizeof q);
        v.push_back(q);
      }
      for (int l = 0; l < lanes; ++l) e["load_widen_" + name].push_back(u32(static_cast<int32_t>(v[static_cast<size_t>(l)])));
      for (int l = 0; l < lanes; ++l) e["load_widen_n_" + name].push_back(l < cnt ? u32(static_cast<int32_t>(v[static_cast<size_t>(l)])) : 0);
      for (int l = 0; l < lanes; ++l) e["store_narrow_" + name].push_back(u32(static_cast<int32_t>(v[static_cast<size_t>(l)])));
      for (int l = 0; l <= lanes; ++l)
        e["store_narrow_n_" + name].push_back(u32(static_cast<int32_t>(l < cnt ? v[static_cast<size_t>(l)] : static_cast<Q>(99))));
    }
  };
  storage("s8", int8_t{});
  storage("u8", uint8_t{});
  storage("s16", int16_t{});
  storage("u16", uint16_t{});
  storage("s32", int32_t{});
  for (int64_t c = -1; c <= lanes + 1; ++c) {
    for (int l = 0; l < lanes; ++l) e["first_lanes"].push_back(uint64_t{l < c});
    for (int l = 0; l < lanes; ++l) e["fload_n"].push_back(l < c ? u32f(at(x, l)) : u32f(0.0f));
    for (int l = 0; l < lanes; ++l) e["load_halfs_n"].push_back(l < c ? u32f(half_to_float(at(in.halfs, l))) : u32f(0.0f));
    for (int l = 0; l <= lanes; ++l) e["fstore_n"].push_back(l < c && l < lanes ? u32f(at(y, l)) : u32f(-7.0f));
  }
  return e;
}

// Results hold float lanes as their bit patterns.
bool is_nan_bits(uint64_t v) { return (v & 0x7F800000u) == 0x7F800000u && (v & 0x007FFFFFu) != 0 && v <= 0xFFFFFFFFu; }

// The arithmetic primitives, whose invalid operations make a new NaN (fmin/fmax/fselect
// pass an operand's bits through, which SIMDe reproduces).
bool commutes(const std::string& name) { return name == "fadd" || name == "fmul"; }

bool makes_nan(const std::string& name) {
  return name == "fadd" || name == "fsub" || name == "fmul" || name == "fdiv" || name == "fmadd";
}

struct Family {
  std::string name;
  lane_probe::Probe probe;
  bool runs;
};

std::vector<Family> families() {
#if defined(__x86_64__)
  return {{"avx2", lane_probe::avx2::probe, cpu_supports(Isa::Avx2)},
          {"avx512", lane_probe::avx512::probe, cpu_supports(Isa::Avx512)},
          {"avx512_simde", lane_probe::avx512_emulated::probe, true}};
#else
  return {};  // the lane headers are x86's (src/simd/lanes_avx2.h, lanes_avx512.h)
#endif
}

TEST(LanePrimitives, EveryFamilyMeetsTheScalarContractLaneByLane) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  const Inputs in = make_inputs();
  int checked = 0;
  for (const Family& f : families()) {
    if (!f.runs) continue;  // the family's own CPU is needed (its SIMDe copy runs anyway)
    const Results got = f.probe(in);
    const auto lanes = static_cast<int>(got.at("lanes").at(0));
    const Results want = expected(in, lanes);
    EXPECT_EQ(got.size(), want.size()) << f.name << ": the probe and the oracle name different primitives";
    for (const auto& [name, values] : want) {
      const auto it = got.find(name);
      ASSERT_NE(it, got.end()) << f.name << ": no result for " << name;
      ASSERT_EQ(it->second.size(), values.size()) << f.name << " " << name;
      for (size_t i = 0; i < values.size(); ++i) {
        // A NaN's sign and payload are the hardware's (Intel's pseudo-code: the invalid
        // operation gives the "QNaN floating-point indefinite", 0xFFC00000, which the oracle
        // gets from this CPU's own addss/mulss). SIMDe's portable code is plain C, whose NaN
        // depends on how GCC lowers it (at -O1, +0x7FC00000): on the emulated copy a NaN
        // lane must be a NaN, and only a native family is held to its bits.
        if (f.name.ends_with("_simde") && makes_nan(name) && is_nan_bits(values[i])) {
          ASSERT_TRUE(is_nan_bits(it->second[i])) << f.name << "::" << name << ", lane " << i;
          continue;
        }
        // Two NaN operands of an addition or a multiplication: the hardware returns its
        // first source's, but C++ lets the compiler order the operands of a commutative
        // operation (GCC at -O1 swaps them where -O3 does not), so either operand's NaN is
        // the primitive's contract.
        if (commutes(name) && i < in.x.size() && std::isnan(in.x[i]) && std::isnan(in.y[i])) {
          const uint64_t got_bits = it->second[i];
          ASSERT_TRUE(got_bits == u32f(in.x[i]) || got_bits == u32f(in.y[i]))
              << f.name << "::" << name << ", lane " << i << ": " << got_bits << " is neither operand's NaN";
          continue;
        }
        ASSERT_EQ(it->second[i], values[i]) << f.name << "::" << name << ", lane " << i;
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 1);
}

}  // namespace
}  // namespace fixq
