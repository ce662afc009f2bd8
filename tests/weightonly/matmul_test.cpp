// The weight-only matmul, every instruction set, on ragged shapes (every tile and panel
// remainder), act-order layers and extreme magnitudes: within fixq/weightonly.h's documented
// bound of the exact result (long double: x * (q - z) * s needs 57 bits), and within the
// sum of both bounds of dequantize-then-float-GEMM.
#include <gtest/gtest.h>

#include <cstring>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "fixq/cpu.h"
#include "fixq/error.h"
#include "fixq/weightonly.h"
#include "weightonly/layout.h"
#include "support/kernel_paths.h"
#include "support/registry_checks.h"
#include "gptq_fixture.h"

namespace fixq {
namespace {

using gptq_test::Layer;


double gamma(int64_t j) {
  const double u = 0x1p-24;
  return static_cast<double>(j) * u / (1.0 - static_cast<double>(j) * u);
}

struct Exact {
  std::vector<long double> sum;  // [m, n]: sum_k x[k] (q - z) s
  std::vector<long double> abs;  // [m, n]: sum_k |x[k] (q - z) s|
};

Exact exact_product(const Layer& l, const std::vector<float>& x, int64_t m) {
  Exact e{std::vector<long double>(static_cast<size_t>(m * l.n)), std::vector<long double>(static_cast<size_t>(m * l.n))};
  for (int64_t i = 0; i < m; ++i)
    for (int64_t k = 0; k < l.k; ++k) {
      const int32_t g = l.g_idx[static_cast<size_t>(k)];
      const long double xv = x[static_cast<size_t>(i * l.k + k)];
      for (int64_t c = 0; c < l.n; ++c) {
        const long double a = xv *
                              (static_cast<long double>(l.q[static_cast<size_t>(k * l.n + c)]) -
                               l.zeros[static_cast<size_t>(g * l.n + c)]) *
                              l.scales[static_cast<size_t>(g * l.n + c)];
        e.sum[static_cast<size_t>(i * l.n + c)] += a;
        e.abs[static_cast<size_t>(i * l.n + c)] += std::fabs(a);
      }
    }
  return e;
}

// dequantize, then a plain float32 GEMM summing over k in order.
std::vector<float> dequantize_then_gemm(const PackedWeights& w, const std::vector<float>& x, int64_t m) {
  std::vector<float> wf(static_cast<size_t>(w.rows() * w.cols())), y(static_cast<size_t>(m * w.cols()), 0.0f);
  w.dequantize(wf.data());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t k = 0; k < w.rows(); ++k)
      for (int64_t c = 0; c < w.cols(); ++c)
        y[static_cast<size_t>(i * w.cols() + c)] += x[static_cast<size_t>(i * w.rows() + k)] * wf[static_cast<size_t>(k * w.cols() + c)];
  return y;
}

struct Shape3 {
  int bits;
  int64_t m, k, n, groups;
  bool act_order;
};

void check_layer(const Layer& l, const std::vector<float>& x, int64_t m) {
  const PackedWeights w = gptq_test::to_packed(l);
  const Exact e = exact_product(l, x, m);
  const std::vector<float> ref = dequantize_then_gemm(w, x, m);
  const double bound = gamma(l.k / l.groups + l.groups + 1), ref_bound = gamma(l.k + 1);
  test::PathGuard guard;
  std::vector<float> scalar;
  for (const test::KernelPath& path : test::kernel_paths()) {
    test::use_path(path);
    std::vector<float> y(static_cast<size_t>(m * l.n), NAN);
    weight_only_matmul(x.data(), m, w, y.data());
    // Every family computes the scalar kernel's operations in its order: the same bits.
    if (path.isa == Isa::Scalar) scalar = y;
    ASSERT_EQ(std::memcmp(y.data(), scalar.data(), y.size() * sizeof(float)), 0)
        << path.name() << " differs from the scalar kernel: bits " << l.bits << " m " << m << " k " << l.k << " n " << l.n;
    for (size_t i = 0; i < y.size(); ++i) {
      const long double slack = e.abs[i] * 0x1p-50L;
      ASSERT_LE(std::fabs(y[i] - e.sum[i]), bound * e.abs[i] + slack)
          << path.name() << " bits " << l.bits << " m " << m << " k " << l.k << " n " << l.n << " element " << i;
      ASSERT_LE(std::fabs(ref[i] - e.sum[i]), ref_bound * e.abs[i] + slack) << "the reference GEMM, element " << i;
      ASSERT_LE(std::fabs(y[i] - ref[i]), (bound + ref_bound) * e.abs[i] + 2 * slack) << path.name() << " vs GEMM";
    }
  }
}

std::vector<float> random_x(int64_t count, std::mt19937& rng, double spread) {
  std::vector<float> x(static_cast<size_t>(count));
  std::normal_distribution<double> d(0.0, 1.0);
  for (float& v : x) v = static_cast<float>(d(rng) * std::pow(10.0, spread * (static_cast<double>(rng() % 1000) / 500.0 - 1.0)));
  return x;
}

TEST(WeightOnlyMatmul, WithinTheDocumentedBoundOnRaggedShapes) {
  std::mt19937 rng(41);
  const std::vector<Shape3> shapes = {
      {4, 1, 128, 32, 1, false},  {4, 1, 256, 33, 2, false}, {4, 2, 64, 1, 8, false},   {4, 3, 128, 100, 4, true},
      {4, 5, 64, 64, 2, true},    {4, 16, 128, 40, 1, false}, {4, 17, 96, 31, 3, true}, {2, 1, 128, 64, 2, false},
      {2, 4, 64, 17, 4, true},    {2, 7, 256, 32, 1, false},  {8, 1, 64, 65, 16, true}, {8, 6, 96, 7, 3, false},
      {8, 16, 128, 96, 2, true},  {8, 2, 32, 32, 8, false}};
  for (const Shape3& s : shapes) {
    const Layer l = gptq_test::random_layer(s.bits, s.k, s.n, s.groups, s.act_order, rng);
    check_layer(l, random_x(s.m * s.k, rng, 1.0), s.m);
  }
}

TEST(WeightOnlyMatmul, ExtremeMagnitudesStayWithinTheBound) {
  std::mt19937 rng(42);
  Layer l = gptq_test::random_layer(4, 128, 40, 2, true, rng);
  for (size_t i = 0; i < l.scales.size(); ++i) l.scales[i] = std::ldexp(1.0f + static_cast<float>(i % 7) / 8.0f, static_cast<int>(i % 40) - 20);
  for (size_t i = 0; i < l.q.size(); i += 5) l.q[i] = i % 2 ? 15 : 0;  // extremes of the code range
  check_layer(l, random_x(3 * 128, rng, 12.0), 3);  // |x| from 1e-12 to 1e12, cancellation included
}

TEST(WeightOnlyMatmul, IsExactWhenEveryStepIs) {
  // Small integers times power-of-two scales: every product and sum is exact in float32,
  // so every path must give the exact result, whatever its order.
  std::mt19937 rng(43);
  Layer l = gptq_test::random_layer(4, 64, 33, 2, true, rng);
  for (float& s : l.scales) s = 0.25f;
  std::vector<float> x(static_cast<size_t>(5 * 64));
  for (float& v : x) v = static_cast<float>(static_cast<int>(rng() % 17) - 8);
  const Exact e = exact_product(l, x, 5);
  const PackedWeights w = gptq_test::to_packed(l);
  test::PathGuard guard;
  for (const test::KernelPath& path : test::kernel_paths()) {
    test::use_path(path);
    std::vector<float> y(5 * 33);
    weight_only_matmul(x.data(), 5, w, y.data());
    for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(static_cast<long double>(y[i]), e.sum[i]) << path.name() << " " << i;
  }
}

TEST(WeightOnlyMatmul, NanAndInfinityPropagate) {
  std::mt19937 rng(44);
  const Layer l = gptq_test::random_layer(2, 64, 8, 1, false, rng);
  const PackedWeights w = gptq_test::to_packed(l);
  test::PathGuard guard;
  for (const test::KernelPath& path : test::kernel_paths()) {
    test::use_path(path);
    std::vector<float> x(2 * 64, 1.0f), y(2 * 8);
    x[5] = NAN;
    weight_only_matmul(x.data(), 2, w, y.data());
    for (int c = 0; c < 8; ++c) {
      EXPECT_TRUE(std::isnan(y[static_cast<size_t>(c)])) << path.name();
      EXPECT_FALSE(std::isnan(y[static_cast<size_t>(8 + c)])) << path.name();
    }
  }
}

TEST(WeightOnlyMatmulBadInput, CountsAndPointers) {
  std::mt19937 rng(45);
  const PackedWeights w = gptq_test::to_packed(gptq_test::random_layer(4, 64, 8, 1, false, rng));
  std::vector<float> x(64), y(8);
  EXPECT_THROW(weight_only_matmul(x.data(), -1, w, y.data()), Error);
  EXPECT_THROW(weight_only_matmul(nullptr, 1, w, y.data()), Error);
  EXPECT_THROW(weight_only_matmul(x.data(), 1, w, nullptr), Error);
  EXPECT_NO_THROW(weight_only_matmul(nullptr, 0, w, nullptr));
}

// The comparisons above ran each family's own kernel.
TEST(PackedMatmul, EveryInstructionSetIsExercised) {
  test::expect_complete(weightonly_detail::registry());
  test::expect_each_family_runs_its_own(weightonly_detail::registry(),
                                        [](const weightonly_detail::PackedKernels& k) { return k.matmul; }, "matmul");
}

}  // namespace
}  // namespace fixq
