// The integer GEMM against a naive int64 oracle on the unpacked operands: every kernel,
// ragged shapes, extreme values, strides, the four float epilogues and requantization.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "fixq/arith.h"
#include "fixq/cpu.h"
#include "fixq/error.h"
#include "fixq/gemm.h"
#include "gemm/driver.h"
#include "gemm/kernels.h"
#include "gemm/panels.h"
#include "support/expect.h"
#include "support/kernel_paths.h"
#include "support/registry_checks.h"

namespace fixq {
namespace {

using test::expect_error;
using test::KernelPath;
using test::kernel_paths;
using test::PathScope;

using detail::int128;

// A matrix of any element type held as int32 values plus its raw storage.
struct Mat {
  IntType type;
  int64_t rows, cols, stride;
  std::vector<int32_t> v;        // logical values, row-major rows x cols
  std::vector<uint8_t> storage;  // the typed bytes, row stride `stride`

  MatrixView view() const { return {type, storage.data(), rows, cols, stride}; }
  int32_t at(int64_t r, int64_t c) const { return v[static_cast<size_t>(r * cols + c)]; }
};

enum class Fill { Random, Max, Min };

Mat make(IntType t, int64_t rows, int64_t cols, int64_t pad, std::mt19937& rng, Fill fill = Fill::Random) {
  Mat m{t, rows, cols, cols + pad, {}, {}};
  const IntRange r = int_type_range(t);
  const int bytes = int_type_bytes(t);
  m.storage.assign(static_cast<size_t>(rows * m.stride * bytes), 0xAB);  // padding is garbage
  std::uniform_int_distribution<int32_t> d(r.qmin, r.qmax);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const int32_t x = fill == Fill::Max ? r.qmax : fill == Fill::Min ? r.qmin : d(rng);
      m.v.push_back(x);
      uint8_t* p = m.storage.data() + (i * m.stride + j) * bytes;
      if (bytes == 1) {
        *p = static_cast<uint8_t>(x);
      } else {
        const auto u = static_cast<uint16_t>(static_cast<int16_t>(x));
        p[0] = static_cast<uint8_t>(u & 0xFF);
        p[1] = static_cast<uint8_t>(u >> 8);
      }
    }
  return m;
}

std::vector<int64_t> oracle(const Mat& a, const Mat& b) {
  std::vector<int64_t> c(static_cast<size_t>(a.rows * b.rows), 0);
  for (int64_t m = 0; m < a.rows; ++m)
    for (int64_t n = 0; n < b.rows; ++n) {
      int64_t s = 0;
      for (int64_t k = 0; k < a.cols; ++k) s += int64_t{a.at(m, k)} * b.at(n, k);
      c[static_cast<size_t>(m * b.rows + n)] = s;
    }
  return c;
}

void check_raw(const Mat& a, const Mat& b, const std::string& what) {
  const PackedB pb = PackedB::pack(b.view());
  const std::vector<int64_t> want = oracle(a, b);
  for (int64_t n = 0; n < b.rows; ++n) {
    int64_t s = 0;
    for (int64_t k = 0; k < b.cols; ++k) s += b.at(n, k);
    ASSERT_EQ(pb.colsum()[static_cast<size_t>(n)], s) << what;
  }
  for (const KernelPath& path : kernel_paths()) {
    PathScope scope(path);
    const int64_t ldc = b.rows + 3;
    std::vector<int64_t> c64(static_cast<size_t>(a.rows * ldc), -7);
    gemm_s64(a.view(), pb, c64.data(), ldc);
    for (int64_t m = 0; m < a.rows; ++m)
      for (int64_t n = 0; n < b.rows; ++n)
        ASSERT_EQ(c64[static_cast<size_t>(m * ldc + n)], want[static_cast<size_t>(m * b.rows + n)])
            << what << " " << path << " m=" << m << " n=" << n;
    // Padding between rows is left alone.
    ASSERT_EQ(c64[static_cast<size_t>(ldc - 1)], -7) << what;
    // The weights' panels last to first (gemm/driver.h), as a GRU's odd steps run them.
    std::vector<int64_t> reversed(c64.size(), -7);
    gemm_detail::accumulate(gemm_detail::bind(a.type, pb, a.rows), a.view(), reversed.data(), ldc, true);
    ASSERT_EQ(reversed, c64) << what << " " << path << " panels last to first";
    // int32 output where the bound (fixq/gemm.h) allows it, computed here from the values.
    int64_t max_row = 0;
    for (int64_t n = 0; n < b.rows; ++n) {
      int64_t r = 0;
      for (int64_t k = 0; k < b.cols; ++k) r += std::abs(int64_t{b.at(n, k)});
      max_row = std::max(max_row, r);
    }
    const int64_t max_a = a.type == IntType::U8 ? 255 : a.type == IntType::S8 ? 128 : 32768;
    ASSERT_EQ(pb.max_abs_row_sum(), max_row) << what;
    if (max_a * max_row <= INT32_MAX) {
      std::vector<int32_t> c32(static_cast<size_t>(a.rows * b.rows));
      gemm_s32(a.view(), pb, c32.data(), b.rows);
      for (size_t i = 0; i < c32.size(); ++i) ASSERT_EQ(c32[i], want[i]) << what << " s32 " << path;
    }
  }
}

const std::pair<IntType, IntType> kCombos[] = {{IntType::U8, IntType::S8},
                                               {IntType::S8, IntType::S8},
                                               {IntType::S16, IntType::S8},
                                               {IntType::U8, IntType::S16},
                                               {IntType::S8, IntType::S16}};

TEST(Gemm, RaggedShapesEveryDimension1To67) {
  std::mt19937 rng(21);
  for (auto [ta, tb] : kCombos) {
    for (int64_t x = 1; x <= 67; ++x) {
      const int64_t r1 = 1 + rng() % 40, r2 = 1 + rng() % 40;
      check_raw(make(ta, x, r1, rng() % 3, rng), make(tb, r2, r1, rng() % 3, rng), "M sweep");
      check_raw(make(ta, r1, r2, 0, rng), make(tb, x, r2, 1, rng), "N sweep");
      check_raw(make(ta, r1, x, 2, rng), make(tb, r2, x, 0, rng), "K sweep");
      if (HasFatalFailure()) return;
    }
  }
}

TEST(Gemm, LargeShapesCrossEveryBlock) {
  std::mt19937 rng(22);
  // K beyond one k-block of every kernel (at most 2048 k: 1024 int16 pairs of the AVX2
  // kernel; 510 for s16 operands, whose int32 partial sums allow no more), M beyond a row
  // block (240), N beyond many panels, none of them multiples of the tiles.
  check_raw(make(IntType::U8, 250, 2100, 5, rng), make(IntType::S8, 77, 2100, 0, rng), "u8 big");
  check_raw(make(IntType::S8, 243, 2100, 1, rng), make(IntType::S8, 70, 2100, 0, rng), "s8 big");
  check_raw(make(IntType::S16, 9, 1300, 0, rng), make(IntType::S8, 50, 1300, 3, rng), "s16 big");
  check_raw(make(IntType::S8, 70, 700, 1, rng), make(IntType::S16, 33, 700, 1, rng), "s8 x s16 big");
}

TEST(Gemm, ExtremeValues) {
  std::mt19937 rng(23);
  for (auto [ta, tb] : kCombos) {
    for (Fill fa : {Fill::Max, Fill::Min})
      for (Fill fb : {Fill::Max, Fill::Min}) {
        check_raw(make(ta, 5, 2000, 0, rng, fa), make(tb, 19, 2000, 0, rng, fb), "extreme");
        // Enough rows for the kernels of many rows (kernels.h: kManyRows), K past a tile block.
        check_raw(make(ta, 37, 1001, 1, rng, fa), make(tb, 70, 1001, 0, rng, fb), "extreme, many rows");
      }
  }
}

// int8 x int8 with many -128s on both sides: the AVX2 sign trick stores -128 weights as
// -127 plus a correction, and |x| = 128 meets the largest pair 2 * 128 * 127 that must not
// saturate; the VNNI kernel shifts x by 128 and compensates with the column sums.
TEST(Gemm, Int8TimesInt8WithMinus128Everywhere) {
  std::mt19937 rng(29);
  std::uniform_int_distribution<int> d(-128, 127), coin(0, 3);
  for (auto [n, k] : {std::pair<int64_t, int64_t>{1, 1}, {7, 3}, {8, 4}, {17, 33}, {48, 64}, {75, 130}, {24, 2051}}) {
    for (int64_t rows : {1, 2, 3, 5, 7, 9}) {
      Mat a = make(IntType::S8, rows, k, 1, rng), b = make(IntType::S8, n, k, 0, rng);
      for (Mat* m : {&a, &b})
        for (int64_t r = 0; r < m->rows; ++r)
          for (int64_t c = 0; c < m->cols; ++c) {
            const int32_t v = coin(rng) != 0 ? -128 : d(rng);
            m->v[static_cast<size_t>(r * m->cols + c)] = v;
            m->storage[static_cast<size_t>(r * m->stride + c)] = static_cast<uint8_t>(v);
          }
      check_raw(a, b, "s8 x s8 with -128");
      if (HasFatalFailure()) return;
    }
  }
}

// s16 x s8 on the AVX-512 kernel runs in two byte planes (low bytes, high bytes + 128) and
// combines them in int64: values whose bytes sit at the edges (-32768, 32767, -256, 255,
// 256, -1), every number of rows per tile (1, 2, 3 rows of A) and past the row block
// (240), K across several k-blocks, and int32 output where the whole K fits (K <= 511).
TEST(Gemm, Int16TimesInt8InBytePlanes) {
  std::mt19937 rng(30);
  const int32_t edges[] = {-32768, 32767, -256, 255, 256, -1, 0, 1, -129, 128};
  std::uniform_int_distribution<int> pick(0, 12);
  // 17 rows x K 4100: the kernels of many rows over several k-blocks into int64 C.
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {1, 65, 5}, {2, 64, 130}, {3, 17, 511},
                         {4, 130, 67}, {7, 9, 2049}, {250, 70, 300}, {5, 33, 4100}, {17, 70, 4100}}) {
    Mat a = make(IntType::S16, m, k, 2, rng);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < k; ++c) {
        const int e = pick(rng);
        if (e >= 10) continue;  // keep some random values
        const int32_t v = edges[e];
        a.v[static_cast<size_t>(r * k + c)] = v;
        const auto u = static_cast<uint16_t>(static_cast<int16_t>(v));
        a.storage[static_cast<size_t>((r * a.stride + c) * 2)] = static_cast<uint8_t>(u & 0xFF);
        a.storage[static_cast<size_t>((r * a.stride + c) * 2 + 1)] = static_cast<uint8_t>(u >> 8);
      }
    check_raw(a, make(IntType::S8, n, k, 1, rng), "s16 byte planes");
    if (HasFatalFailure()) return;
  }
  // Weights in [-1, 1]: the whole K of 3000 fits int32 (32768 * 3000 < 2^31), so the kernels
  // write int32 C, over two k-blocks of every kernel (at most 2048 k each).
  for (int64_t m : {5, 17, 40}) {
    Mat b = make(IntType::S8, 70, 3000, 0, rng);
    for (size_t i = 0; i < b.v.size(); ++i) {
      const int32_t w = static_cast<int32_t>(rng() % 3) - 1;
      b.v[i] = w;
      b.storage[i] = static_cast<uint8_t>(static_cast<int8_t>(w));
    }
    check_raw(make(IntType::S16, m, 3000, 1, rng), b, "s16 byte planes, small weights");
    if (HasFatalFailure()) return;
  }
  // Every AVX-512 path takes the byte planes (a bug in them must fail the test above).
  for (const KernelPath& path : kernel_paths()) {
    if ((isa_features(path.isa) & kFeatureAvx512) == 0) continue;  // the AVX-512 families only
    PathScope scope(path);
    EXPECT_NE(gemm_detail::kernel_name(IntType::S16, IntType::S8).find("byte planes"), std::string::npos) << path;
  }
}

// One tile of the byte-plane kernel against the scalar reference tile (tile_scalar) on the
// same packed operands: every store form (int64 or int32 C; start values, none, or adding
// to C), 1..3 rows and ragged columns.
TEST(Gemm, Int16BytePlaneTileMatchesScalarTile) {
  std::mt19937 rng(31);
  for (const KernelPath& path : kernel_paths()) {
    if ((isa_features(path.isa) & kFeatureAvx512) == 0) continue;  // the AVX-512 families only
    PathScope scope(path);
    const gemm_detail::MicroKernel& k = *gemm_detail::pick_kernel(IntType::S16, IntType::S8).kernel;
    ASSERT_EQ(k.a, gemm_detail::APacking::Split16) << path;
    const int64_t K = 37, groups = (K + 3) / 4;
    const Mat a = make(IntType::S16, 3, K, 0, rng), b = make(IntType::S8, 64, K, 0, rng);
    const PackedB pb = PackedB::pack(b.view());
    const gemm_detail::PackedPanels& panels = pb.store().panels(k.b);
    std::vector<int8_t> ap;
    for (int rows = 1; rows <= 3; ++rows) {
      gemm_detail::pack_a(k, a.view(), 0, rows, 0, groups, ap);
      for (int cols : {1, 7, 8, 9, 16, 33, 64})
        for (int form = 0; form < 6; ++form) {
          const bool wide = form < 3, accumulate = form % 3 == 2, init = form % 3 == 1;
          std::vector<int64_t> c64[2], start64(64);
          std::vector<int32_t> c32[2], start32(64);
          for (int i = 0; i < 64; ++i) {
            start64[static_cast<size_t>(i)] = int64_t{1} << 40 | i;
            start32[static_cast<size_t>(i)] = -100000 * i;
          }
          for (int v = 0; v < 2; ++v) {
            c64[v].assign(3 * 70, int64_t{5} << 35);  // ldc 70: the gap must stay untouched
            c32[v].assign(3 * 70, 123456);
            gemm_detail::TileArgs t{ap.data(), panels.panel(0), groups, rows, cols, nullptr, 70, accumulate, nullptr};
            if (wide) {
              t.c64 = c64[v].data();
              t.init64 = init ? start64.data() : nullptr;
            } else {
              t.c = c32[v].data();
              t.init = init ? start32.data() : nullptr;
            }
            if (v == 0) k.run(t);
            else gemm_detail::tile_scalar(k, t);
          }
          ASSERT_EQ(c64[0], c64[1]) << path << " rows " << rows << " cols " << cols << " form " << form;
          ASSERT_EQ(c32[0], c32[1]) << path << " rows " << rows << " cols " << cols << " form " << form;
        }
    }
  }
}

// The float epilogues against a double oracle, within the documented bound.
TEST(Gemm, FloatEpiloguesWithinDocumentedBound) {
  std::mt19937 rng(24);
  std::uniform_real_distribution<float> sd(0.001f, 0.1f), bd(-3.0f, 3.0f);
  for (int trial = 0; trial < 60; ++trial) {
    const int64_t M = 1 + rng() % 20, N = 1 + rng() % 40, K = 1 + rng() % 300;
    const IntType ta = trial % 3 == 0 ? IntType::S8 : trial % 3 == 1 ? IntType::U8 : IntType::S16;
    const Mat a = make(ta, M, K, 1, rng), b = make(IntType::S8, N, K, 0, rng);
    const PackedB pb = PackedB::pack(b.view());
    std::vector<float> sa(trial % 2 ? M : 1), sb(trial % 4 < 2 ? N : 1), bias(trial % 5 ? N : 0);
    for (float& x : sa) x = sd(rng);
    for (float& x : sb) x = sd(rng);
    for (float& x : bias) x = bd(rng);
    const IntRange ar = int_type_range(ta);
    std::vector<int32_t> azp(trial % 3 == 0 ? 0 : trial % 3 == 1 ? 1 : M);
    for (int32_t& z : azp) z = std::uniform_int_distribution<int32_t>(ar.qmin, ar.qmax)(rng);
    const std::vector<int64_t> acc = oracle(a, b);
    std::vector<float> ref;
    for (const KernelPath& path : kernel_paths()) {
      PathScope scope(path);
      std::vector<float> d(static_cast<size_t>(M * N));
      gemm_f32(a.view(), pb, DequantEpilogue{sa, sb, bias, azp}, d.data(), N);
      if (ref.empty()) ref = d;
      ASSERT_EQ(d, ref) << "float epilogue differs between kernels: " << path;
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          const double z = azp.empty() ? 0 : azp.size() == 1 ? azp[0] : azp[m];
          const double v = static_cast<double>(acc[m * N + n]) - z * static_cast<double>(pb.colsum()[n]);
          const double prod = double(sa.size() == 1 ? sa[0] : sa[m]) * (sb.size() == 1 ? sb[0] : sb[n]) * v;
          const double exact = prod + (bias.empty() ? 0.0 : bias[n]);
          const double got = d[m * N + n];
          const double bound = 4 * std::ldexp(std::fabs(prod), -24) + std::ldexp(std::fabs(got), -24);
          ASSERT_LE(std::fabs(got - exact), bound) << m << " " << n;
        }
    }
  }
}

// Round-half-up of v * m / 2^s, computed independently in 128 bits.
int64_t oracle_requant(int64_t v, const FixedPointScale& s, int32_t zp, int32_t lo, int32_t hi) {
  const int128 p = int128{v} * s.m;
  int128 q;
  if (s.shift <= 0) {
    q = p * (int128{1} << -s.shift);
  } else {
    const int128 sum = p + (int128{1} << (s.shift - 1));
    q = sum >> s.shift;  // arithmetic shift: floor
  }
  q += zp;
  return q < lo ? lo : q > hi ? hi : static_cast<int64_t>(q);
}

TEST(Gemm, RequantizationEqualsExactOracle) {
  std::mt19937 rng(25);
  for (int trial = 0; trial < 80; ++trial) {
    const int64_t M = 1 + rng() % 17, N = 1 + rng() % 50, K = 1 + rng() % 600;
    const IntType ta = trial % 2 ? IntType::U8 : IntType::S16;
    const IntType out = trial % 3 == 0 ? IntType::U8 : trial % 3 == 1 ? IntType::S8 : IntType::S16;
    const Mat a = make(ta, M, K, 0, rng), b = make(IntType::S8, N, K, 2, rng);
    const PackedB pb = PackedB::pack(b.view());
    std::vector<FixedPointScale> scale(trial % 2 ? N : 1);
    for (auto& s : scale) s = FixedPointScale::from_real(std::exp2(std::uniform_real_distribution<double>(-20, -4)(rng)));
    std::vector<int32_t> bias(trial % 4 ? N : 0), azp(trial % 3 == 0 ? 0 : trial % 3 == 1 ? 1 : M);
    for (int32_t& x : bias) x = static_cast<int32_t>(rng() % 200001) - 100000;
    const IntRange ar = int_type_range(ta);
    for (int32_t& z : azp) z = std::uniform_int_distribution<int32_t>(ar.qmin, ar.qmax)(rng);
    const IntRange orng = int_type_range(out);
    RequantEpilogue e{azp, bias, scale, static_cast<int32_t>(rng() % 21) - 10, out, orng.qmin, orng.qmax};
    if (trial % 5 == 0) e.out_min = std::max(e.zp_out, orng.qmin);  // fused ReLU
    const std::vector<int64_t> acc = oracle(a, b);
    for (const KernelPath& path : kernel_paths()) {
      PathScope scope(path);
      const int bytes = int_type_bytes(out);
      std::vector<uint8_t> y(static_cast<size_t>(M * N * bytes));
      gemm_requant(a.view(), pb, e, y.data(), N);
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          const int64_t z = azp.empty() ? 0 : azp.size() == 1 ? azp[0] : azp[m];
          const int64_t v = acc[m * N + n] - z * pb.colsum()[n] + (bias.empty() ? 0 : bias[n]);
          const int64_t want = oracle_requant(v, scale.size() == 1 ? scale[0] : scale[n], e.zp_out, e.out_min, e.out_max);
          int64_t got;
          if (out == IntType::U8) got = y[m * N + n];
          else if (out == IntType::S8) got = static_cast<int8_t>(y[m * N + n]);
          else got = static_cast<int16_t>(static_cast<uint16_t>(y[2 * (m * N + n)] | (y[2 * (m * N + n) + 1] << 8)));
          ASSERT_EQ(got, want) << path << " m=" << m << " n=" << n;
        }
    }
  }
}

TEST(Gemm, BadInputIsAClearError) {
  std::mt19937 rng(26);
  const Mat a = make(IntType::U8, 3, 10, 0, rng), b = make(IntType::S8, 4, 10, 0, rng);
  const PackedB pb = PackedB::pack(b.view());
  std::vector<int32_t> c(12);
  MatrixView bad = a.view();
  bad.cols = 9;
  bad.stride = 9;
  expect_error([&] { gemm_s32(bad, pb, c.data(), 4); }, "K = 9 but the weights K = 10");
  bad = a.view();
  bad.data = nullptr;
  expect_error([&] { gemm_s32(bad, pb, c.data(), 4); }, "null activation pointer");
  expect_error([&] { gemm_s32(a.view(), pb, nullptr, 4); }, "null output pointer");
  bad = a.view();
  bad.stride = 5;
  expect_error([&] { gemm_s32(bad, pb, c.data(), 4); }, "row stride 5 is smaller than a row of 10");
  expect_error([&] { gemm_s32(a.view(), pb, c.data(), 3); }, "output row stride 3");
  MatrixView bu8 = b.view();
  bu8.type = IntType::U8;
  expect_error([&] { PackedB::pack(bu8); }, "must be s8 or s16");
  MatrixView bnull = b.view();
  bnull.data = nullptr;
  expect_error([&] { PackedB::pack(bnull); }, "null weight pointer");
  bnull = b.view();
  bnull.stride = 3;
  expect_error([&] { PackedB::pack(bnull); }, "row stride 3");
  const Mat a16 = make(IntType::S16, 2, 10, 0, rng), b16 = make(IntType::S16, 2, 10, 0, rng);
  const PackedB pb16 = PackedB::pack(b16.view());
  std::vector<int64_t> c64(4);
  expect_error([&] { gemm_s64(a16.view(), pb16, c64.data(), 2); }, "s16 activations with s16 weights are not supported");
  // 32768 * 600 * 128 > 2^31 with all weights at -128; 32768 * 65535 < 2^31 with smaller ones.
  const Mat along = make(IntType::S16, 1, 600, 0, rng), blong = make(IntType::S8, 1, 600, 0, rng, Fill::Min);
  const PackedB pblong = PackedB::pack(blong.view());
  expect_error([&] { gemm_s32(along.view(), pblong, c.data(), 1); }, "largest row sum of |B| is 76800 (K = 600)");
  expect_error([&] { gemm_s32(along.view(), pblong, c.data(), 1); }, "use gemm_s64");
  Mat bsmall = make(IntType::S8, 1, 600, 0, rng);
  for (size_t i = 0; i < bsmall.v.size(); ++i) {
    bsmall.v[i] = static_cast<int32_t>(i % 219) - 109;  // row sum of |B| 31353: below 65535
    bsmall.storage[i] = static_cast<uint8_t>(bsmall.v[i]);
  }
  int32_t small_sum = 0;
  gemm_s32(along.view(), PackedB::pack(bsmall.view()), &small_sum, 1);
  int64_t want = 0;
  for (int64_t k = 0; k < 600; ++k) want += int64_t{along.at(0, k)} * bsmall.at(0, k);
  EXPECT_EQ(small_sum, want);
  std::vector<float> d(12), two(2, 1.0f), one(1, 1.0f), neg(1, -1.0f);
  expect_error([&] { gemm_f32(a.view(), pb, DequantEpilogue{two, one, {}, {}}, d.data(), 4); }, "scale_a has 2 entries");
  expect_error([&] { gemm_f32(a.view(), pb, DequantEpilogue{one, one, two, {}}, d.data(), 4); }, "bias has 2 entries");
  expect_error([&] { gemm_f32(a.view(), pb, DequantEpilogue{neg, one, {}, {}}, d.data(), 4); }, "must be finite and > 0");
  std::vector<FixedPointScale> s1{FixedPointScale::from_real(0.01)};
  std::vector<uint8_t> y(12);
  expect_error([&] { gemm_requant(a.view(), pb, RequantEpilogue{{}, {}, s1, 0, IntType::S8, -200, 127}, y.data(), 4); },
               "clamp range [-200, 127]");
  expect_error([&] { gemm_requant(a.view(), pb, RequantEpilogue{{}, {}, {}, 0, IntType::S8, -128, 127}, y.data(), 4); },
               "scale has 0 entries");
}

TEST(Gemm, ThreadCountDoesNotChangeResults) {
  std::mt19937 rng(27);
  // 200 x 410 x 433 > 2^25 multiply-adds: above the threading threshold.
  const Mat a = make(IntType::U8, 200, 433, 1, rng), b = make(IntType::S8, 410, 433, 0, rng);
  const PackedB pb = PackedB::pack(b.view());
  const std::vector<int64_t> want = oracle(a, b);
  for (int threads : {1, 2, 3, 7}) {
    set_gemm_threads(threads);
    std::vector<int64_t> c(want.size());
    gemm_s64(a.view(), pb, c.data(), b.rows);
    ASSERT_EQ(c, want) << threads << " threads";
  }
  // Mid-size products (16 x 400 x 700, and 1 x 1500 x 700 whose single row counts four
  // times) are shared only while the workers watch for work: right after a large product
  // and after each other, back to back.
  const Mat a16 = make(IntType::S8, 16, 700, 0, rng), a1 = make(IntType::U8, 1, 700, 1, rng);
  const Mat b400 = make(IntType::S8, 400, 700, 0, rng), b1500 = make(IntType::S8, 1500, 700, 0, rng);
  const PackedB pb400 = PackedB::pack(b400.view()), pb1500 = PackedB::pack(b1500.view());
  const std::vector<int64_t> want16 = oracle(a16, b400), want1 = oracle(a1, b1500);
  for (int threads : {1, 2, 3}) {
    set_gemm_threads(threads);
    std::vector<int64_t> c(want.size());
    gemm_s64(a.view(), pb, c.data(), b.rows);
    for (int rep = 0; rep < 20; ++rep) {
      std::vector<int64_t> c16(want16.size()), c1(want1.size());
      gemm_s64(a16.view(), pb400, c16.data(), b400.rows);
      gemm_s64(a1.view(), pb1500, c1.data(), b1500.rows);
      ASSERT_EQ(c16, want16) << threads << " threads, repetition " << rep;
      ASSERT_EQ(c1, want1) << threads << " threads, repetition " << rep;
    }
  }
  set_gemm_threads(0);
  EXPECT_THROW(set_gemm_threads(-1), Error);
}

// The AMX byte-plane kernel (s16 A of 8 rows or more) tile by tile against the scalar
// reference tile on the same packed operands: 1..16 rows, ragged columns, int64 or int32 C,
// written or added to. It has no start values (its high bytes are signed), so none is passed.
TEST(Gemm, AmxBytePlaneTileMatchesScalarTile) {
  std::mt19937 rng(32);
  int ran = 0;
  for (const KernelPath& path : kernel_paths()) {
    PathScope scope(path);
    const gemm_detail::MicroKernel& k = *gemm_detail::pick_kernel(IntType::S16, IntType::S8, 16).kernel;
    if (k.a != gemm_detail::APacking::TilesSplit16) continue;
    ++ran;
    const int64_t K = 37, groups = (K + 3) / 4;
    const Mat a = make(IntType::S16, 16, K, 0, rng), b = make(IntType::S8, 64, K, 0, rng);
    const PackedB pb = PackedB::pack(b.view());
    const gemm_detail::PackedPanels& panels = pb.store().panels(k.b);
    std::vector<int8_t> ap;
    for (int rows : {1, 7, 15, 16}) {
      gemm_detail::pack_a(k, a.view(), 0, rows, 0, groups, ap);
      for (int cols : {1, 17, 32, 33, 64})
        for (int form = 0; form < 4; ++form) {
          const bool wide = form < 2, accumulate = form % 2 == 1;
          std::vector<int64_t> c64[2];
          std::vector<int32_t> c32[2];
          for (int v = 0; v < 2; ++v) {
            c64[v].assign(16 * 70, int64_t{5} << 35);  // ldc 70: the gap must stay untouched
            c32[v].assign(16 * 70, 123456);
            gemm_detail::TileArgs t{ap.data(), panels.panel(0), groups, rows, cols, nullptr, 70, accumulate, nullptr};
            if (wide) t.c64 = c64[v].data();
            else t.c = c32[v].data();
            if (v == 0) {
              if (k.begin != nullptr) k.begin();
              k.run(t);
            } else {
              gemm_detail::tile_scalar(k, t);
            }
          }
          ASSERT_EQ(c64[0], c64[1]) << path << " rows " << rows << " cols " << cols << " form " << form;
          ASSERT_EQ(c32[0], c32[1]) << path << " rows " << rows << " cols " << cols << " form " << form;
        }
    }
  }
  if (ran == 0) GTEST_SKIP() << "no kernel path here has the AMX byte-plane kernel (needs a CPU with AMX-INT8)";
}

// The comparisons above ran each family's own kernels: natively where this CPU has them,
// through SIMDe for the AVX-512 families everywhere.
TEST(Gemm, EveryInstructionSetIsExercised) {
  using gemm_detail::GemmKernels;
  test::expect_complete(gemm_detail::registry());
  test::expect_each_family_runs_its_own(gemm_detail::registry(), [](const GemmKernels& k) { return k.u8s8; }, "u8 x s8");
  test::expect_each_family_runs_its_own(gemm_detail::registry(), [](const GemmKernels& k) { return k.s8s8; }, "s8 x s8");
  test::expect_each_family_runs_its_own(gemm_detail::registry(), [](const GemmKernels& k) { return k.s16s8; }, "s16 x s8");
  test::expect_each_family_runs_its_own(gemm_detail::registry(), [](const GemmKernels& k) { return k.x8s16; }, "x8 x s16");
  test::expect_each_family_runs_its_own(gemm_detail::registry(), [](const GemmKernels& k) { return k.u8s8_many; },
                                        "u8 x s8, many rows");
  test::expect_each_family_runs_its_own(gemm_detail::registry(), [](const GemmKernels& k) { return k.s8s8_many; },
                                        "s8 x s8, many rows");
  test::expect_each_family_runs_its_own(gemm_detail::registry(), [](const GemmKernels& k) { return k.s16s8_many; },
                                        "s16 x s8, many rows");
}

// A PackedB packed under one family serves every other: each kernel gets panels in its
// own layout, never another's.
TEST(Gemm, WeightsPackedUnderOneFamilyServeEveryOther) {
  std::mt19937 rng(28);
  const Mat a = make(IntType::S8, 7, 301, 0, rng), b = make(IntType::S8, 90, 301, 0, rng);
  const std::vector<int64_t> want = oracle(a, b);
  for (const KernelPath& packer : kernel_paths()) {
    std::optional<PackedB> pb;
    {
      PathScope scope(packer);
      pb = PackedB::pack(b.view());
      std::vector<int64_t> c(want.size());
      gemm_s64(a.view(), *pb, c.data(), b.rows);  // packs this family's layout
    }
    for (const KernelPath& runner : kernel_paths()) {
      PathScope scope(runner);
      std::vector<int64_t> c(want.size());
      gemm_s64(a.view(), *pb, c.data(), b.rows);
      ASSERT_EQ(c, want) << "packed under " << packer << ", run on " << runner;
    }
  }
}

// Every panel of every family's layout starts on a 64-byte boundary, so no 64-byte load of
// B straddles two cache lines. std::vector's storage of a large block starts 16 bytes past
// one; with the panels there, a GRU step at H = 256, batch 1 took 3.4 us instead of 2.75
// (Intel Xeon with AVX-512 VNNI, the same binary otherwise).
TEST(Gemm, PackedPanelsStartOnACacheLine) {
  std::mt19937 rng(29);
  for (const IntType bt : {IntType::S8, IntType::S16}) {
    const Mat b = make(bt, 90, 301, 0, rng);
    const PackedB pb = PackedB::pack(b.view());
    for (const KernelPath& path : kernel_paths()) {
      PathScope scope(path);
      for (const IntType at : {IntType::U8, IntType::S8, IntType::S16}) {
        if (at == IntType::S16 && bt == IntType::S16) continue;  // not a supported product
        const gemm_detail::BoundProduct p = gemm_detail::bind(at, pb);
        ASSERT_EQ(reinterpret_cast<uintptr_t>(p.panels->data.data()) % 64, 0u) << path << ", " << p.kern->name;
        // The vector kernels' group rows are whole multiples of 64 bytes (the scalar
        // reference's 32-byte rows are read element by element), so each panel is aligned too.
        const gemm_detail::PanelFormat& f = p.panels->format;
        if (f.nr * f.kr * f.b_bytes % 64 != 0) continue;
        for (int64_t j = 0; j < p.panels->panels; ++j)
          ASSERT_EQ(reinterpret_cast<uintptr_t>(p.panels->panel(j)) % 64, 0u)
              << path << ", panel " << j << " of " << p.kern->name;
      }
    }
  }
}

}  // namespace
}  // namespace fixq
