// The weight-only matmul kernels that promise the scalar kernel's bits (every family but
// AVX2, whose FMAs skip roundings within fixq/weightonly.h's bound) against the scalar kernel,
// bit for bit, on every path that runs them: natively and through SIMDe. Ragged shapes (m
// and n from 1 to 67: every row tile, column vector and panel remainder), the smallest and
// largest groups, act-order, a large layer, and extreme inputs: infinities, NaN,
// subnormals, signed zeros, products and sums that overflow. NaN compares equal to NaN:
// IEEE 754 leaves open which NaN payload an operation on two NaNs returns.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fixq/cpu.h"
#include "fixq/weightonly.h"
#include "gptq_fixture.h"
#include "weightonly/layout.h"
#include "support/kernel_paths.h"

namespace fixq {
namespace {

using gptq_test::Layer;

// Whether the family that runs the matmul on the active path promises the scalar's bits.
bool runs_bit_exact_kernel() {
  const Isa isa = weightonly_detail::registry().pick([](const weightonly_detail::PackedKernels& k) { return k.matmul; }).isa;
  return isa != Isa::Avx2;
}

bool same(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

// Runs every bit-exact path on (w, x) and compares with the scalar kernel; returns how
// many paths ran a kernel other than the scalar one.
int check_paths(const PackedWeights& w, const std::vector<float>& x, int64_t m, const std::string& what) {
  test::PathGuard guard;
  test::use_path(test::scalar_path());
  std::vector<float> ref(static_cast<size_t>(m * w.cols()));
  weight_only_matmul(x.data(), m, w, ref.data());
  int fast = 0;
  for (const test::KernelPath& path : test::fast_paths()) {
    test::use_path(path);
    if (!runs_bit_exact_kernel()) continue;
    ++fast;
    std::vector<float> y(ref.size(), 1234.5f);
    weight_only_matmul(x.data(), m, w, y.data());
    for (size_t i = 0; i < y.size(); ++i) {
      if (!same(y[i], ref[i])) {
        ADD_FAILURE() << path.name() << " " << what << " m " << m << ": element " << i << " (row " << i / w.cols()
                      << ", column " << i % w.cols() << ") is " << y[i] << " (0x" << std::hex
                      << std::bit_cast<uint32_t>(y[i]) << "), the scalar kernel gives " << ref[i] << " (0x"
                      << std::bit_cast<uint32_t>(ref[i]) << ")";
        return fast;
      }
    }
  }
  return fast;
}

std::vector<float> normal_x(int64_t count, std::mt19937& rng) {
  std::vector<float> x(static_cast<size_t>(count));
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (float& v : x) v = d(rng);
  return x;
}

std::string describe(int bits, int64_t k, int64_t n, int64_t groups, bool act_order) {
  return "int" + std::to_string(bits) + " k " + std::to_string(k) + " n " + std::to_string(n) + " groups " +
         std::to_string(groups) + (act_order ? " act-order" : "");
}

TEST(WeightOnlyMatmulBitExact, EveryRowCountFrom1To67) {
  std::mt19937 rng(51);
  for (const int bits : {2, 4, 8}) {
    const int64_t per = 32 / bits, k = 4 * 2 * per, n = 67;
    const Layer l = gptq_test::random_layer(bits, k, n, 4, bits == 4, rng);
    const PackedWeights w = gptq_test::to_packed(l);
    for (int64_t m = 1; m <= 67; ++m) {
      const int fast = check_paths(w, normal_x(m * k, rng), m, describe(bits, k, n, 4, bits == 4));
      ASSERT_GT(fast, 0) << "no path ran a bit-exact fast kernel";
    }
  }
}

TEST(WeightOnlyMatmulBitExact, EveryColumnCountFrom1To67) {
  std::mt19937 rng(52);
  for (const int bits : {2, 4, 8}) {
    const int64_t per = 32 / bits, k = 3 * per;
    for (int64_t n = 1; n <= 67; ++n) {
      // Groups of one word row (the smallest a group can be), act-order on odd n.
      const Layer l = gptq_test::random_layer(bits, k, n, 3, n % 2 == 1, rng);
      const PackedWeights w = gptq_test::to_packed(l);
      for (const int64_t m : {1, 2, 3, 4, 5, 8, 9, 13})
        check_paths(w, normal_x(m * k, rng), m, describe(bits, k, n, 3, n % 2 == 1));
    }
  }
}

TEST(WeightOnlyMatmulBitExact, LargeLayersAndOneGroup) {
  std::mt19937 rng(53);
  for (const int bits : {2, 4, 8}) {
    for (const int64_t groups : {int64_t{1}, int64_t{8}}) {
      const int64_t k = 1024, n = 300;
      const Layer l = gptq_test::random_layer(bits, k, n, groups, groups > 1, rng);
      const PackedWeights w = gptq_test::to_packed(l);
      for (const int64_t m : {1, 4, 7, 8, 21}) check_paths(w, normal_x(m * k, rng), m, describe(bits, k, n, groups, groups > 1));
    }
  }
}

// x from every kind of float (uniform bit patterns: NaN, infinities, subnormals, huge
// values), signed zeros, scales from 2^-140 (subnormal) to 2^100 and the extreme codes and
// zero points: products and group sums overflow to infinity, infinities cancel to NaN,
// subnormal products round, and the signs of zero results must match.
TEST(WeightOnlyMatmulBitExact, ExtremeValues) {
  std::mt19937 rng(54);
  for (const int bits : {2, 4, 8}) {
    const int64_t per = 32 / bits, k = 8 * per, n = 70;
    Layer l = gptq_test::random_layer(bits, k, n, 4, true, rng);
    const uint32_t top = (1u << bits) - 1;
    for (size_t i = 0; i < l.q.size(); ++i) l.q[i] = i % 3 == 0 ? top : (i % 3 == 1 ? 0 : l.q[i]);
    for (size_t i = 0; i < l.zeros.size(); ++i) l.zeros[i] = i % 4 == 0 ? 0 : (i % 4 == 1 ? static_cast<int32_t>(top) : l.zeros[i]);
    for (size_t i = 0; i < l.scales.size(); ++i) l.scales[i] = std::ldexp(1.0f + static_cast<float>(i % 5) / 8.0f, static_cast<int>(rng() % 241) - 140);
    const PackedWeights w = gptq_test::to_packed(l);
    for (const int64_t m : {1, 3, 9}) {
      std::vector<float> x(static_cast<size_t>(m * k));
      for (float& v : x) {
        switch (rng() % 5) {
          case 0: v = std::bit_cast<float>(static_cast<uint32_t>(rng())); break;  // anything, NaN included
          case 1: v = rng() % 2 ? 0.0f : -0.0f; break;
          case 2: v = std::bit_cast<float>(static_cast<uint32_t>(rng() % 0x800000u) | (rng() % 2 ? 0x80000000u : 0u)); break;
          case 3: v = std::ldexp(rng() % 2 ? 1.5f : -1.75f, static_cast<int>(rng() % 60) + 68); break;  // sums overflow
          default: v = static_cast<float>(static_cast<int>(rng() % 9) - 4); break;
        }
      }
      check_paths(w, x, m, describe(bits, k, n, 4, true) + " extreme");
      // Rows of zeros only: every result is a signed zero, or NaN where no term is.
      std::vector<float> zeros(x.size());
      for (size_t i = 0; i < zeros.size(); ++i) zeros[i] = i % 3 ? -0.0f : 0.0f;
      check_paths(w, zeros, m, describe(bits, k, n, 4, true) + " signed zeros");
      // Infinities: inf * 0 and inf - inf give NaN, the other columns stay infinite.
      std::vector<float> inf(x.size(), 1.0f);
      for (size_t i = 0; i < inf.size(); i += 7) inf[i] = i % 2 ? INFINITY : -INFINITY;
      check_paths(w, inf, m, describe(bits, k, n, 4, true) + " infinities");
    }
  }
}

}  // namespace
}  // namespace fixq
