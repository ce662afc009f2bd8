// The GRU on several threads: a forward split into batch slices (GruRunOptions::threads,
// gru/batch_split.h) gives the bits of one thread, for the float, int8 and int16 GRU, with
// lengths, h0, both directions, two layers and batch_first; and one QuantizedGru serves
// streams stepping on several threads at once exactly as it serves them one after another.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fixq/error.h"
#include "fixq/gemm.h"
#include "fixq/qgru.h"
#include "gru/batch_split.h"
#include "gru/float_test_util.h"
#include "support/expect.h"

namespace fixq {
namespace {

using test::expect_error;

// Bit equality of two float arrays (== would take -0 for +0).
void expect_same_bits(const std::vector<float>& a, const std::vector<float>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    uint32_t ua, ub;
    std::memcpy(&ua, &a[i], 4);
    std::memcpy(&ub, &b[i], 4);
    ASSERT_EQ(ua, ub) << what << ": element " << i << " is " << a[i] << " against " << b[i];
  }
}

GruQuantParams calibrate(const GruModel& m, const GruQuantConfig& cfg) {
  GruCalibrator cal(m, cfg, ObserverConfig{});
  const std::vector<float> x = gru_test::random_values(static_cast<size_t>(12 * 8 * m.input_size), 77, 1.5f);
  cal.observe(x.data(), Shape{12, 8, m.input_size});
  return cal.finalize();
}

// A forward of the float, int8 or int16 GRU under test.
using Forward = std::function<GruOutput(const float*, const Shape&, const GruRunOptions&)>;

// Every thread count against one thread, on ragged batches (slices of unequal size, and
// batches that no thread count divides; 5 stays whole, below kGruMinThreadedBatch), with
// and without lengths and h0, both layouts.
void check_thread_counts(const Forward& forward, int64_t C, int64_t cells, int64_t H, const std::string& name,
                         int64_t T = 9) {
  for (int64_t B : {5, 17, 33, 40}) {
    std::mt19937 rng(static_cast<uint32_t>(B));
    std::vector<int64_t> lengths(static_cast<size_t>(B));
    for (int64_t& l : lengths) l = std::uniform_int_distribution<int64_t>(0, T)(rng);
    lengths[0] = T;
    lengths[static_cast<size_t>(B - 1)] = 0;  // an item that keeps h0
    const std::vector<float> x = gru_test::random_values(static_cast<size_t>(T * B * C), static_cast<unsigned>(B), 1.5f);
    const std::vector<float> h0 = gru_test::random_values(static_cast<size_t>(cells * B * H), 5 + static_cast<unsigned>(B), 0.9f);
    for (bool batch_first : {false, true})
      for (bool with_lengths : {false, true})
        for (bool with_h0 : {false, true}) {
          GruRunOptions opt;
          opt.batch_first = batch_first;
          if (with_lengths) opt.lengths = lengths;
          if (with_h0) opt.h0 = h0.data();
          const Shape shape = batch_first ? Shape{B, T, C} : Shape{T, B, C};
          const GruOutput one = forward(x.data(), shape, opt);
          for (int threads : {2, 3, 0}) {
            GruRunOptions o = opt;
            o.threads = threads;
            const GruOutput many = forward(x.data(), shape, o);
            const std::string what = name + " B=" + std::to_string(B) + " threads=" + std::to_string(threads) +
                                     (batch_first ? " batch_first" : "") + (with_lengths ? " lengths" : "") +
                                     (with_h0 ? " h0" : "");
            expect_same_bits(many.y, one.y, what + " y");
            expect_same_bits(many.h_n, one.h_n, what + " h_n");
          }
        }
  }
}

// Two layers, both directions: every slice runs the whole network.
constexpr int64_t kC = 12, kH = 32, kLayers = 2;

TEST(GruThreads, SlicesOfTheBatchGiveTheBitsOfOneThread) {
  const GruModel m = gru_test::torch_init_model(kC, kH, kLayers, true, 31, 2.0f);
  const int64_t cells = kLayers * 2;
  check_thread_counts([&](const float* x, const Shape& s, const GruRunOptions& o) { return gru_forward(m, x, s, o); },
                      kC, cells, kH, "float");
  const FloatGru prepared(m);
  check_thread_counts([&](const float* x, const Shape& s, const GruRunOptions& o) { return prepared.forward(x, s, o); },
                      kC, cells, kH, "FloatGru");
  for (bool sixteen : {false, true}) {
    const QuantizedGru q(m, calibrate(m, sixteen ? GruQuantConfig::int16(ScaleKind::Multiplier)
                                                 : GruQuantConfig::int8(ScaleKind::PowerOfTwo)));
    // The slices run the vectorised loop where the CPU has one, as one thread does.
    check_thread_counts([&](const float* x, const Shape& s, const GruRunOptions& o) { return q.forward(x, s, o); }, kC,
                        cells, kH, sixteen ? "int16" : "int8");
    // The form that writes into kept outputs: a sliced call after a one-thread call of
    // another shape, and the other way round, keep nothing of the call before.
    const std::vector<float> x = gru_test::random_values(static_cast<size_t>(5 * 20 * kC), 9, 1.5f);
    GruRunOptions two;
    two.threads = 2;
    GruOutput kept;
    q.forward(x.data(), Shape{5, 3, kC}, kept);
    q.forward(x.data(), Shape{5, 20, kC}, kept, two);
    const GruOutput fresh = q.forward(x.data(), Shape{5, 20, kC});
    expect_same_bits(kept.y, fresh.y, "kept y after a smaller batch");
    expect_same_bits(kept.h_n, fresh.h_n, "kept h_n after a smaller batch");
    q.forward(x.data(), Shape{4, 16, kC}, kept, two);
    q.forward(x.data(), Shape{5, 20, kC}, kept);
    expect_same_bits(kept.y, fresh.y, "kept y after a sliced call");
  }
}

// Unidirectional layers over many blocks of steps: where batch slices would fill less than one
// tile of the GEMM kernel the whole batch takes (AMX), two threads run each layer as a
// pipeline (the next block's input projection beside this block's steps) instead: the same
// bits as one thread, either way.
TEST(GruThreads, PipelinedLayersGiveTheBitsOfOneThread) {
  const GruModel m = gru_test::torch_init_model(kC, kH, kLayers, false, 41, 2.0f);
  for (bool sixteen : {false, true}) {
    const QuantizedGru q(m, calibrate(m, sixteen ? GruQuantConfig::int16(ScaleKind::Multiplier)
                                                 : GruQuantConfig::int8(ScaleKind::PowerOfTwo)));
    check_thread_counts([&](const float* x, const Shape& s, const GruRunOptions& o) { return q.forward(x, s, o); }, kC,
                        kLayers, kH, sixteen ? "int16 unidirectional" : "int8 unidirectional", 40);
  }
}

TEST(GruThreads, ThreadCountFollowsBatchTapAndSetting) {
  using gru_detail::forward_threads;
  GruRunOptions o;
  EXPECT_EQ(forward_threads(o, 64), 1);  // the default is one thread
  o.threads = 2;
  EXPECT_EQ(forward_threads(o, kGruMinThreadedBatch - 1), 1);
  EXPECT_EQ(forward_threads(o, kGruMinThreadedBatch), 2);
  o.threads = 1000;
  EXPECT_EQ(forward_threads(o, 40), 40);  // at most one slice per item
  const GruTap tap;
  o.tap = &tap;
  EXPECT_EQ(forward_threads(o, 64), 1);
  o.tap = nullptr;
  o.threads = 0;
  const int before = gemm_threads();
  set_gemm_threads(3);
  EXPECT_EQ(forward_threads(o, 64), 3);
  set_gemm_threads(0);
  EXPECT_EQ(forward_threads(o, 64), std::min(gemm_threads(), 64));
  set_gemm_threads(before);
  o.threads = kGruMaxThreads;
  EXPECT_EQ(forward_threads(o, 64), 64);
  o.threads = -1;
  expect_error([&] { forward_threads(o, 64); }, "threads is -1", "expected 0..1024");
  expect_error([&] { forward_threads(o, 4); }, "threads is -1");  // checked below the split's batch too
  o.threads = kGruMaxThreads + 1;
  expect_error([&] { forward_threads(o, 64); }, "threads is 1025", "expected 0..1024");
}

// Bad input in one slice is reported as one thread reports it: elements numbered in the
// whole batch, not in the slice.
TEST(GruThreads, ErrorsNameElementsOfTheWholeBatch) {
  const GruModel m = gru_test::torch_init_model(kC, kH, 1, false, 3);
  const QuantizedGru q(m, calibrate(m, GruQuantConfig::int8(ScaleKind::PowerOfTwo)));
  const int64_t T = 4, B = 20;
  std::vector<float> x = gru_test::random_values(static_cast<size_t>(T * B * kC), 4);
  x[static_cast<size_t>((2 * B + 17) * kC + 3)] = std::nanf("");  // in the second slice of two
  auto message = [&](int threads, auto&& run) {
    try {
      GruRunOptions o;
      o.threads = threads;
      run(o);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (int threads : {2, 3}) {
    auto qrun = [&](const GruRunOptions& o) { q.forward(x.data(), Shape{T, B, kC}, o); };
    auto frun = [&](const GruRunOptions& o) { gru_forward(m, x.data(), Shape{T, B, kC}, o); };
    EXPECT_EQ(message(threads, qrun), message(1, qrun));
    EXPECT_EQ(message(threads, frun), message(1, frun));
    EXPECT_NE(message(1, qrun).find(std::to_string((2 * B + 17) * kC + 3)), std::string::npos) << message(1, qrun);
  }
  x[static_cast<size_t>((2 * B + 17) * kC + 3)] = 0.0f;
  std::vector<int64_t> lengths(static_cast<size_t>(B), T);
  lengths[18] = T + 1;
  auto with_lengths = [&](const GruRunOptions& base) {
    GruRunOptions o = base;
    o.lengths = lengths;
    q.forward(x.data(), Shape{T, B, kC}, o);
  };
  EXPECT_EQ(message(2, with_lengths), message(1, with_lengths));
  expect_error([&] { with_lengths(GruRunOptions{}); }, "outside [0, 4]");
}

// An input without features holds no data whatever its other extents claim (numpy's
// np.empty((2**40, 2**40, 0)), or a .npy file of that shape, 128 bytes): the batch slicing
// leaves it to the forward, which names the fault, instead of sizing outputs of
// T * B * width floats (2^80: a signed overflow).
TEST(GruThreads, InputWithoutFeaturesIsTheForwardsErrorNotAnOverflow) {
  const GruModel m = gru_test::torch_init_model(kC, kH, 1, false, 3);
  const QuantizedGru q(m, calibrate(m, GruQuantConfig::int8(ScaleKind::PowerOfTwo)));
  const Shape empty{int64_t{1} << 40, int64_t{1} << 40, 0};
  GruRunOptions o;
  o.threads = 4;
  expect_error([&] { q.forward(nullptr, empty, o); }, "GRU input has 0 features per step; the model expects " + std::to_string(kC));
  expect_error([&] { gru_forward(m, nullptr, empty, o); }, "x has shape [1099511627776, 1099511627776, 0]");
}

// Many independent streams: one QuantizedGru, two threads each stepping its own eight
// streams (own state, own inputs, batches 1 to 3) at the same time, against the same
// sixteen streams stepped one after another on one thread.
TEST(GruThreads, StreamsOnSeveralThreadsShareOneModel) {
  const GruModel m = gru_test::torch_init_model(kC, kH, kLayers, false, 13, 2.0f);
  constexpr int kThreads = 2, kPerThread = 8, kStreams = kThreads * kPerThread;
  constexpr int64_t kSteps = 60;
  constexpr int kRounds = 16;
  for (bool sixteen : {false, true}) {
    const QuantizedGru q(m, calibrate(m, sixteen ? GruQuantConfig::int16(ScaleKind::Multiplier)
                                                 : GruQuantConfig::int8(ScaleKind::PowerOfTwo)));
    auto batch_of = [](int s) { return int64_t{1} + s % 3; };
    std::vector<std::vector<float>> inputs, h0s;
    for (int s = 0; s < kStreams; ++s) {
      inputs.push_back(gru_test::random_values(static_cast<size_t>(kSteps * batch_of(s) * kC), 100 + s, 1.5f));
      h0s.push_back(gru_test::random_values(static_cast<size_t>(kLayers * batch_of(s) * kH), 200 + s, 0.9f));
    }
    // outputs[s]: every step's h of stream s, then its final state.
    auto run_streams = [&](int first, int count, std::vector<std::vector<float>>& outputs) {
      std::vector<std::unique_ptr<QuantizedGruStream>> streams;
      for (int s = first; s < first + count; ++s)
        streams.push_back(std::make_unique<QuantizedGruStream>(q, batch_of(s), h0s[static_cast<size_t>(s)].data()));
      for (int64_t t = 0; t < kSteps; ++t)
        for (int i = 0; i < count; ++i) {  // the streams of a thread interleave, step by step
          const int s = first + i;
          const std::vector<float> h = streams[static_cast<size_t>(i)]->step(
              inputs[static_cast<size_t>(s)].data() + t * batch_of(s) * kC);
          auto& o = outputs[static_cast<size_t>(s)];
          o.insert(o.end(), h.begin(), h.end());
        }
      for (int i = 0; i < count; ++i) {
        const std::vector<float> st = streams[static_cast<size_t>(i)]->state();
        auto& o = outputs[static_cast<size_t>(first + i)];
        o.insert(o.end(), st.begin(), st.end());
      }
    };
    std::vector<std::vector<float>> serial(kStreams);
    for (int s = 0; s < kStreams; ++s) run_streams(s, 1, serial);
    // Several rounds: on a shared machine one round's threads may barely overlap, and a
    // state shared by mistake shows only where they do.
    for (int round = 0; round < kRounds; ++round) {
      std::vector<std::vector<float>> concurrent(kStreams);
      std::atomic<int> ready{0};
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
          ready.fetch_add(1);
          while (ready.load() < kThreads) std::this_thread::yield();  // start together
          run_streams(t * kPerThread, kPerThread, concurrent);
        });
      for (std::thread& t : threads) t.join();
      for (int s = 0; s < kStreams; ++s)
        expect_same_bits(concurrent[static_cast<size_t>(s)], serial[static_cast<size_t>(s)],
                         std::string(sixteen ? "int16" : "int8") + " stream " + std::to_string(s) + " round " +
                             std::to_string(round));
    }
  }
}

}  // namespace
}  // namespace fixq
