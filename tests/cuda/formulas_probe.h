// The formula headers (fixq/host_device.h) evaluated over a reproducible battery of
// inputs by one FIXQ_HOST_DEVICE function: tests/gru/formulas_probe_test.cpp runs it on
// the host against independent oracles, and formulas_probe.cu instantiates the very same
// function in a __global__ kernel, which nvcc must compile (tests/cuda/nvcc_compile_test.sh;
// no GPU is needed to build it).
#pragma once

#include <cstdint>

#include "fixq/arith.h"
#include "fixq/host_device.h"
#include "gemm/epilogue_formulas.h"
#include "gru/int/lut_eval.h"
#include "gru/int/unit_constants.h"

namespace fixq::probe {

// splitmix64: the same pseudo-random stream on every processor.
FIXQ_HOST_DEVICE constexpr uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A signed value of a random magnitude: up to `bits` bits, both signs.
FIXQ_HOST_DEVICE constexpr int64_t value(uint64_t r, int bits) {
  const int b = static_cast<int>(r % static_cast<uint64_t>(bits)) + 1;
  const int64_t mag = static_cast<int64_t>((r >> 8) & ((uint64_t{1} << (b - 1)) - 1));
  return (r >> 63) ? -mag - 1 : mag;
}

// The scale of case i: a normalized 31-bit multiplier or a power of two, shift in
// [-20, 90] (the pow2 and multiplier ranges of FixedPointScale and beyond).
FIXQ_HOST_DEVICE constexpr FixedPointScale scale(uint64_t r) {
  FixedPointScale s;
  s.shift = static_cast<int>(r % 111) - 20;
  s.m = (r >> 40) & 1 ? 1 : static_cast<int32_t>((int64_t{1} << 30) + static_cast<int64_t>((r >> 8) & 0x3FFFFFFF));
  return s;
}

// What the tables and the unit update read (pointers into the evaluating processor's
// memory).
struct Tables {
  gru_detail::LutView direct, interpolated;  // an 8-bit input's table, a 16-bit input's knots
  gru_detail::UnitConstants unit;          // H = 1
};

inline constexpr int kOutputs = 9;

// Case i's outputs, kOutputs int64 values at out.
FIXQ_HOST_DEVICE inline void run_case(uint64_t i, const Tables& t, int64_t* out) {
  const uint64_t r0 = mix(i), r1 = mix(r0), r2 = mix(r1), r3 = mix(r2);
  const FixedPointScale s = scale(r0);
  const int64_t x = value(r1, 63);
  out[0] = s.apply(x);
  const IntRange range{static_cast<int32_t>(-(int64_t{1} << 15)), static_cast<int32_t>((int64_t{1} << 15) - 1)};
  const int32_t zp = static_cast<int32_t>(value(r2, 8));
  out[1] = requantize(x, s, zp, range);
  const Rescale rescale{s, zp, static_cast<int32_t>(value(r3, 8)), range};
  out[2] = rescale(static_cast<int32_t>(value(r2 >> 3, 32)));
  const QuantizedMul mul{s, zp, -zp, 3, range};
  out[3] = mul(static_cast<int32_t>(value(r3, 32)), static_cast<int32_t>(value(r1 >> 5, 32)));
  out[4] = gru_detail::lookup_exact(t.direct, static_cast<int32_t>(value(r1, 8)));
  out[5] = gru_detail::lookup_exact(t.interpolated, static_cast<int32_t>(value(r2, 16)));
  const int64_t acc = value(r2, 47), colsum = value(r3, 40);
  const int64_t v = gemm_detail::compensated(acc, static_cast<int32_t>(value(r1, 9)), colsum);
  out[6] = gemm_detail::requant_element(v, static_cast<int32_t>(value(r0 >> 7, 31)), s.shift > 0 ? s : FixedPointScale{},
                                        zp, range);
  const float f = gemm_detail::dequant_element_bias(v, 0x1p-7f * static_cast<float>(1 + (r1 & 255)),
                                                    0x1p-9f * static_cast<float>(1 + (r2 & 255)),
                                                    static_cast<float>(value(r3, 20)));
  out[7] = static_cast<int64_t>(__builtin_bit_cast(uint32_t, f));
  auto q8 = [](uint64_t r) { return static_cast<int32_t>(value(r, 8)); };
  out[8] = gru_detail::update_unit_exact(t.unit, 0, q8(r0), q8(r1), q8(r2), q8(r3), q8(r0 >> 11), q8(r1 >> 11), q8(r2 >> 11));
}

}  // namespace fixq::probe

// formulas_probe.cu: cases [first, first + count) on the current GPU, count * kOutputs
// values into out (device memory). Only test_cuda links it.
void fixq_launch_formulas_probe(uint64_t first, int count, const fixq::probe::Tables& tables, int64_t* out);
