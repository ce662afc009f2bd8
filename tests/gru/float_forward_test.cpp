// The float GRU without torch: streaming equals whole sequences, per-sequence lengths
// behave like running each item alone, batch_first is a relayout, the tap reports every
// operator in the documented order with values that satisfy Haste's formulas, and bad
// inputs are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "fixq/gru.h"
#include "gru/float/math.h"
#include "gru/float_test_util.h"
#include "gru/float/weights.h"
#include "io/npy_test_util.h"

namespace fixq {
namespace {

using gru_test::documented_dot;
using gru_test::random_model;
using gru_test::random_values;
using npy_test::expect_error;

std::size_t sz(int64_t v) { return static_cast<std::size_t>(v); }

TEST(GruStream, StepsEqualTheWholeSequenceBitForBit) {
  const GruModel m = random_model(3, 5, 3, false, 11);
  const int64_t T = 7, B = 2, H = 5;
  const std::vector<float> x = random_values(sz(T * B * 3), 12, 2.0f);
  const std::vector<float> h0 = random_values(sz(3 * B * H), 13);
  GruRunOptions opt;
  opt.h0 = h0.data();
  const GruOutput whole = gru_forward(m, x.data(), {T, B, 3}, opt);

  GruStream stream(m, B, h0.data());
  for (int64_t t = 0; t < T; ++t) {
    const std::vector<float> h = stream.step(x.data() + t * B * 3);
    EXPECT_EQ(h, std::vector<float>(whole.y.begin() + t * B * H, whole.y.begin() + (t + 1) * B * H)) << t;
  }
  EXPECT_EQ(stream.state(), whole.h_n);
}

// gru_forward packs W and R per call into the thread's storage, GruStream once into its
// own: the bits are the same. A tap that runs a second model's forward in the middle (its
// own packed copies, of the same sizes) changes neither result.
TEST(GruForward, PackedWeightsPerCallGiveTheStreamsBitsAndNest) {
  const GruModel m = random_model(16, 40, 2, false, 31), other = random_model(16, 40, 2, false, 32);
  const int64_t T = 12, B = 2, C = 16, H = 40;
  const std::vector<float> x = random_values(sz(T * B * C), 33, 2.0f);
  const GruOutput whole = gru_forward(m, x.data(), {T, B, C});
  const GruOutput other_alone = gru_forward(other, x.data(), {T, B, C});

  GruStream stream(m, B);
  for (int64_t t = 0; t < T; ++t) {
    const std::vector<float> h = stream.step(x.data() + t * B * C);
    ASSERT_EQ(h, std::vector<float>(whole.y.begin() + t * B * H, whole.y.begin() + (t + 1) * B * H)) << t;
  }

  GruOutput nested;
  GruTap tap;
  tap.on_value = [&](int layer, int, int64_t t, GruOp op, const float*, const Shape&) {
    if (layer == 1 && t == T / 2 && op == GruOp::H) nested = gru_forward(other, x.data(), {T, B, C});
  };
  GruRunOptions opt;
  opt.tap = &tap;
  const GruOutput tapped = gru_forward(m, x.data(), {T, B, C}, opt);
  EXPECT_EQ(tapped.y, whole.y);
  EXPECT_EQ(tapped.h_n, whole.h_n);
  EXPECT_EQ(nested.y, other_alone.y);
}

// The packed layout of gru/float/kernels.h, written from its text: panel p, k-row i, lane c
// holds w[64 p + c][i], zero past the last row.
std::vector<float> documented_packing(const std::vector<float>& w, int64_t n, int64_t k) {
  const int64_t panels = (n + 63) / 64;
  std::vector<float> p(sz(panels * 64 * k), 0.0f);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < k; ++i) p[sz((j / 64 * k + i) * 64 + j % 64)] = w[sz(j * k + i)];
  return p;
}

// Views of packed weights: each holds its matrix on a cache line while it lives, nested
// ones in storage of their own, and a later view reuses a finished one's storage.
TEST(GruForwardPackedWeights, HoldTheDocumentedLayoutAndNest) {
  using gru_float::PackedWeights;
  const gru_float::PackFn pack = gru_float::active_kernels().pack;
  const int64_t n = 70, k = 13;
  const std::vector<float> a = random_values(sz(n * k), 41), b = random_values(sz(n * k), 42),
                           c = random_values(sz(n * k), 43);
  auto holds = [&](const PackedWeights& w, const std::vector<float>& v) {
    const std::vector<float> want = documented_packing(v, n, k);
    return reinterpret_cast<std::uintptr_t>(w.data()) % 64 == 0 && std::equal(want.begin(), want.end(), w.data());
  };
  const PackedWeights outer(pack, a, n, k);
  EXPECT_TRUE(holds(outer, a));
  const float* inner_storage = nullptr;
  {
    const PackedWeights inner(pack, b, n, k);
    EXPECT_TRUE(holds(inner, b));
    EXPECT_TRUE(holds(outer, a));  // both alive: each has its own storage
    inner_storage = inner.data();
  }
  const PackedWeights next(pack, c, n, k);
  EXPECT_EQ(next.data(), inner_storage);  // the inner one's storage again: no new pages
  EXPECT_TRUE(holds(next, c));
  EXPECT_TRUE(holds(outer, a));
  const float* third_storage = nullptr;
  {
    const PackedWeights third(pack, b, n, k);
    third_storage = third.data();
  }
  expect_error([&] { PackedWeights wrong(pack, a, n, k + 1); }, "float GRU", "910 weights for a [70, 14] matrix");
  const PackedWeights again(pack, b, n, k);
  EXPECT_EQ(again.data(), third_storage);  // the refused view gave its place back
  EXPECT_TRUE(holds(again, b));
}

// FloatGru packs once what gru_forward packs per call: the same bits for every option (two
// layers, both directions, h0, lengths, batch first, a tap that sees the same values), into
// kept outputs whatever their previous shape, from its own copy of the model.
TEST(FloatGru, EqualsGruForwardBitForBitFromItsOwnCopy) {
  GruModel m = random_model(21, 19, 2, true, 81);
  const int64_t T = 9, B = 5, C = 21;
  const std::vector<float> x = random_values(sz(T * B * C), 82, 3.0f);
  const std::vector<float> h0 = random_values(sz(4 * B * 19), 83);
  const std::vector<int64_t> lengths{9, 4, 0, 9, 1};
  const FloatGru prepared(m);
  std::vector<float> seen_once, seen_prepared;
  std::vector<float>* seen = &seen_once;
  GruTap tap;
  tap.on_value = [&](int, int, int64_t, GruOp, const float* v, const Shape& s) { seen->insert(seen->end(), v, v + numel(s)); };
  GruOutput kept;
  prepared.forward(x.data(), {2, 3, C}, kept);  // another shape first: nothing of it may remain
  for (int variant = 0; variant < 4; ++variant) {
    GruRunOptions opt;
    if (variant >= 1) opt.h0 = h0.data();
    if (variant >= 2) opt.lengths = lengths;
    if (variant == 3) {
      opt.batch_first = true;
      opt.tap = &tap;
    }
    const Shape shape = opt.batch_first ? Shape{B, T, C} : Shape{T, B, C};
    seen = &seen_once;
    const GruOutput once = gru_forward(m, x.data(), shape, opt);
    seen = &seen_prepared;
    const GruOutput got = prepared.forward(x.data(), shape, opt);
    EXPECT_EQ(got.y, once.y) << variant;
    EXPECT_EQ(got.h_n, once.h_n) << variant;
    std::vector<float> seen_kept;
    seen = &seen_kept;
    prepared.forward(x.data(), shape, kept, opt);
    EXPECT_EQ(seen_kept, seen_prepared);
    EXPECT_EQ(kept.y, once.y) << variant;
    EXPECT_EQ(kept.h_n, once.h_n) << variant;
  }
  EXPECT_FALSE(seen_once.empty());
  EXPECT_EQ(seen_prepared, seen_once);
  // Changing the caller's model afterwards changes nothing in the prepared one.
  const GruOutput before = prepared.forward(x.data(), {T, B, C});
  m.cells[0].R[0] += 1.0f;
  m.cells[0].bx[0] = NAN;
  EXPECT_EQ(prepared.forward(x.data(), {T, B, C}).y, before.y);
  EXPECT_EQ(prepared.model().cells[0].R, random_model(21, 19, 2, true, 81).cells[0].R);
  const FloatGru copy = prepared;  // shares the packed weights
  EXPECT_EQ(copy.forward(x.data(), {T, B, C}).y, before.y);
}

TEST(FloatGru, RefusesBadModelsAndInputs) {
  GruModel broken = random_model(3, 2, 1, false, 51);
  broken.cells[0].R[1] = INFINITY;
  expect_error([&] { FloatGru f(broken); }, "GRU model", "layer 0 forward", "R[1]");
  const FloatGru f(random_model(3, 2, 1, false, 51));
  std::vector<float> x = random_values(12, 52);
  expect_error([&] { f.forward(x.data(), {4, 3}); }, "FloatGru::forward", "x has shape [4, 3]", "[T, B, C]");
  expect_error([&] { f.forward(nullptr, {2, 2, 3}); }, "FloatGru::forward", "x is null");
  GruRunOptions too_long;
  const std::vector<int64_t> lengths{1, 3};
  too_long.lengths = lengths;
  expect_error([&] { f.forward(x.data(), {2, 2, 3}, too_long); }, "FloatGru::forward", "lengths[1] = 3");
  x[10] = NAN;
  expect_error([&] { f.forward(x.data(), {2, 2, 3}); }, "FloatGru::forward", "x[1, 1, 1]", "not finite");
}

TEST(GruStream, RefusesWhatItCannotRun) {
  const GruModel bi = random_model(2, 3, 1, true, 1);
  expect_error([&] { GruStream s(bi, 1); }, "bidirectional");
  const GruModel m = random_model(2, 3, 1, false, 1);
  expect_error([&] { GruStream s(m, 0); }, "batch is 0");
  const std::vector<float> bad_h0{0.0f, 0.0f, NAN, 0.0f, 0.0f, 0.0f};
  expect_error([&] { GruStream s(m, 2, bad_h0.data()); }, "GruStream", "h0[0, 0, 2]", "not finite");
  GruStream s(m, 2);
  const std::vector<float> x{1.0f, 2.0f, std::numeric_limits<float>::infinity(), 0.0f};
  expect_error([&] { s.step(x.data()); }, "GruStream::step", "x[1, 0]", "not finite");
  GruModel broken = m;
  broken.cells[0].bx.pop_back();
  expect_error([&] { GruStream b(broken, 1); }, "bx has 8 values");
}

// Each item of a padded batch gives exactly what it gives alone, cut to its length: rows
// are independent and the reverse direction starts at the item's own last step.
TEST(GruForward, LengthsEqualRunningEachItemAlone) {
  const GruModel m = random_model(3, 4, 2, true, 21);
  const int64_t T = 6, B = 4, C = 3, H = 4, W = 2 * H, LD = 4;
  const std::vector<float> x = random_values(sz(T * B * C), 22, 2.0f);
  const std::vector<float> h0 = random_values(sz(LD * B * H), 23);
  const std::vector<int64_t> lengths{6, 2, 0, 4};
  GruRunOptions opt;
  opt.h0 = h0.data();
  opt.lengths = lengths;
  const GruOutput all = gru_forward(m, x.data(), {T, B, C}, opt);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t len = lengths[sz(b)];
    std::vector<float> xb, h0b;
    for (int64_t t = 0; t < len; ++t) xb.insert(xb.end(), x.begin() + (t * B + b) * C, x.begin() + (t * B + b + 1) * C);
    for (int64_t s = 0; s < LD; ++s) h0b.insert(h0b.end(), h0.begin() + (s * B + b) * H, h0.begin() + (s * B + b + 1) * H);
    GruRunOptions one;
    one.h0 = h0b.data();
    const GruOutput alone = gru_forward(m, xb.data(), {len, 1, C}, one);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j < W; ++j)
        EXPECT_EQ(all.y[sz((t * B + b) * W + j)], t < len ? alone.y[sz(t * W + j)] : 0.0f) << b << " " << t;
    for (int64_t s = 0; s < LD; ++s)
      for (int64_t j = 0; j < H; ++j) EXPECT_EQ(all.h_n[sz((s * B + b) * H + j)], alone.h_n[sz(s * H + j)]);
  }
  // An empty item keeps h0; an empty sequence leaves every state at h0.
  for (int64_t s = 0; s < LD; ++s)
    for (int64_t j = 0; j < H; ++j) EXPECT_EQ(all.h_n[sz((s * B + 2) * H + j)], h0[sz((s * B + 2) * H + j)]);
  GruRunOptions empty;
  empty.h0 = h0.data();
  const GruOutput none = gru_forward(m, x.data(), {0, B, C}, empty);
  EXPECT_TRUE(none.y.empty());
  EXPECT_EQ(none.h_n, h0);
}

TEST(GruForward, BatchFirstIsTheSameComputationRelaidOut) {
  const GruModel m = random_model(2, 3, 2, true, 31);
  const int64_t T = 5, B = 3, C = 2, W = 6;
  const std::vector<float> x = random_values(sz(T * B * C), 32, 2.0f);
  std::vector<float> xbf(x.size());
  for (int64_t t = 0; t < T; ++t)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c) xbf[sz((b * T + t) * C + c)] = x[sz((t * B + b) * C + c)];
  const std::vector<int64_t> lengths{5, 1, 3};
  GruRunOptions opt;
  opt.lengths = lengths;
  const GruOutput tm = gru_forward(m, x.data(), {T, B, C}, opt);
  opt.batch_first = true;
  const GruOutput bf = gru_forward(m, xbf.data(), {B, T, C}, opt);
  EXPECT_EQ(bf.h_n, tm.h_n);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < W; ++j) EXPECT_EQ(bf.y[sz((b * T + t) * W + j)], tm.y[sz((t * B + b) * W + j)]);
}

struct TapCall {
  int layer, direction;
  int64_t t;
  GruOp op;
  Shape shape;
  std::vector<float> values;
};

// fixq's own sigmoid and tanh (measured against the exact functions in float_math_test).
float sigmoid(float v) { return gru_float::sigmoid_f32(gru_float::ScalarOps{}, v); }
float tanh_fixq(float v) { return gru_float::tanh_f32(gru_float::ScalarOps{}, v); }

// The tap of a 2-layer bidirectional run with lengths: the calls come in the documented
// order with [B', n] shapes of the running items, and the values obey Haste's formulas
// exactly (the float operations and summation order of fixq/gru.h), chained from x and h0
// to y and h_n.
TEST(GruTap, ReportsEveryOperatorInOrderWithConsistentValues) {
  // Sizes past 32 so that dot products add several chains (the second layer's 2H = 70).
  const GruModel m = random_model(19, 35, 2, true, 41);
  const int64_t T = 5, B = 4, C = 19, H = 35, D = 2;
  const std::vector<float> x = random_values(sz(T * B * C), 42, 2.0f);
  const std::vector<float> h0 = random_values(sz(2 * D * B * H), 43);
  const std::vector<int64_t> lengths{3, 0, 5, 2};
  std::vector<TapCall> calls;
  GruTap tap;
  tap.on_value = [&](int layer, int direction, int64_t t, GruOp op, const float* v, const Shape& shape) {
    calls.push_back({layer, direction, t, op, shape, std::vector<float>(v, v + numel(shape))});
  };
  GruRunOptions opt;
  opt.h0 = h0.data();
  opt.lengths = lengths;
  opt.tap = &tap;
  const GruOutput out = gru_forward(m, x.data(), {T, B, C}, opt);

  const GruOp order[] = {GruOp::X,     GruOp::Wx,      GruOp::Rh,  GruOp::ZPre, GruOp::ZOut,
                         GruOp::RPre,  GruOp::ROut,    GruOp::RhAddBr, GruOp::RRh, GruOp::GPre,
                         GruOp::GOut,  GruOp::OldContrib, GruOp::NewContrib, GruOp::H};
  std::size_t k = 0;
  std::vector<float> y_below(x);  // the input of the layer being checked, [T, B, width]
  int64_t width = C;
  for (int layer = 0; layer < 2; ++layer) {
    std::vector<float> y_layer(sz(T * B * D * H), 0.0f);
    for (int d = 0; d < D; ++d) {
      const GruCell& cell = m.cell(layer, d);
      std::vector<float> h(h0.begin() + (layer * D + d) * B * H, h0.begin() + (layer * D + d + 1) * B * H);
      for (int64_t s = 0; s < T; ++s) {
        const int64_t t = d ? T - 1 - s : s;
        std::vector<int64_t> running;
        for (int64_t b = 0; b < B; ++b)
          if (t < lengths[sz(b)]) running.push_back(b);
        if (running.empty()) continue;
        const auto rows = static_cast<int64_t>(running.size());
        std::vector<const TapCall*> c;  // this step's calls, by position in `order`
        for (const GruOp op : order) {
          ASSERT_LT(k, calls.size());
          const TapCall& call = calls[k++];
          EXPECT_EQ(call.layer, layer);
          EXPECT_EQ(call.direction, d);
          EXPECT_EQ(call.t, t);
          ASSERT_EQ(call.op, op) << "call " << k - 1 << ": " << to_string(call.op) << " instead of " << to_string(op);
          const int64_t n = op == GruOp::X ? width : (op == GruOp::Wx || op == GruOp::Rh) ? 3 * H : H;
          ASSERT_EQ(call.shape, (Shape{rows, n})) << to_string(op);
          c.push_back(&call);
        }
        const auto v = [&](int i, int64_t row, int64_t col) {
          const TapCall& call = *c[sz(i)];
          return call.values[sz(row * call.shape[1] + col)];
        };
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t b = running[sz(r)];
          for (int64_t i = 0; i < width; ++i) EXPECT_EQ(v(0, r, i), y_below[sz((t * B + b) * width + i)]);
          for (int64_t j = 0; j < 3 * H; ++j) {
            EXPECT_EQ(v(1, r, j), documented_dot(&cell.W[sz(j * width)], &c[0]->values[sz(r * width)], width));
            EXPECT_EQ(v(2, r, j), documented_dot(&cell.R[sz(j * H)], &h[sz(b * H)], H));
          }
          for (int64_t i = 0; i < H; ++i) {
            const float z_pre = v(1, r, i) + v(2, r, i) + cell.bx[sz(i)] + cell.br[sz(i)];
            const float r_pre = v(1, r, H + i) + v(2, r, H + i) + cell.bx[sz(H + i)] + cell.br[sz(H + i)];
            const float rh_add_br = v(2, r, 2 * H + i) + cell.br[sz(2 * H + i)];
            EXPECT_EQ(v(3, r, i), z_pre);
            EXPECT_EQ(v(4, r, i), sigmoid(v(3, r, i)));
            EXPECT_EQ(v(5, r, i), r_pre);
            EXPECT_EQ(v(6, r, i), sigmoid(v(5, r, i)));
            EXPECT_EQ(v(7, r, i), rh_add_br);
            EXPECT_EQ(v(8, r, i), v(6, r, i) * v(7, r, i));
            // The two multiply-adds are fused; their products are reported rounded.
            EXPECT_EQ(v(9, r, i), std::fma(v(6, r, i), v(7, r, i), v(1, r, 2 * H + i)) + cell.bx[sz(2 * H + i)]);
            EXPECT_EQ(v(10, r, i), tanh_fixq(v(9, r, i)));
            EXPECT_EQ(v(11, r, i), v(4, r, i) * h[sz(b * H + i)]);
            EXPECT_EQ(v(12, r, i), (1.0f - v(4, r, i)) * v(10, r, i));
            EXPECT_EQ(v(13, r, i), std::fma(v(4, r, i), h[sz(b * H + i)], v(12, r, i)));
            h[sz(b * H + i)] = v(13, r, i);
            y_layer[sz((t * B + b) * D * H + d * H + i)] = v(13, r, i);
          }
        }
      }
      for (int64_t j = 0; j < B * H; ++j) EXPECT_EQ(out.h_n[sz((layer * D + d) * B * H + j)], h[sz(j)]);
    }
    y_below = y_layer;
    width = D * H;
  }
  EXPECT_EQ(k, calls.size());
  EXPECT_EQ(out.y, y_below);
}

TEST(GruTap, SkipsStepsWhereNoItemRuns) {
  const GruModel m = random_model(2, 3, 1, true, 45);
  const std::vector<float> x = random_values(16, 46);
  const std::vector<int64_t> lengths{2, 1};
  std::vector<std::pair<int, int64_t>> steps;  // (direction, t) of each step's x report
  std::vector<int64_t> rows;
  GruTap tap;
  tap.on_value = [&](int, int direction, int64_t t, GruOp op, const float*, const Shape& shape) {
    if (op != GruOp::X) return;
    steps.emplace_back(direction, t);
    rows.push_back(shape[0]);
  };
  GruRunOptions opt;
  opt.lengths = lengths;
  opt.tap = &tap;
  gru_forward(m, x.data(), {4, 2, 2}, opt);
  EXPECT_EQ(steps, (std::vector<std::pair<int, int64_t>>{{0, 0}, {0, 1}, {1, 1}, {1, 0}}));
  EXPECT_EQ(rows, (std::vector<int64_t>{2, 1, 1, 2}));
  GruTap silent;  // a tap without a callback observes nothing
  opt.tap = &silent;
  GruRunOptions untapped;
  untapped.lengths = lengths;
  EXPECT_EQ(gru_forward(m, x.data(), {4, 2, 2}, opt).y, gru_forward(m, x.data(), {4, 2, 2}, untapped).y);
}

TEST(GruForward, RefusesBadInput) {
  const GruModel m = random_model(3, 2, 1, false, 51);
  const std::vector<float> x = random_values(12, 52);
  expect_error([&] { gru_forward(m, x.data(), {4, 3}); }, "gru_forward", "x has shape [4, 3]", "[T, B, C]");
  expect_error([&] { gru_forward(m, x.data(), {2, 3, 2}); }, "C = input_size = 3");
  GruRunOptions bf;
  bf.batch_first = true;
  expect_error([&] { gru_forward(m, x.data(), {2, 2, 2}, bf); }, "[B, T, C]");
  expect_error([&] { gru_forward(m, nullptr, {2, 2, 3}); }, "x is null");
  std::vector<float> bad = x;
  bad[10] = NAN;
  expect_error([&] { gru_forward(m, bad.data(), {2, 2, 3}); }, "gru_forward", "x[1, 1, 1]", "not finite");
  const std::vector<float> h0{0.0f, 0.0f, -INFINITY, 0.0f};
  GruRunOptions with_h0;
  with_h0.h0 = h0.data();
  expect_error([&] { gru_forward(m, x.data(), {2, 2, 3}, with_h0); }, "h0[0, 1, 0]", "not finite");
  for (const std::vector<int64_t>& lengths : {std::vector<int64_t>{2}, std::vector<int64_t>{2, 3},
                                              std::vector<int64_t>{-1, 2}}) {
    GruRunOptions opt;
    opt.lengths = lengths;
    expect_error([&] { gru_forward(m, x.data(), {2, 2, 3}, opt); }, "gru_forward", "length");
  }
  GruRunOptions too_long;
  const std::vector<int64_t> lengths{1, 3};
  too_long.lengths = lengths;
  expect_error([&] { gru_forward(m, x.data(), {2, 2, 3}, too_long); }, "lengths[1] = 3 is outside [0, T] = [0, 2]");
  GruModel broken = m;
  broken.cells[0].R[1] = INFINITY;
  expect_error([&] { gru_forward(broken, x.data(), {2, 2, 3}); }, "GRU model", "layer 0 forward", "R[1]");
}

}  // namespace
}  // namespace fixq
