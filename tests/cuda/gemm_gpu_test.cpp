// The GPU GEMM against the CPU's (fixq/gemm.h), bit for bit: every epilogue (raw s32, the
// four float epilogues of vLLM's scaled_mm, the fixed-point requantization to u8 / s8 /
// s16), u8 and s8 activations, both GPU kernels, on ragged shapes 1..67, large shapes,
// extreme values, and activations whose rows are not 16-byte aligned.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cfloat>
#include <functional>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "cuda/gpu_test_util.h"
#include "fixq/cuda.h"
#include "fixq/gemm.h"
#include "support/expect.h"

namespace fixq {
namespace {

using cuda_test::expect_same_bits;

struct Operands {
  int64_t M, N, K;
  IntType a_type;
  std::vector<uint8_t> a;  // raw bytes of u8 or s8 values, [M, K]
  std::vector<int8_t> b;   // [N, K]
  MatrixView av() const { return {a_type, a.data(), M, K, K}; }
  MatrixView bv() const { return {IntType::S8, b.data(), N, K, K}; }
};

Operands random_operands(int64_t M, int64_t N, int64_t K, IntType a_type, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255), s8(-128, 127);
  Operands o{M, N, K, a_type, std::vector<uint8_t>(static_cast<size_t>(M * K)), std::vector<int8_t>(static_cast<size_t>(N * K))};
  for (uint8_t& v : o.a) v = static_cast<uint8_t>(byte(rng));
  for (int8_t& v : o.b) v = static_cast<int8_t>(s8(rng));
  return o;
}

// The epilogues of one product, each with its CPU and GPU runs returning the output bytes.
struct Variant {
  std::string name;
  std::function<std::vector<uint8_t>(const Operands&, const PackedB&)> cpu;
  std::function<std::vector<uint8_t>(const Operands&, const cuda::DeviceWeights&, cuda::GemmKernel)> gpu;
};

template <class T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(v.data());
  return {p, p + v.size() * sizeof(T)};
}

// Scales, biases and zero points for M rows and N columns from a seed.
struct Constants {
  std::vector<float> scale_a, scale_b, bias;
  std::vector<int32_t> azp, bias_i;
  std::vector<FixedPointScale> scale;
  Constants(int64_t M, int64_t N, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.5f, 2.0f);
    std::uniform_int_distribution<int32_t> z(-40, 200), bi(-100000, 100000);
    for (int64_t m = 0; m < M; ++m) {
      scale_a.push_back(0x1p-7f * u(rng));
      azp.push_back(z(rng));
    }
    for (int64_t n = 0; n < N; ++n) {
      scale_b.push_back(0x1p-9f * u(rng));
      bias.push_back(u(rng) - 1.2f);
      bias_i.push_back(bi(rng));
      scale.push_back(n % 3 == 0 ? FixedPointScale::pow2(10 + static_cast<int>(n % 7))
                                 : FixedPointScale::from_real(0x1p-12 * u(rng)));
    }
  }
};

std::vector<Variant> variants(int64_t M, int64_t N, uint32_t seed) {
  auto k = std::make_shared<Constants>(M, N, seed);
  std::vector<Variant> v;
  v.push_back({"s32",
               [](const Operands& o, const PackedB& b) {
                 std::vector<int32_t> c(static_cast<size_t>(o.M * o.N));
                 gemm_s32(o.av(), b, c.data(), o.N);
                 return bytes_of(c);
               },
               [](const Operands& o, const cuda::DeviceWeights& b, cuda::GemmKernel kern) {
                 std::vector<int32_t> c(static_cast<size_t>(o.M * o.N));
                 cuda::gemm_s32_host(o.av(), b, c.data(), o.N, {nullptr, kern});
                 return bytes_of(c);
               }});
  // (name, per-token scale_a, bias, azp: 0 none / 1 per tensor / 2 per token)
  const std::tuple<const char*, bool, bool, int> dequant[] = {{"scaled", false, false, 0},
                                                              {"scaled_bias", false, true, 0},
                                                              {"scaled_per_token", true, false, 0},
                                                              {"azp", false, true, 1},
                                                              {"azp_per_token", true, false, 2},
                                                              {"azp_per_token_bias", true, true, 2}};
  for (const auto& [name, per_token, bias, azp] : dequant) {
    auto epi = [k, per_token, bias, azp, M] {
      DequantEpilogue e;
      e.scale_a = per_token ? std::span<const float>(k->scale_a) : std::span<const float>(k->scale_a.data(), 1);
      e.scale_b = k->scale_b;
      if (bias) e.bias = k->bias;
      if (azp == 1) e.azp = std::span<const int32_t>(k->azp.data(), 1);
      if (azp == 2) e.azp = std::span<const int32_t>(k->azp.data(), static_cast<size_t>(M));
      return e;
    };
    v.push_back({std::string("f32_") + name,
                 [epi](const Operands& o, const PackedB& b) {
                   std::vector<float> d(static_cast<size_t>(o.M * o.N));
                   gemm_f32(o.av(), b, epi(), d.data(), o.N);
                   return bytes_of(d);
                 },
                 [epi](const Operands& o, const cuda::DeviceWeights& b, cuda::GemmKernel kern) {
                   std::vector<float> d(static_cast<size_t>(o.M * o.N));
                   cuda::gemm_f32_host(o.av(), b, epi(), d.data(), o.N, {nullptr, kern});
                   return bytes_of(d);
                 }});
  }
  // (output type, clamp, per-channel scales, bias, azp per token)
  const std::tuple<IntType, IntRange, bool, bool, bool> requant[] = {{IntType::S8, {-128, 127}, true, true, false},
                                                                     {IntType::U8, {10, 200}, true, false, true},
                                                                     {IntType::S16, {-32768, 32767}, false, true, true}};
  for (const auto& [type, clamp, per_channel, bias, per_token] : requant) {
    auto epi = [k, type, clamp, per_channel, bias, per_token, M] {
      RequantEpilogue e;
      e.scale = per_channel ? std::span<const FixedPointScale>(k->scale) : std::span<const FixedPointScale>(k->scale.data() + 1, 1);
      if (bias) e.bias = k->bias_i;
      e.azp = per_token ? std::span<const int32_t>(k->azp.data(), static_cast<size_t>(M)) : std::span<const int32_t>(k->azp.data(), 1);
      e.zp_out = type == IntType::U8 ? 100 : -3;
      e.out_type = type;
      e.out_min = clamp.qmin;
      e.out_max = clamp.qmax;
      return e;
    };
    const int bytes = int_type_bytes(type);
    v.push_back({"requant_" + std::to_string(bytes * 8) + (type == IntType::U8 ? "u" : "s"),
                 [epi, bytes](const Operands& o, const PackedB& b) {
                   std::vector<uint8_t> y(static_cast<size_t>(o.M * o.N * bytes));
                   gemm_requant(o.av(), b, epi(), y.data(), o.N);
                   return y;
                 },
                 [epi, bytes](const Operands& o, const cuda::DeviceWeights& b, cuda::GemmKernel kern) {
                   std::vector<uint8_t> y(static_cast<size_t>(o.M * o.N * bytes));
                   cuda::gemm_requant_host(o.av(), b, epi(), y.data(), o.N, {nullptr, kern});
                   return y;
                 }});
  }
  return v;
}

void check_shape(int64_t M, int64_t N, int64_t K, uint32_t seed) {
  for (IntType a_type : {IntType::U8, IntType::S8}) {
    const Operands o = random_operands(M, N, K, a_type, seed);
    const PackedB b = PackedB::pack(o.bv());
    const cuda::DeviceWeights db = cuda::DeviceWeights::upload(o.bv());
    for (const Variant& v : variants(M, N, seed)) {
      const std::vector<uint8_t> cpu = v.cpu(o, b);
      for (cuda::GemmKernel kern : {cuda::GemmKernel::Reference, cuda::GemmKernel::TensorCore})
        expect_same_bits(v.gpu(o, db, kern), cpu,
                         v.name + (a_type == IntType::U8 ? " u8" : " s8") + " M=" + std::to_string(M) + " N=" +
                             std::to_string(N) + " K=" + std::to_string(K) +
                             (kern == cuda::GemmKernel::Reference ? " reference" : " tensor cores"));
    }
  }
}

TEST(GemmOnGpu, RaggedShapesEveryEpilogueBothKernels) {
  FIXQ_REQUIRE_GPU();
  const std::pair<int64_t, int64_t> nk[] = {{1, 1}, {67, 67}, {33, 65}, {8, 31}, {64, 64}, {3, 100}};
  for (int64_t M = 1; M <= 67; ++M) {
    const auto [N, K] = nk[static_cast<size_t>(M) % std::size(nk)];
    check_shape(M, N, K, static_cast<uint32_t>(M));
  }
  std::mt19937 rng(67);
  std::uniform_int_distribution<int64_t> dim(1, 67);
  for (int i = 0; i < 60; ++i) {
    const int64_t M = dim(rng), N = dim(rng), K = dim(rng);
    check_shape(M, N, K, 1000 + static_cast<uint32_t>(i));
  }
}

TEST(GemmOnGpu, LargeShapes) {
  FIXQ_REQUIRE_GPU();
  // The benchmark's shapes (N = K = 4096, M = 1 .. 1024) and tiles that leave remainders
  // (M = 129, N = 4099, K = 4097).
  const int64_t shapes[][3] = {{1, 4096, 4096}, {16, 4096, 4096}, {64, 4096, 4096}, {1024, 4096, 4096}, {129, 4099, 4097}};
  for (const auto& s : shapes) {
    const Operands o = random_operands(s[0], s[1], s[2], IntType::U8, 7);
    const PackedB b = PackedB::pack(o.bv());
    const cuda::DeviceWeights db = cuda::DeviceWeights::upload(o.bv());
    for (const Variant& v : variants(s[0], s[1], 11))
      if (v.name == "s32" || v.name == "f32_azp_per_token_bias" || v.name == "requant_8s")
        expect_same_bits(v.gpu(o, db, cuda::GemmKernel::Auto), v.cpu(o, b),
                         v.name + " M=" + std::to_string(s[0]) + " N=" + std::to_string(s[1]));
  }
}

TEST(GemmOnGpu, ExtremeValues) {
  FIXQ_REQUIRE_GPU();
  // Every product at its largest magnitude: u8 255 x s8 -128 over K = 65793, the longest
  // row whose int32 sums cannot overflow (255 * 128 * 65793 = 2^31 - 128), then one longer,
  // which Auto runs on the int64 kernel and TensorCore refuses.
  for (int64_t K : {65793, 65794}) {
    Operands o{2, 3, K, IntType::U8, std::vector<uint8_t>(static_cast<size_t>(2 * K), 255),
               std::vector<int8_t>(static_cast<size_t>(3 * K), -128)};
    const PackedB b = PackedB::pack(o.bv());
    const cuda::DeviceWeights db = cuda::DeviceWeights::upload(o.bv());
    std::vector<float> cpu(6), gpu(6);
    const std::vector<float> one{1.0f};
    const DequantEpilogue e{one, one, {}, {}};
    gemm_f32(o.av(), b, e, cpu.data(), 3);
    cuda::gemm_f32_host(o.av(), db, e, gpu.data(), 3);
    expect_same_bits(gpu, cpu, "K=" + std::to_string(K));
    if (K == 65794)
      test::expect_error([&] { cuda::gemm_f32_host(o.av(), db, e, gpu.data(), 3, {nullptr, cuda::GemmKernel::TensorCore}); },
                         "can overflow");
  }
  // Epilogue constants at their ends: float results that overflow to infinity and underflow
  // to subnormals, requantization that saturates both ways or rounds everything to zp.
  const Operands o = random_operands(37, 45, 130, IntType::S8, 3);
  const PackedB b = PackedB::pack(o.bv());
  const cuda::DeviceWeights db = cuda::DeviceWeights::upload(o.bv());
  for (float sb : {3.0e38f, 1.0e-38f, 1.4e-45f, FLT_MIN}) {
    const std::vector<float> sa{1.0f, 0.5f}, sbv{sb};
    std::vector<float> cpu(static_cast<size_t>(37 * 45)), gpu(cpu.size());
    const DequantEpilogue e{std::span<const float>(sa.data(), 1), sbv, {}, {}};
    gemm_f32(o.av(), b, e, cpu.data(), 45);
    cuda::gemm_f32_host(o.av(), db, e, gpu.data(), 45);
    expect_same_bits(gpu, cpu, "scale_b " + std::to_string(sb));
  }
  for (const FixedPointScale s : {FixedPointScale::pow2(-20), FixedPointScale::pow2(90), FixedPointScale::from_real(0x1p20),
                                  FixedPointScale::from_real(0x1p-40)}) {
    const std::vector<int32_t> azp{-128}, bias(45, INT32_MAX);
    RequantEpilogue e;
    e.scale = std::span<const FixedPointScale>(&s, 1);
    e.azp = azp;
    e.bias = bias;
    e.out_type = IntType::S16;
    e.out_min = -32768;
    e.out_max = 32767;
    std::vector<int16_t> cpu(static_cast<size_t>(37 * 45)), gpu(cpu.size());
    gemm_requant(o.av(), b, e, cpu.data(), 45);
    cuda::gemm_requant_host(o.av(), db, e, gpu.data(), 45);
    expect_same_bits(gpu, cpu, "requant shift " + std::to_string(s.shift));
  }
}

// Device buffers: A read from an odd byte offset with an odd row stride (the kernel's byte
// loads, not cp.async), outputs into a wider row stride, on a stream of the caller's.
TEST(GemmOnGpu, DeviceBuffersWithUnalignedRows) {
  FIXQ_REQUIRE_GPU();
  const int64_t M = 70, N = 50, K = 77, lda = 83, ldc = 61;
  const Operands o = random_operands(M, N, K, IntType::U8, 5);
  std::vector<uint8_t> strided(static_cast<size_t>(M * lda + 1), 0);
  for (int64_t m = 0; m < M; ++m)
    std::copy_n(o.a.begin() + m * K, K, strided.begin() + 1 + m * lda);
  uint8_t* da = nullptr;
  int32_t* dc = nullptr;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaMalloc(&da, strided.size()), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dc, static_cast<size_t>(M * ldc * 4)), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(da, strided.data(), strided.size(), cudaMemcpyHostToDevice), cudaSuccess);
  const cuda::DeviceWeights db = cuda::DeviceWeights::upload(o.bv());
  const PackedB b = PackedB::pack(o.bv());
  std::vector<int32_t> cpu(static_cast<size_t>(M * N));
  gemm_s32(o.av(), b, cpu.data(), N);
  for (cuda::GemmKernel kern : {cuda::GemmKernel::TensorCore, cuda::GemmKernel::Reference}) {
    cuda::gemm_s32(MatrixView{IntType::U8, da + 1, M, K, lda}, db, dc, ldc, {stream, kern});
    std::vector<int32_t> wide(static_cast<size_t>(M * ldc)), gpu;
    ASSERT_EQ(cudaMemcpyAsync(wide.data(), dc, wide.size() * 4, cudaMemcpyDeviceToHost, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    for (int64_t m = 0; m < M; ++m) gpu.insert(gpu.end(), wide.begin() + m * ldc, wide.begin() + m * ldc + N);
    expect_same_bits(gpu, cpu, kern == cuda::GemmKernel::Reference ? "reference" : "tensor cores");
  }
  cudaStreamDestroy(stream);
  cudaFree(da);
  cudaFree(dc);
}

}  // namespace
}  // namespace fixq
