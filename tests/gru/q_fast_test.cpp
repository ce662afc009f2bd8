// The vectorised GRU loop against the reference loop (gru/int/step_intonly.cpp): the same
// integers, hence the same output bits, for every configuration the acceptance lists —
// int8 and int16, power-of-two and multiplier scales, batch 1 and 16, two layers,
// bidirectional, ragged lengths, hidden sizes that are not whole vectors — and for inputs
// and states far outside the calibrated ranges, where every operator saturates.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cpu/cache.h"
#include "fixq/cpu.h"
#include "fixq/gemm.h"
#include "fixq/qgru.h"
#include "gru/float_test_util.h"
#include "support/expect.h"
#include "gru/int/fast/loop.h"
#include "gru/int/plan.h"
#include "support/kernel_paths.h"
#include "support/registry_checks.h"

namespace fixq {
namespace {

// Whether this build has lane kernels for the fast GRU step (src/gru/int/fast/registry.cpp:
// the x86-64 families only, so far).
constexpr bool kFastGruBuilt = std::string_view(FIXQ_TARGET_ARCH) == "x86_64";


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
  // Weights of one magnitude with random signs: their int8 images are all +-127, so rows
  // longer than 516 need int64 accumulators with 16-bit activations (32768 * 127 * K).
  bool flat = false;
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

GruOutput run(const QuantizedGru& q, const test::KernelPath& path, const std::vector<float>& x, const Shape& shape,
              const GruRunOptions& opt) {
  test::PathScope scope(path);
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
  GruModel m = gru_test::torch_init_model(c.C, c.H, c.layers, c.bidi, 7);
  if (c.flat)
    for (GruCell& cell : m.cells)
      for (std::vector<float>* w : {&cell.W, &cell.R})
        for (float& v : *w) v = v < 0 ? -127.0f / 2048 : 127.0f / 2048;  // 127 LSB of 2^-11 (pow2 or not)
  const QuantizedGru q = quantize(m, c, 12, 4);
  // The fast loop must really run: a test that silently fell back would prove nothing.
  if (!kFastGruBuilt) GTEST_SKIP() << "the fast GRU step has lane kernels on x86-64 only; this " FIXQ_TARGET_ARCH " build runs the reference loop, which the reference and oracle tests check";
  for (bool v : q.vectorized_cells()) ASSERT_TRUE(v) << c.name << ": a cell has no fast plan";
  if (c.flat) {  // and the int64 accumulators with it: some row's sum can leave int32
    const GruCellConstants k = q.cell_constants(0);
    auto max_row = [](const std::vector<int32_t>& w, int64_t cols) {
      int64_t best = 0;
      for (size_t r = 0; r < w.size() / static_cast<size_t>(cols); ++r) {
        int64_t sum = 0;
        for (int64_t j = 0; j < cols; ++j) sum += std::abs(w[r * static_cast<size_t>(cols) + static_cast<size_t>(j)]);
        best = std::max(best, sum);
      }
      return best;
    };
    ASSERT_GT(32768 * std::max(max_row(k.q_w, c.C), max_row(k.q_r, c.H)), int64_t{INT32_MAX}) << c.name;
  }

  // Power-of-two plans with int32 accumulators requantize the GEMMs in the fused form
  // (gru/int/fast/loop.h), and int8 ones evaluate the update's scales as shifts: the comparisons below
  // run those forms for them, the general forms for the rest.
  for (size_t cell = 0; cell < q.vectorized_cells().size(); ++cell) {
    const GruCellConstants k = q.cell_constants(cell);
    const int64_t C = cell < (c.bidi ? 2u : 1u) ? c.C : c.H * (c.bidi ? 2 : 1);
    const gru_detail::CellPlan p = gru_detail::build_plan(q.params().cells[cell], q.params().config, C, c.H, k.q_w,
                                                          k.q_r, k.q_bx, k.q_br);
    ASSERT_NE(p.fast, nullptr) << c.name;
    const bool pow2 = c.scales == ScaleKind::PowerOfTwo;
    EXPECT_EQ(p.fast->wx.fused.has_value(), pow2 && !p.fast->acc64_x) << c.name << " cell " << cell << " Wx";
    EXPECT_EQ(p.fast->rh.fused.has_value(), pow2 && !p.fast->acc64_h) << c.name << " cell " << cell << " Rh";
    if (c.bits == 8) {
      EXPECT_FALSE(p.fast->acc64_x || p.fast->acc64_h) << c.name;
      // int8 power-of-two plans: every ratio of the update is an add-then-shift.
      EXPECT_EQ(p.fast->shifts, pow2) << c.name << " cell " << cell;
      // and their every intermediate fits the int16 lanes of the AVX512_VBMI family.
      EXPECT_EQ(p.fast->lanes16.has_value(), pow2) << c.name << " cell " << cell;
    }
    // 16-bit operators' interpolated tables are read from their every value: the
    // comparisons below run those lookups (8-bit tables are direct and keep their entries).
    for (const auto& t : p.fast->lut16) EXPECT_EQ(t.empty(), c.bits == 8) << c.name << " cell " << cell;
  }

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
      const GruOutput ref = run(q, test::scalar_path(), x, Shape{T, B, c.C}, opt);
      for (const test::KernelPath& path : test::fast_paths()) {
        const GruOutput fast = run(q, path, x, Shape{T, B, c.C}, opt);
        expect_same_bits(ref.y, fast.y, what + " " + path.name() + " y");
        expect_same_bits(ref.h_n, fast.h_n, what + " " + path.name() + " h_n");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Configs, FastLoop,
    ::testing::Values(Case{"int8_pow2", 13, 24, 2, true, 8, ScaleKind::PowerOfTwo, CalibMethod::MinMax},
                      Case{"int8_multiplier", 13, 24, 2, true, 8, ScaleKind::Multiplier, CalibMethod::MinMax},
                      Case{"int16_pow2", 13, 21, 2, true, 16, ScaleKind::PowerOfTwo, CalibMethod::MinMax},
                      Case{"int16_multiplier", 13, 21, 2, true, 16, ScaleKind::Multiplier, CalibMethod::MinMax},
                      Case{"int8_pow2_percentile", 32, 64, 1, false, 8, ScaleKind::PowerOfTwo, CalibMethod::Percentile},
                      Case{"int8_multiplier_mse", 16, 40, 2, false, 8, ScaleKind::Multiplier, CalibMethod::Mse},
                      Case{"int16_pow2_h256", 64, 256, 1, false, 16, ScaleKind::PowerOfTwo, CalibMethod::MinMax},
                      // int64 accumulators: the input projection here, the recurrent
                      // product below (flat weights, rows of 600 and 520).
                      Case{"int16_pow2_c600", 600, 24, 1, false, 16, ScaleKind::PowerOfTwo, CalibMethod::MinMax, true},
                      Case{"int16_multiplier_h520", 16, 520, 1, false, 16, ScaleKind::Multiplier, CalibMethod::MinMax,
                           true}),
    [](const auto& info) { return info.param.name; });

// The expanded tables the lanes read for interpolated ones (FastPlan::lut16): at every input
// of the operator the value the table's own interpolation gives, then the padding entry the
// gathers' last 4-byte read reaches; none for direct tables, for outputs beyond int16 or for
// more inputs than the knots cover.
TEST(FastLoop, ExpandedTablesHoldEveryInputsValue) {
  GruModel m = gru_test::torch_init_model(8, 24, 1, false, 3);
  const Case c{"int16", 8, 24, 1, false, 16, ScaleKind::Multiplier, CalibMethod::MinMax};
  const QuantizedGru q = quantize(m, c, 12, 4);
  const GruCellConstants k = q.cell_constants(0);
  const gru_detail::CellPlan p =
      gru_detail::build_plan(q.params().cells[0], q.params().config, 8, 24, k.q_w, k.q_r, k.q_bx, k.q_br);
  ASSERT_NE(p.fast, nullptr);
  const ActivationLut* luts[3] = {&k.sig_z, &k.sig_r, &k.tanh_g};
  for (size_t l = 0; l < 3; ++l) {
    const ActivationLut& lut = *luts[l];
    ASSERT_FALSE(lut.direct());
    const auto& t = p.fast->lut16[l];
    const int64_t inputs = (static_cast<int64_t>(lut.entries()) - 1) << lut.shift();
    ASSERT_EQ(static_cast<int64_t>(t.size()), inputs + 1) << "table " << l;  // 16-bit operators: 2^16 inputs
    int64_t differ = 0;
    for (int64_t i = 0; i < inputs; ++i) differ += t[static_cast<size_t>(i)] != lut(lut.input_min() + static_cast<int32_t>(i));
    EXPECT_EQ(differ, 0) << "table " << l;
    EXPECT_EQ(t.back(), 0) << "table " << l;
    EXPECT_FALSE(gru_detail::expanded_table(lut, inputs + 1)) << "more inputs than the knots cover";
    EXPECT_TRUE(gru_detail::expanded_table(lut, 100)) << "a narrower operator";
  }
  // 8-bit tables are direct: nothing to expand.
  const Case c8{"int8", 8, 24, 1, false, 8, ScaleKind::Multiplier, CalibMethod::MinMax};
  const QuantizedGru q8 = quantize(m, c8, 12, 4);
  EXPECT_FALSE(gru_detail::expanded_table(q8.cell_constants(0).sig_z, 256));
}

// Ratios that are left shifts (a scale above 1): the shift forms take them without the
// addition. Calibration rarely gives one (H = 1024 on uniform inputs did), so the test
// moves operators' scales by powers of two: Rh_add_br's down by 4 makes Rh -> Rh_add_br a
// left shift, which the int16 lanes take too; r_out's up by 16, Rh_add_br's up by 8 and
// rRh's down by 4 make the r * Rh_add_br product one while each keeps enough levels to
// reach g, which the int16 lanes refuse (the int32 lanes take it).
TEST(FastLoop, LeftShiftRatiosEqualReference) {
  const Case c{"left", 24, 40, 1, false, 8, ScaleKind::PowerOfTwo, CalibMethod::MinMax};
  const GruModel m = gru_test::torch_init_model(c.C, c.H, 1, false, 11);
  const QuantizedGru calibrated = quantize(m, c, 12, 4);
  struct Shifted {
    std::vector<std::pair<GruOp, int>> scales;  // each operator's scale times 2^-by
    gru_detail::UnitScale ratio;                // turns into a left shift
    bool lanes16;
  };
  const Shifted cases[] = {{{{GruOp::RhAddBr, 2}}, gru_detail::UnitScale::RhToRhab, true},
                           {{{GruOp::ROut, -4}, {GruOp::RhAddBr, -3}, {GruOp::RRh, 2}}, gru_detail::UnitScale::RrhMul, false}};
  for (const Shifted& sh : cases) {
    GruQuantParams params = calibrated.params();
    for (const auto& [op, by] : sh.scales) {
      QuantParams& q = params.cells[0][op];
      q.scale[0] = std::ldexp(q.scale[0], -by);  // a power-of-two scale stays one
      q.exponent[0] += by;
    }
    const std::string what = to_string(sh.scales.back().first);
    const QuantizedGru model(m, params);
    const GruCellConstants k = model.cell_constants(0);
    const gru_detail::CellPlan p =
        gru_detail::build_plan(params.cells[0], params.config, c.C, c.H, k.q_w, k.q_r, k.q_bx, k.q_br);
    ASSERT_NE(p.fast, nullptr) << what;
    EXPECT_GT(p.fast->lane[static_cast<size_t>(sh.ratio)].left, 0) << what;
    EXPECT_TRUE(p.fast->shifts) << what;
    EXPECT_EQ(p.fast->lanes16.has_value(), sh.lanes16) << what;
    const int64_t T = 9, B = 16;
    for (float sigma : {1.0f, 40.0f}) {
      const std::vector<float> x = random_input(T * B * c.C, 31, sigma);
      const GruOutput ref = run(model, test::scalar_path(), x, Shape{T, B, c.C}, {});
      for (const test::KernelPath& path : test::fast_paths()) {
        const GruOutput fast = run(model, path, x, Shape{T, B, c.C}, {});
        expect_same_bits(ref.y, fast.y, what + " " + path.name() + " y");
      }
    }
  }
}

// The fast loop computes Wx a block of steps at a time (about one GEMM chunk of rows) and
// then runs those steps; the reverse direction without lengths takes the blocks from the
// end. A forward sees it only through a cell whose directions share no input product, so
// the loop is called here directly: both directions, with and without lengths, batches
// whose blocks are 1 to 6 steps, against the reference loop on the same integers.
TEST(FastLoop, BlocksOfStepsInBothDirectionsEqualReference) {
  if (!kFastGruBuilt) GTEST_SKIP() << "the fast GRU step has lane kernels on x86-64 only; this " FIXQ_TARGET_ARCH " build runs the reference loop, which the reference and oracle tests check";
  for (int bits : {8, 16}) {
    const Case c{"blocks", 13, 24, 1, false, bits, ScaleKind::PowerOfTwo, CalibMethod::MinMax};
    const GruModel m = gru_test::torch_init_model(c.C, c.H, 1, false, 9);
    const QuantizedGru q = quantize(m, c, 12, 4);
    const GruCellConstants k = q.cell_constants(0);
    const gru_detail::CellPlan p =
        gru_detail::build_plan(q.params().cells[0], q.params().config, c.C, c.H, k.q_w, k.q_r, k.q_bx, k.q_br);
    ASSERT_NE(p.fast, nullptr);
    const int xb = int_type_bytes(p.x.storage), hb = int_type_bytes(p.h.storage);
    const int64_t T = 23;
    for (int64_t B : {16, 40, 100}) {
      std::mt19937 rng(static_cast<uint32_t>(B + bits));
      // Raw integers across each storage type's whole range: the loop takes any.
      auto bytes = [&](int64_t n) {
        std::vector<char> v(static_cast<size_t>(n));
        for (char& e : v) e = static_cast<char>(rng());
        return v;
      };
      const std::vector<char> q_x = bytes(T * B * c.C * xb), h0 = bytes(B * c.H * hb);
      std::vector<int64_t> ragged;
      for (int64_t b = 0; b < B; ++b) ragged.push_back(b == 0 ? T : (b * 7) % (T + 1));
      for (bool reverse : {false, true})
        for (const std::vector<int64_t>& lengths : {std::vector<int64_t>{}, ragged}) {
          std::vector<char> h_ref = h0, y_ref(static_cast<size_t>(T * B * c.H * hb), 0);
          gru_detail::run_cell_reference(p, q_x.data(), T, B, lengths, reverse, h_ref.data(), y_ref.data());
          for (const test::KernelPath& path : test::fast_paths()) {
            test::PathScope scope(path);
            const gru_detail::GruLaneKernels* lanes = gru_detail::active_lane_kernels();
            ASSERT_NE(lanes, nullptr) << path.name();
            // Pipelined: the next block's Wx projected on a second thread meanwhile.
            for (bool pipelined : {false, true}) {
              std::vector<char> h = h0, y(y_ref.size(), 0);
              gru_detail::run_cell_fast(*lanes, p, *p.fast, q_x.data(), T, B, lengths, reverse, h.data(), y.data(),
                                        pipelined);
              const std::string what = "int" + std::to_string(bits) + " B=" + std::to_string(B) +
                                       (reverse ? " reverse" : " forward") + (lengths.empty() ? "" : " lengths") +
                                       (pipelined ? " pipelined " : " ") + path.name();
              EXPECT_EQ(y, y_ref) << what;
              EXPECT_EQ(h, h_ref) << what;
            }
          }
        }
    }
  }
}

// Weights beyond L2 (cpu/cache.h): the recurrent product alternates R's panel order from
// step to step, and a call of one step after one that ended first to last runs R's product
// and then W's, both last to first (gru/int/fast/loop.cpp). Whole sequences and streamed
// frames against the reference.
TEST(FastLoop, WeightsBeyondL2AlternateTheirOrder) {
  const Case c{"big", 512, 1024, 1, false, 8, ScaleKind::PowerOfTwo, CalibMethod::MinMax};
  const GruModel m = gru_test::torch_init_model(c.C, c.H, 1, false, 21);
  const QuantizedGru q = quantize(m, c, 6, 2);
  const GruCellConstants k = q.cell_constants(0);
  ASSERT_FALSE(cpu::stays_in_l2(static_cast<int64_t>(k.q_r.size()))) << "R must outgrow L2 for this test";
  ASSERT_FALSE(cpu::stays_in_l2(static_cast<int64_t>(k.q_w.size()))) << "W must outgrow L2 for this test";
  const int64_t T = 7, B = 2;
  const std::vector<float> x = random_input(T * B * c.C, 22, 1.0f);
  const GruOutput ref = run(q, test::scalar_path(), x, Shape{T, B, c.C}, {});
  auto frames = [&](const test::KernelPath& path) {
    test::PathScope scope(path);
    std::vector<float> all;
    QuantizedGruStream s(q, B);
    for (int64_t t = 0; t < T; ++t) {
      const std::vector<float> h = s.step(x.data() + t * B * c.C);
      all.insert(all.end(), h.begin(), h.end());
    }
    return all;
  };
  expect_same_bits(ref.y, frames(test::scalar_path()), "reference frames");
  for (const test::KernelPath& path : test::fast_paths()) {
    const GruOutput fast = run(q, path, x, Shape{T, B, c.C}, {});
    expect_same_bits(ref.y, fast.y, path.name() + " y");
    expect_same_bits(ref.h_n, fast.h_n, path.name() + " h_n");
    expect_same_bits(ref.y, frames(path), path.name() + " frames");
  }
}

// Streaming steps take the fast loop one frame at a time and must agree with it too.
TEST(FastLoop, StreamEqualsReference) {
  const Case c{"s", 8, 17, 2, false, 8, ScaleKind::Multiplier, CalibMethod::MinMax};
  const GruModel m = gru_test::torch_init_model(c.C, c.H, c.layers, false, 3);
  const QuantizedGru q = quantize(m, c, 10, 2);
  const std::vector<float> x = random_input(6 * 2 * c.C, 4, 2.0f);
  auto steps = [&](const test::KernelPath& path) {
    test::PathScope scope(path);
    std::vector<std::vector<float>> out;
    QuantizedGruStream s(q, 2);
    for (int64_t t = 0; t < 6; ++t) out.push_back(s.step(x.data() + t * 2 * c.C));
    return out;
  };
  const auto ref = steps(test::scalar_path());
  for (const test::KernelPath& path : test::fast_paths()) {
    const auto fast = steps(path);
    for (size_t t = 0; t < ref.size(); ++t) expect_same_bits(ref[t], fast[t], path.name() + " step " + std::to_string(t));
  }
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

// The fast-loop comparisons above ran each family's own lane kernels: natively where this
// CPU has them, through SIMDe for the AVX-512 families everywhere.
TEST(FastLoop, EveryInstructionSetIsExercised) {
  test::expect_complete(gru_detail::registry());
  test::expect_each_family_runs_its_own(gru_detail::registry(), [](const gru_detail::GruKernels& k) { return k.lanes; },
                                        "lane kernels");
}

}  // namespace
}  // namespace fixq
