// The integer GRU on a GPU against QuantizedGru::forward on the CPU, bit for bit (y and
// h_n): every configuration the CPU runs (int8, int16, JSON mixed widths; pow2 and
// multiplier scales; layers, bidirectional, ragged lengths, h0, batch-first), batches 1, 3,
// 17 and 64, sequences of up to 1000 steps, inputs that saturate every operator, int64
// accumulators, the benchmark's hidden sizes and the embedded char-LM, through each GPU
// path: the reference (per-step GEMM + pointwise kernels), the persistent kernel and the
// CUDA-graph form.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "cuda/gpu_test_util.h"
#include "cuda/gru_test_configs.h"
#include "fixq/cuda.h"
#include "fixq/npy.h"
#include "fixq/qgru.h"
#include "support/expect.h"

namespace fixq {
namespace {

using cuda_test::expect_same_bits;
using cuda_test::normal;

using cuda_test::Config;
using cuda_test::configs;
using cuda_test::make_model;

// The three GPU paths of one model.
struct Gpus {
  cuda::GpuGru reference, persistent, graph;
  explicit Gpus(const QuantizedGru& q)
      : reference(q, {0, cuda::GruPath::Reference, true}),
        persistent(q, {0, cuda::GruPath::Fast, true}),
        graph(q, {0, cuda::GruPath::Fast, false}) {}
};

void compare(const QuantizedGru& q, const Gpus& g, const std::vector<float>& x, const Shape& shape,
             const GruRunOptions& opt, const std::string& what) {
  const GruOutput cpu = q.forward(x.data(), shape, opt);
  const std::pair<const cuda::GpuGru*, const char*> paths[] = {
      {&g.reference, "reference"}, {&g.persistent, "fast"}, {&g.graph, "graph"}};
  for (const auto& [gpu, name] : paths) {
    const GruOutput out = gpu->forward(x.data(), shape, opt);
    expect_same_bits(out.y, cpu.y, what + " " + name + " y");
    expect_same_bits(out.h_n, cpu.h_n, what + " " + name + " h_n");
  }
  // Each path ran what it says (kernels() tells what the last forward ran): a test that
  // silently fell back to another form would prove nothing of the form it names.
  for (const std::string& k : g.reference.kernels()) EXPECT_NE(k.find("GPU reference"), std::string::npos) << what << ": " << k;
  for (const std::string& k : g.graph.kernels()) EXPECT_TRUE(cuda_test::says_graph_recurrence(k)) << what << ": " << k;
  for (const std::string& k : g.persistent.kernels())
    EXPECT_TRUE(cuda_test::says_persistent_recurrence(k)) << what << ": " << k;
}

// Lengths of B sequences of up to T steps: the first whole, the rest ragged, some empty.
std::vector<int64_t> ragged(int64_t B, int64_t T) {
  std::vector<int64_t> v;
  for (int64_t b = 0; b < B; ++b) v.push_back(b == 0 ? T : (b * 5) % (T + 1));
  return v;
}

TEST(GruOnGpu, EveryConfigurationBatchAndPath) {
  FIXQ_REQUIRE_GPU();
  for (const Config& c : configs()) {
    const QuantizedGru q = make_model(c, 7);
    const Gpus g(q);
    // 8-bit W: the input projection on the tensor cores, a 16-bit x as its two bytes; 16-bit
    // W on the plain kernel (gru_kernel_choice_test.cpp holds this expectation to the
    // library's choice on the host).
    const char* input = cuda::detail::input_projection_description(cuda_test::expected_input_projection(q));
    for (const cuda::GpuGru* fast : {&g.persistent, &g.graph})
      for (const std::string& k : fast->kernels()) EXPECT_NE(k.find(input), std::string::npos) << c.name << ": " << k;
    const int64_t D = c.bidi ? 2 : 1, T = 9;
    for (int64_t B : {1, 3, 17, 64})
      for (float sigma : {1.0f, 40.0f}) {  // 40: far outside the calibration, saturating every operator
        const std::vector<float> x = normal(T * B * c.C, 77 + static_cast<uint32_t>(B), sigma);
        const std::vector<float> h0 = normal(c.layers * D * B * c.H, 5, sigma);
        const std::vector<int64_t> lengths = ragged(B, T);
        const std::string what = c.name + " B=" + std::to_string(B) + " sigma=" + std::to_string(sigma);
        compare(q, g, x, Shape{T, B, c.C}, {}, what);
        GruRunOptions opt;
        opt.h0 = h0.data();
        opt.lengths = lengths;
        compare(q, g, x, Shape{T, B, c.C}, opt, what + " h0 ragged");
        opt.batch_first = true;
        compare(q, g, x, Shape{B, T, c.C}, opt, what + " h0 ragged batch-first");
      }
  }
}

TEST(GruOnGpu, ThousandStepSequences) {
  FIXQ_REQUIRE_GPU();
  const Config cases[] = {{"int8_pow2", GruQuantConfig::int8(ScaleKind::PowerOfTwo), 16, 64, 1, false},
                          {"int16_multiplier", GruQuantConfig::int16(ScaleKind::Multiplier), 12, 40, 2, true}};
  for (const Config& c : cases) {
    const QuantizedGru q = make_model(c, 21);
    const Gpus g(q);
    const int64_t T = 1000;
    for (int64_t B : {1, 17}) {
      const std::vector<float> x = normal(T * B * c.C, 3, 2.0f);
      compare(q, g, x, Shape{T, B, c.C}, {}, c.name + " T=1000 B=" + std::to_string(B));
      const std::vector<int64_t> lengths = ragged(B, T);
      GruRunOptions opt;
      opt.lengths = lengths;
      compare(q, g, x, Shape{T, B, c.C}, opt, c.name + " T=1000 ragged B=" + std::to_string(B));
    }
  }
}

TEST(GruOnGpu, TheBenchmarksHiddenSizes) {
  FIXQ_REQUIRE_GPU();
  for (int64_t H : {256, 1024})
    for (const bool int16 : {false, true}) {
      const Config c{int16 ? "int16" : "int8", int16 ? GruQuantConfig::int16(ScaleKind::PowerOfTwo)
                                                     : GruQuantConfig::int8(ScaleKind::PowerOfTwo),
                     H, H, 1, false};
      const QuantizedGru q = make_model(c, 9);
      const Gpus g(q);
      for (int64_t B : {1, 16, 64}) {
        const int64_t T = 20;
        const std::vector<float> x = normal(T * B * H, 13, 1.5f);
        compare(q, g, x, Shape{T, B, H}, {}, c.name + " H=" + std::to_string(H) + " B=" + std::to_string(B));
      }
    }
}

TEST(GruOnGpu, EmbeddedCharLm) {
  FIXQ_REQUIRE_GPU();
  // The repository this binary was built from, or where scripts/gpu_check.sh runs a carried one.
  const char* root = std::getenv("FIXQ_SOURCE_DIR");
  const std::string dir = std::string(root != nullptr ? root : FIXQ_SOURCE_DIR) + "/data/charlm/";
  std::vector<NamedTensor> sd;
  for (const char* name : {"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"}) {
    NamedTensor t{name, {}, {}};
    t.data = load_npy_f32(dir + "gru." + name + ".npy", &t.shape);
    sd.push_back(std::move(t));
  }
  const GruModel m = gru_from_torch(sd);
  Shape xs;
  const std::vector<float> inputs = load_npy_f32(dir + "gru.inputs.npy", &xs);  // [2000, C]: one real sequence
  const int64_t C = xs[1];
  const std::vector<float> calib(inputs.begin(), inputs.begin() + 1000 * C);
  for (const GruQuantConfig& config : {GruQuantConfig::int8(ScaleKind::PowerOfTwo), GruQuantConfig::int8(ScaleKind::Multiplier),
                                       GruQuantConfig::int16(ScaleKind::PowerOfTwo), GruQuantConfig::int16(ScaleKind::Multiplier)}) {
    ObserverConfig oc;
    oc.method = CalibMethod::MinMax;
    GruCalibrator cal(m, config, oc);
    cal.observe(calib.data(), Shape{1000, 1, C});
    const QuantizedGru q(m, cal.finalize());
    const Gpus g(q);
    const std::string what = "char-LM " + q.params().config.to_json();
    compare(q, g, inputs, Shape{2000, 1, C}, {}, what + " T=2000");
    compare(q, g, inputs, Shape{200, 10, C}, {}, what + " 10 x 200");
  }
}

// forward_device on the caller's stream and buffers equals the host-buffer forward (which
// equals the CPU's), h_n optional.
TEST(GruOnGpu, DeviceBuffersOnAStream) {
  FIXQ_REQUIRE_GPU();
  const Config c{"int8", GruQuantConfig::int8(ScaleKind::Multiplier), 11, 48, 2, true};
  const QuantizedGru q = make_model(c, 3);
  const cuda::GpuGru gpu(q);
  const int64_t T = 15, B = 5, D = 2, cells = 4;
  const std::vector<float> x = normal(B * T * c.C, 8, 1.0f), h0 = normal(cells * B * c.H, 9, 1.0f);
  const std::vector<int64_t> lengths = ragged(B, T);
  GruRunOptions opt;
  opt.batch_first = true;
  opt.lengths = lengths;
  opt.h0 = h0.data();
  const GruOutput cpu = q.forward(x.data(), Shape{B, T, c.C}, opt);
  float *dx = nullptr, *dh0 = nullptr, *dy = nullptr, *dhn = nullptr;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dx, x.size() * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dh0, h0.size() * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dy, cpu.y.size() * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dhn, cpu.h_n.size() * 4), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dh0, h0.data(), h0.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  cuda::GpuRunOptions o;
  o.batch_first = true;
  o.lengths = lengths;
  o.h0 = dh0;
  o.stream = stream;
  gpu.forward_device(dx, Shape{B, T, c.C}, dy, dhn, o);
  std::vector<float> y(cpu.y.size()), h_n(cpu.h_n.size());
  ASSERT_EQ(cudaMemcpyAsync(y.data(), dy, y.size() * 4, cudaMemcpyDeviceToHost, stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(h_n.data(), dhn, h_n.size() * 4, cudaMemcpyDeviceToHost, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  expect_same_bits(y, cpu.y, "device y");
  expect_same_bits(h_n, cpu.h_n, "device h_n");
  gpu.forward_device(dx, Shape{B, T, c.C}, dy, nullptr, o);  // no h_n wanted
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(D * c.H * T * B, static_cast<int64_t>(y.size()));
  for (float* p : {dx, dh0, dy, dhn}) cudaFree(p);
  cudaStreamDestroy(stream);
}

// Bad input gets the CPU's own message, word for word.
TEST(GruOnGpu, BadInputHasTheCpusMessages) {
  FIXQ_REQUIRE_GPU();
  const Config c{"int8", GruQuantConfig::int8(ScaleKind::PowerOfTwo), 6, 8, 1, false};
  const QuantizedGru q = make_model(c, 4);
  const cuda::GpuGru gpu(q);
  auto message = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  std::vector<float> x = normal(4 * 3 * 6, 1, 1.0f);
  const std::vector<int64_t> long_length{4, 5, 1}, two{4, 4};
  std::vector<float> h0 = normal(3 * 8, 2, 1.0f);
  h0[17] = std::numeric_limits<float>::infinity();
  auto both = [&](const Shape& shape, const GruRunOptions& opt, const std::string& what) {
    const std::string cpu = message([&] { q.forward(x.data(), shape, opt); });
    const std::string gpu_msg = message([&] { gpu.forward(x.data(), shape, opt); });
    EXPECT_NE(cpu, "no error") << what;
    EXPECT_EQ(gpu_msg, cpu) << what;
  };
  both(Shape{4, 3, 5}, {}, "wrong C");
  both(Shape{12, 6}, {}, "2-D");
  GruRunOptions opt;
  opt.lengths = long_length;
  both(Shape{4, 3, 6}, opt, "length 5 > T");
  opt.lengths = two;
  both(Shape{4, 3, 6}, opt, "2 lengths for B = 3");
  GruRunOptions with_h0;
  with_h0.h0 = h0.data();
  both(Shape{4, 3, 6}, with_h0, "inf in h0");
  x[29] = std::nanf("");
  both(Shape{4, 3, 6}, {}, "NaN in x");
  GruRunOptions bf;
  bf.batch_first = true;
  both(Shape{3, 4, 6}, bf, "NaN in batch-first x");
  // Both: the CPU checks h0 before it quantizes x, and names h0.
  both(Shape{4, 3, 6}, with_h0, "NaN in x and inf in h0");
  // After the errors the model still runs, and right.
  x[29] = 0.5f;
  EXPECT_EQ(gpu.forward(x.data(), Shape{4, 3, 6}).y, q.forward(x.data(), Shape{4, 3, 6}).y);
}

TEST(GruOnGpu, OutOfMemoryIsAClearErrorAndTheModelStillRuns) {
  FIXQ_REQUIRE_GPU();
  const Config c{"int16", GruQuantConfig::int16(ScaleKind::PowerOfTwo), 1, 2048, 1, false};
  const QuantizedGru q = make_model(c, 6);
  const cuda::GpuGru gpu(q);
  // 2^24 rows of 3H 16-bit projections alone: 192 GiB.
  const int64_t T = int64_t{1} << 20, B = 16;
  const std::vector<float> x(static_cast<size_t>(T * B), 0.25f);
  try {
    gpu.forward(x.data(), Shape{T, B, 1});
    ADD_FAILURE() << "no OutOfMemory";
  } catch (const cuda::OutOfMemory& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("out of GPU memory"), std::string::npos) << m;
    EXPECT_NE(m.find("T = 1048576, B = 16"), std::string::npos) << m;
    EXPECT_NE(m.find("free"), std::string::npos) << m;
  }
  const std::vector<float> small = normal(5 * 2, 3, 1.0f);
  expect_same_bits(gpu.forward(small.data(), Shape{5, 2, 1}).y, q.forward(small.data(), Shape{5, 2, 1}).y, "after OOM");
}

}  // namespace
}  // namespace fixq
