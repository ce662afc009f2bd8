// The vectorised GRU loop against the reference loop (q_step_intonly.cpp): the same
// integers, hence the same output bits, for every configuration the acceptance lists —
// int8 and int16, power-of-two and multiplier scales, batch 1 and 16, two layers,
// bidirectional, ragged lengths, hidden sizes that are not whole vectors — and for inputs
// and states far outside the calibrated ranges, where every operator saturates.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fixq/cpu.h"
#include "fixq/gemm.h"
#include "fixq/qgru.h"
#include "gru/q_s8_gemm.h"
#include "gru/float_test_util.h"
#include "support/expect.h"

namespace fixq {
namespace {


std::vector<float> random_input(int64_t n, uint32_t seed, float sigma) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = d(rng);
  return x;
}

struct Case {
  std::string name;
  int64_t C, H, layers;
  bool bidi;
  int bits;
  ScaleKind scales;
  CalibMethod method;
};

QuantizedGru quantize(const GruModel& m, const Case& c, int64_t T, int64_t B) {
  const GruQuantConfig cfg = c.bits == 8 ? GruQuantConfig::int8(c.scales) : GruQuantConfig::int16(c.scales);
  ObserverConfig oc;
  oc.method = c.method;
  GruCalibrator cal(m, cfg, oc);
  for (uint32_t s = 0; s < 3; ++s) {
    const std::vector<float> x = random_input(T * B * m.input_size, 10 + s, 1.0f);
    cal.observe(x.data(), Shape{T, B, m.input_size});
  }
  return QuantizedGru(m, cal.finalize());
}

GruOutput run(const QuantizedGru& q, Isa isa, const std::vector<float>& x, const Shape& shape,
              const GruRunOptions& opt) {
  test::IsaGuard guard;
  set_isa_override(isa);
  return q.forward(x.data(), shape, opt);
}

void expect_same_bits(const std::vector<float>& a, const std::vector<float>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  size_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  EXPECT_EQ(differ, 0u) << what << ": " << differ << " of " << a.size() << " values differ";
}

class FastLoop : public ::testing::TestWithParam<Case> {};

TEST_P(FastLoop, EqualsReferenceBitForBit) {
  const Case& c = GetParam();
  if (active_isa() == Isa::Scalar) GTEST_SKIP() << "this CPU has no AVX2: only the reference loop exists here";
  const GruModel m = gru_test::torch_init_model(c.C, c.H, c.layers, c.bidi, 7);
  const QuantizedGru q = quantize(m, c, 12, 4);
  // The fast loop must really run: a test that silently fell back would prove nothing.
  for (bool v : q.vectorized_cells()) ASSERT_TRUE(v) << c.name << ": a cell has no fast plan";

  for (int64_t B : {1, 16}) {
    const int64_t T = 9;
    for (float sigma : {1.0f, 40.0f}) {  // 40: far outside calibration, saturating everywhere
      const std::vector<float> x = random_input(T * B * c.C, 77 + static_cast<uint32_t>(B), sigma);
      std::vector<float> h0 = random_input(c.layers * (c.bidi ? 2 : 1) * B * c.H, 5, sigma);
      std::vector<int64_t> lengths;
      for (int64_t b = 0; b < B; ++b) lengths.push_back(b == 0 ? T : (b * 5) % (T + 1));  // ragged, some 0
      GruRunOptions opt;
      opt.h0 = h0.data();
      opt.lengths = lengths;
      const std::string what = c.name + " B=" + std::to_string(B) + " sigma=" + std::to_string(sigma);
      const GruOutput ref = run(q, Isa::Scalar, x, Shape{T, B, c.C}, opt);
      const GruOutput fast = run(q, active_isa(), x, Shape{T, B, c.C}, opt);
      expect_same_bits(ref.y, fast.y, what + " y");
      expect_same_bits(ref.h_n, fast.h_n, what + " h_n");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Configs, FastLoop,
    ::testing::Values(Case{"int8_pow2", 13, 24, 2, true, 8, ScaleKind::PowerOfTwo, CalibMethod::MinMax},
                      Case{"int8_multiplier", 13, 24, 2, true, 8, ScaleKind::Float, CalibMethod::MinMax},
                      Case{"int16_pow2", 13, 21, 2, true, 16, ScaleKind::PowerOfTwo, CalibMethod::MinMax},
                      Case{"int16_multiplier", 13, 21, 2, true, 16, ScaleKind::Float, CalibMethod::MinMax},
                      Case{"int8_pow2_percentile", 32, 64, 1, false, 8, ScaleKind::PowerOfTwo, CalibMethod::Percentile},
                      Case{"int8_multiplier_mse", 16, 40, 2, false, 8, ScaleKind::Float, CalibMethod::Mse},
                      Case{"int16_pow2_h256", 64, 256, 1, false, 16, ScaleKind::PowerOfTwo, CalibMethod::MinMax}),
    [](const auto& info) { return info.param.name; });

// Streaming steps take the fast loop one frame at a time and must agree with it too.
TEST(FastLoop, StreamEqualsReference) {
  if (active_isa() == Isa::Scalar) GTEST_SKIP() << "no AVX2";
  const Case c{"s", 8, 17, 2, false, 8, ScaleKind::Float, CalibMethod::MinMax};
  const GruModel m = gru_test::torch_init_model(c.C, c.H, c.layers, false, 3);
  const QuantizedGru q = quantize(m, c, 10, 2);
  const std::vector<float> x = random_input(6 * 2 * c.C, 4, 2.0f);
  std::vector<std::vector<float>> outs[2];
  for (int pass = 0; pass < 2; ++pass) {
    test::IsaGuard guard;
    set_isa_override(pass == 0 ? Isa::Scalar : active_isa());
    QuantizedGruStream s(q, 2);
    for (int64_t t = 0; t < 6; ++t) outs[pass].push_back(s.step(x.data() + t * 2 * c.C));
  }
  for (size_t t = 0; t < outs[0].size(); ++t) expect_same_bits(outs[0][t], outs[1][t], "step " + std::to_string(t));
}

// With two threads allowed, the directions of a bidirectional layer run concurrently:
// the outputs must not change.
TEST(FastLoop, BidirectionalOnTwoThreadsEqualsOneThread) {
  const Case c{"bidi", 128, 128, 2, true, 8, ScaleKind::PowerOfTwo, CalibMethod::MinMax};
  const GruModel m = gru_test::torch_init_model(c.C, c.H, c.layers, true, 9);
  const QuantizedGru q = quantize(m, c, 8, 4);
  const int64_t T = 20, B = 16;
  const std::vector<float> x = random_input(T * B * c.C, 6, 1.0f);
  GruOutput out[2];
  for (int threads : {1, 2}) {
    set_gemm_threads(threads);
    out[threads - 1] = q.forward(x.data(), Shape{T, B, c.C});
  }
  set_gemm_threads(0);
  expect_same_bits(out[0].y, out[1].y, "y");
  expect_same_bits(out[0].h_n, out[1].h_n, "h_n");
}

}  // namespace
}  // namespace fixq

namespace fixq::gru_detail {
namespace {

// The int8 x int8 kernel (vpmaddubsw on |x| and sign-adjusted weights) against a plain
// int64 sum: ragged shapes, weights of -128 (the correction list) and activations of -128
// (|x| = 128, the largest pair 2 * 128 * 127 that must not saturate).
TEST(S8Gemm, EqualsPlainSumsOnRaggedShapesAndExtremes) {
  std::mt19937 rng(11);
  for (auto [n, k] : {std::pair<int64_t, int64_t>{1, 1}, {7, 3}, {8, 4}, {17, 33}, {48, 64}, {75, 130}, {24, 2051}}) {
    for (int extreme = 0; extreme < 2; ++extreme) {
      std::uniform_int_distribution<int> d(-128, 127), coin(0, 3);
      std::vector<int32_t> w(static_cast<size_t>(n * k));
      for (int32_t& v : w) v = extreme && coin(rng) != 0 ? -128 : d(rng);
      const S8Weights packed = S8Weights::pack(w, n, k);
      for (int64_t rows : {1, 2, 3, 4, 5, 9}) {
        std::vector<int8_t> x(static_cast<size_t>(rows * packed.k4), 0);
        for (int64_t m = 0; m < rows; ++m)
          for (int64_t c = 0; c < k; ++c)
            x[static_cast<size_t>(m * packed.k4 + c)] = static_cast<int8_t>(extreme ? (coin(rng) ? -128 : 127) : d(rng));
        const int64_t ldc = n + 3;
        std::vector<int32_t> ref(static_cast<size_t>(rows * ldc), -1), fast = ref;
        s8_gemm_scalar(packed, x.data(), packed.k4, rows, ref.data(), ldc);
        if (active_isa() != Isa::Scalar) s8_gemm_avx2(packed, x.data(), packed.k4, rows, fast.data(), ldc);
        for (int64_t m = 0; m < rows; ++m)
          for (int64_t r = 0; r < n; ++r) {
            int64_t s = 0;
            for (int64_t c = 0; c < k; ++c) s += int64_t{x[static_cast<size_t>(m * packed.k4 + c)]} * w[static_cast<size_t>(r * k + c)];
            ASSERT_EQ(ref[static_cast<size_t>(m * ldc + r)], s) << "scalar n=" << n << " k=" << k << " m=" << m << " r=" << r;
            if (active_isa() != Isa::Scalar)
              ASSERT_EQ(fast[static_cast<size_t>(m * ldc + r)], s) << "avx2 n=" << n << " k=" << k << " m=" << m << " r=" << r;
          }
        // Columns past N are not written.
        for (int64_t m = 0; m < rows; ++m)
          for (int64_t r = n; r < ldc; ++r) ASSERT_EQ(fast[static_cast<size_t>(m * ldc + r)], -1);
      }
    }
  }
}

}  // namespace
}  // namespace fixq::gru_detail
