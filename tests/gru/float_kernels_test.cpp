// The float GRU's kernels on every path (scalar reference, AVX2, AVX-512 natively where
// the CPU has it and through SIMDe everywhere) give the same bits: the packed layout; the
// fixed-order dot product of fused multiply-add chains on ragged shapes, every tile and
// panel edge, strided rows and overflowing values; the unit update on values from
// subnormal to infinite; whole runs with taps, lengths, two layers and both directions;
// and calibration, whose .fixq bytes must not depend on the CPU.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cpu/cache.h"
#include "fixq/gru.h"
#include "fixq/qgru.h"
#include "gru/float/kernels.h"
#include "gru/float_test_util.h"
#include "support/kernel_paths.h"
#include "support/registry_checks.h"

namespace fixq {
namespace {

using gru_test::documented_dot;
using gru_test::random_model;
using gru_test::random_values;

std::size_t sz(int64_t v) { return static_cast<std::size_t>(v); }

// Bit patterns, so that -0 differs from +0 and NaNs compare equal to themselves.
std::vector<uint32_t> bits(const std::vector<float>& v) {
  std::vector<uint32_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
  return b;
}

// Values spread over many binades, with a sprinkle of zeros of both signs and subnormals,
// so that the order of a sum changes its rounding.
std::vector<float> spread_values(std::size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exp(-20, 20), pick(0, 49);
  std::vector<float> v(n);
  for (float& x : v) {
    const int p = pick(rng);
    x = p == 0 ? 0.0f : p == 1 ? -0.0f : p == 2 ? 1e-41f : std::ldexp(mant(rng), exp(rng));
  }
  return v;
}

TEST(FloatKernels, EveryFamilyIsListedEmulatedAndRuns) {
  test::expect_complete(gru_float::registry());
  test::expect_each_family_runs_its_own(gru_float::registry(), [](const gru_float::FloatKernels& k) { return k.matmul; },
                                        "matmul");
  test::expect_each_family_runs_its_own(gru_float::registry(), [](const gru_float::FloatKernels& k) { return k.pack; },
                                        "pack");
  test::expect_each_family_runs_its_own(gru_float::registry(), [](const gru_float::FloatKernels& k) { return k.gates; },
                                        "gates");
}

TEST(FloatKernels, ReferenceDotIsTheDocumentedOrder) {
  const std::vector<float> w = spread_values(300, 1), x = spread_values(300, 2);
  bool order_matters = false, fusing_matters = false;
  for (int64_t k = 0; k <= 300; k += k < 70 ? 1 : 13) {
    const float got = gru_float::dot_fma_chains(w.data(), x.data(), k);
    EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(documented_dot(w.data(), x.data(), k))) << k;
    float sequential = 0.0f, unfused = 0.0f;
    for (int64_t i = 0; i < k; ++i) sequential = std::fma(w[sz(i)], x[sz(i)], sequential);
    for (int64_t b = 0; b < k; b += 32) {
      float c = 0.0f;
      for (int64_t i = b; i < std::min<int64_t>(k, b + 32); ++i) c = c + w[sz(i)] * x[sz(i)];
      unfused = b == 0 ? c : unfused + c;
    }
    order_matters = order_matters || sequential != got;
    fusing_matters = fusing_matters || unfused != got;
  }
  EXPECT_TRUE(order_matters) << "these values do not tell summation orders apart";
  EXPECT_TRUE(fusing_matters) << "these values do not tell fused from separate roundings";
}

std::vector<float> packed(const test::KernelPath& path, const std::vector<float>& w, int64_t n, int64_t k) {
  test::PathScope scope(path);
  std::vector<float> out(sz(gru_float::packed_size(n, k)), -7.0f);
  gru_float::active_kernels().pack(w.data(), n, k, out.data());
  return out;
}

// The layout of gru/float/kernels.h, written from its text: panel p, k-row i, lane c holds
// w[64 p + c][i], +0 past the last row.
TEST(FloatKernels, PackingIsTheDocumentedLayoutOnEveryPath) {
  for (int64_t n : {1, 15, 16, 17, 63, 64, 65, 130, 192})
    for (int64_t k : {1, 5, 16, 17, 33}) {
      const std::vector<float> w = spread_values(sz(n * k), static_cast<uint32_t>(n * 100 + k));
      std::vector<float> want(sz(gru_float::packed_size(n, k)), 0.0f);
      ASSERT_EQ(want.size(), sz((n + 63) / 64 * 64 * k));
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < k; ++i) want[sz((j / 64 * k + i) * 64 + j % 64)] = w[sz(j * k + i)];
      for (const test::KernelPath& p : test::kernel_paths())
        ASSERT_EQ(bits(packed(p, w, n, k)), bits(want)) << p.name() << ": n " << n << " k " << k;
    }
}

// out = a w^T with row strides lda and ldo larger than the rows, on one path, the weights'
// panels in either order.
std::vector<float> matmul(const test::KernelPath& path, const std::vector<float>& a, int64_t lda, int64_t m,
                          const std::vector<float>& w, int64_t n, int64_t k, int64_t ldo, bool reverse = false) {
  const std::vector<float> pw = packed(test::scalar_path(), w, n, k);
  test::PathScope scope(path);
  std::vector<float> out(sz(m * ldo), -7.0f);  // the gaps between rows must stay untouched
  gru_float::active_kernels().matmul(a.data(), lda, m, pw.data(), n, k, out.data(), ldo, reverse);
  return out;
}

void expect_matmul_paths_agree(int64_t m, int64_t n, int64_t k, uint32_t seed, bool extreme) {
  const int64_t lda = k + 3, ldo = n + 2;
  std::vector<float> a = spread_values(sz(m * lda), seed), w = spread_values(sz(n * k), seed + 1);
  if (extreme) {  // products that overflow to infinity, and infinities that cancel into NaN
    a[0] = 3e38f;
    w[0] = 2.0f;
    if (n > 1) w[sz(k)] = -2.0f;
    if (k > 17) a[17] = -3e38f, w[17] = 4.0f;
  }
  const std::vector<float> ref = matmul(test::scalar_path(), a, lda, m, w, n, k, ldo);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < ldo; ++j) {
      const float want = j < n ? documented_dot(w.data() + j * k, a.data() + i * lda, k) : -7.0f;
      ASSERT_EQ(std::bit_cast<uint32_t>(ref[sz(i * ldo + j)]), std::bit_cast<uint32_t>(want)) << i << " " << j;
    }
  for (const test::KernelPath& p : test::kernel_paths())
    for (bool reverse : {false, true})
      ASSERT_EQ(bits(matmul(p, a, lda, m, w, n, k, ldo, reverse)), bits(ref))
          << p.name() << ": m " << m << " n " << n << " k " << k << (extreme ? " extreme" : "")
          << (reverse ? " panels last to first" : "");
}

TEST(FloatKernels, MatmulIsBitExactOnEveryPathForRaggedShapes) {
  uint32_t seed = 100;
  // k across chain ends (32, 64) and the vector widths; m over every tile height (AVX-512
  // 6 rows, AVX2 3), the batch-1 tile and row counts the tiles share unevenly (8: 4 + 4,
  // 13: 5 + 4 + 4, 17: 6 + 6 + 5); n across vectors, tiles and panels.
  for (int64_t k = 0; k <= 67; ++k)
    for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 8, 13, 17})
      expect_matmul_paths_agree(m, 1 + (k * 7 + m) % 23, k, seed++, k > 0 && k % 5 == 0);
  for (int64_t n = 1; n <= 200; n += n < 70 ? 1 : 9)
    for (int64_t m : {1, 2, 7}) expect_matmul_paths_agree(m, n, 16 + n % 35, seed++, n % 4 == 0);
}

TEST(FloatKernels, MatmulIsBitExactOnEveryPathAtGruSizes) {
  // Many panels and long chains, as the recurrent and input products of H = 300.
  expect_matmul_paths_agree(16, 900, 300, 7, false);
  expect_matmul_paths_agree(1, 900, 300, 8, true);
  expect_matmul_paths_agree(9, 390, 1030, 9, false);
}

// The unit update of `rows` rows on one path: h and, when `all`, every intermediate.
std::vector<std::vector<float>> gates(const test::KernelPath& path, int64_t rows, int64_t H,
                                      const std::vector<float>& wx, const std::vector<float>& rh,
                                      const std::vector<float>& bx, const std::vector<float>& br,
                                      const std::vector<float>& h0, bool all) {
  test::PathScope scope(path);
  std::vector<std::vector<float>> out(gru_float::kGateIntermediates + 1, std::vector<float>(sz(rows * H), -7.0f));
  out[0] = h0;
  float* ptrs[gru_float::kGateIntermediates];
  for (int i = 0; i < gru_float::kGateIntermediates; ++i) ptrs[i] = out[sz(i + 1)].data();
  gru_float::active_kernels().gates({rows, H, wx.data(), rh.data(), bx.data(), br.data(), out[0].data(), all ? ptrs : nullptr});
  return out;
}

TEST(FloatKernels, GatesAreBitExactOnEveryPathFromSubnormalToInfinite) {
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {0.0f, -0.0f, 1e-42f, -1e-40f, 1e-8f, 0.3f, -0.6249f, 0.625f, 0.6251f, 9.1f, -17.4f,
                            40.0f, -88.7f, 89.0f, -104.0f, 3e38f, -3e38f, inf, -inf};
  uint32_t seed = 500;
  for (int64_t H : {1, 7, 8, 9, 15, 16, 17, 33, 67})
    for (int64_t rows : {1, 3}) {
      std::vector<float> v[5];
      const int64_t n[5] = {rows * 3 * H, rows * 3 * H, 3 * H, 3 * H, rows * H};
      for (int i = 0; i < 5; ++i) {
        v[i] = random_values(sz(n[i]), seed++, i < 2 ? 12.0f : 2.0f);
        for (std::size_t e = static_cast<std::size_t>(i); e < v[i].size(); e += 5)
          v[i][e] = specials[(e + static_cast<std::size_t>(H)) % std::size(specials)];
      }
      for (bool all : {false, true}) {
        const auto ref = gates(test::scalar_path(), rows, H, v[0], v[1], v[2], v[3], v[4], all);
        for (const test::KernelPath& p : test::fast_paths()) {
          const auto got = gates(p, rows, H, v[0], v[1], v[2], v[3], v[4], all);
          for (std::size_t i = 0; i < ref.size(); ++i)
            ASSERT_EQ(bits(got[i]), bits(ref[i])) << p.name() << " H " << H << " rows " << rows << " array " << i;
        }
      }
    }
}

struct TappedRun {
  GruOutput out;
  std::vector<float> tapped;  // every value the tap saw, in order
};

TappedRun run_on(const test::KernelPath& path, const GruModel& m, const std::vector<float>& x, const Shape& shape,
                 GruRunOptions opt) {
  test::PathScope scope(path);
  TappedRun r;
  GruTap tap;
  tap.on_value = [&](int, int, int64_t, GruOp, const float* v, const Shape& s) {
    r.tapped.insert(r.tapped.end(), v, v + numel(s));
  };
  opt.tap = &tap;
  r.out = gru_forward(m, x.data(), shape, opt);
  return r;
}

TEST(FloatKernels, WholeRunsAreBitExactOnEveryPath) {
  // Sizes that are no whole vectors, two layers, both directions, lengths, batch first.
  const GruModel m = random_model(21, 19, 2, true, 61);
  const int64_t T = 9, B = 5;
  const std::vector<float> x = random_values(sz(T * B * 21), 62, 3.0f);
  const std::vector<float> h0 = random_values(sz(4 * B * 19), 63);
  const std::vector<int64_t> lengths{9, 4, 0, 9, 1};
  GruRunOptions opt;
  opt.h0 = h0.data();
  opt.lengths = lengths;
  opt.batch_first = true;
  const TappedRun ref = run_on(test::scalar_path(), m, x, {B, T, 21}, opt);
  for (const test::KernelPath& p : test::fast_paths()) {
    const TappedRun got = run_on(p, m, x, {B, T, 21}, opt);
    EXPECT_EQ(bits(got.out.y), bits(ref.out.y)) << p.name();
    EXPECT_EQ(bits(got.out.h_n), bits(ref.out.h_n)) << p.name();
    EXPECT_EQ(bits(got.tapped), bits(ref.tapped)) << p.name();
    test::PathScope scope(p);  // FloatGru packs with the kernels active when it is made
    const GruOutput prepared = FloatGru(m).forward(x.data(), {B, T, 21}, opt);
    EXPECT_EQ(bits(prepared.y), bits(ref.out.y)) << p.name();
    EXPECT_EQ(bits(prepared.h_n), bits(ref.out.h_n)) << p.name();
  }
  // Streaming, one frame at a time, on every path too.
  const GruModel uni = random_model(21, 35, 2, false, 71);
  std::vector<float> ref_steps;
  for (const test::KernelPath& p : test::kernel_paths()) {
    test::PathScope scope(p);
    GruStream s(uni, 2);
    std::vector<float> steps;
    for (int64_t t = 0; t < 6; ++t) {
      const std::vector<float> h = s.step(x.data() + t * 2 * 21);
      steps.insert(steps.end(), h.begin(), h.end());
    }
    if (p.isa == Isa::Scalar) ref_steps = steps;
    else EXPECT_EQ(bits(steps), bits(ref_steps)) << p.name();
  }
}

// A layer whose W and R outgrow half of L2: every other frame reads R and then W, last to
// first (GruStream). Frames on every path, through both step() overloads, equal the whole
// sequence on the scalar path, and a second layer within L2 keeps its order meanwhile.
TEST(FloatKernels, StreamBeyondL2AlternatesItsOrderAndKeepsTheBits) {
  const int64_t C = 48, H = 384, T = 5, B = 2;
  const GruModel m = gru_test::torch_init_model(C, H, 1, false, 91);
  ASSERT_FALSE(cpu::stays_in_l2(static_cast<int64_t>((m.cells[0].W.size() + m.cells[0].R.size()) * sizeof(float))))
      << "W and R must outgrow half of L2 for this test";
  const std::vector<float> x = random_values(sz(T * B * C), 92, 2.0f);
  const std::vector<float> h0 = random_values(sz(B * H), 93);
  GruRunOptions opt;
  opt.h0 = h0.data();
  std::vector<float> whole;
  {
    test::PathScope scope(test::scalar_path());
    whole = gru_forward(m, x.data(), {T, B, C}, opt).y;
  }
  for (const test::KernelPath& p : test::kernel_paths()) {
    test::PathScope scope(p);
    GruStream s(m, B, h0.data());
    std::vector<float> steps, h(sz(B * H));
    for (int64_t t = 0; t < T; ++t) {
      if (t % 2 == 0) {
        const std::vector<float> v = s.step(x.data() + t * B * C);
        steps.insert(steps.end(), v.begin(), v.end());
      } else {
        s.step(x.data() + t * B * C, h.data());
        steps.insert(steps.end(), h.begin(), h.end());
      }
    }
    EXPECT_EQ(bits(steps), bits(whole)) << p.name();
  }
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Calibration runs the float GRU with a tap over all its data: the quantized model it
// gives, parameters and file, is the same on every path.
TEST(FloatKernels, CalibrationGivesTheSameFixqBytesOnEveryPath) {
  const GruModel m = gru_test::torch_init_model(24, 40, 2, true, 81, 2.0f);
  const std::vector<float> x = random_values(sz(12 * 3 * 24), 82, 2.0f);
  for (const CalibMethod method : {CalibMethod::MinMax, CalibMethod::Percentile}) {
    for (const ScaleKind scales : {ScaleKind::Multiplier, ScaleKind::PowerOfTwo}) {
      std::string ref_json, ref_bytes;
      for (const test::KernelPath& p : test::kernel_paths()) {
        test::PathScope scope(p);
        ObserverConfig oc;
        oc.method = method;
        GruCalibrator cal(m, GruQuantConfig::int8(scales), oc);
        cal.observe(x.data(), Shape{12, 3, 24});
        const GruQuantParams params = cal.finalize();
        const std::string file = ::testing::TempDir() + "float_paths_" + p.name() + ".fixq";
        QuantizedGru(m, params).save(file);
        const std::string json = params.to_json(), bytes = file_bytes(file);
        std::remove(file.c_str());
        ASSERT_FALSE(bytes.empty());
        if (p.isa == Isa::Scalar && !p.emulated) {
          ref_json = json;
          ref_bytes = bytes;
        } else {
          EXPECT_EQ(json, ref_json) << p.name();
          EXPECT_TRUE(bytes == ref_bytes) << p.name() << ": the .fixq files differ";
        }
      }
    }
  }
}

}  // namespace
}  // namespace fixq
