// Every GPU kernel once on small inputs, each result against the CPU: the reduced set that
// scripts/gpu_check.sh runs under compute-sanitizer's memcheck, racecheck and synccheck
// (`--gtest_filter=EveryKernelOnce.*`), where kernels run tens of times slower.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda/gemm_args.h"
#include "cuda/gpu_test_util.h"
#include "fixq/cuda.h"
#include "fixq/gemm.h"

namespace fixq {
namespace {

using cuda_test::expect_same_bits;

// A's layouts in device memory: its first byte `offset` bytes past a cudaMalloc'd base (256-
// byte aligned) and its row stride. The tensor-core kernel loads aligned rows by cp.async
// and any others byte by byte (a_rows_take_cp_async); the host-buffer calls always copy A
// to aligned rows, so only device buffers reach the byte loads.
struct ALayout {
  int64_t offset, lda;
};
constexpr int64_t kK = 70;
constexpr ALayout kALayouts[] = {{0, 80}, {1, 83}};

// The layouts reach both load paths (host-side: what the GPU test below runs under the
// sanitizers must include the byte loads, issue 47 §8).
TEST(EveryKernelOnceLayouts, ReachBothLoadPathsOfA) {
  alignas(256) static unsigned char base[256 + 83 * 130];
  bool async = false, bytes = false;
  for (const ALayout& l : kALayouts) {
    (cuda::detail::a_rows_take_cp_async(base + l.offset, l.lda) ? async : bytes) = true;
    EXPECT_GE(l.lda, kK);
  }
  EXPECT_TRUE(async);
  EXPECT_TRUE(bytes);
}

// Each tile of the tensor-core kernel (M = 5, 40, 130), each epilogue, A read by cp.async
// and byte by byte (device buffers of kALayouts), the host-buffer calls, and the reference
// kernel.
TEST(EveryKernelOnce, Gemm) {
  FIXQ_REQUIRE_GPU();
  const int64_t N = 40, K = kK;
  std::vector<int8_t> b(static_cast<size_t>(N * K));
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<int8_t>(i * 37 % 255 - 127);
  const MatrixView bv{IntType::S8, b.data(), N, K, K};
  const PackedB packed = PackedB::pack(bv);
  const cuda::DeviceWeights w = cuda::DeviceWeights::upload(bv);
  const std::vector<float> sa{0.01f}, sb(static_cast<size_t>(N), 0.02f), bias(static_cast<size_t>(N), 0.5f);
  const std::vector<int32_t> azp{7};
  const std::vector<FixedPointScale> scale{FixedPointScale::from_real(0.003)};
  RequantEpilogue rq;
  rq.scale = scale;
  rq.azp = azp;
  const DequantEpilogue dq{sa, sb, bias, azp};
  const cuda::DeviceDequantEpilogue ddq = cuda::DeviceDequantEpilogue::upload(dq, w);
  const cuda::DeviceRequantEpilogue drq = cuda::DeviceRequantEpilogue::upload(rq, w);
  for (int64_t M : {5, 40, 130}) {
    std::vector<uint8_t> a(static_cast<size_t>(M * K));
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i * 91 % 256);
    const MatrixView av{IntType::U8, a.data(), M, K, K};
    std::vector<int32_t> c(static_cast<size_t>(M * N));
    std::vector<float> d(static_cast<size_t>(M * N));
    std::vector<int8_t> y(static_cast<size_t>(M * N));
    gemm_s32(av, packed, c.data(), N);
    gemm_f32(av, packed, dq, d.data(), N);
    gemm_requant(av, packed, rq, y.data(), N);
    const std::string m = "M=" + std::to_string(M);
    for (cuda::GemmKernel kern : {cuda::GemmKernel::TensorCore, cuda::GemmKernel::Reference}) {
      const std::string what = m + (kern == cuda::GemmKernel::Reference ? " reference" : " tensor cores");
      std::vector<int32_t> cc(c.size());
      std::vector<float> dd(d.size());
      std::vector<int8_t> yy(y.size());
      cuda::gemm_s32_host(av, w, cc.data(), N, {nullptr, kern});
      cuda::gemm_f32_host(av, w, dq, dd.data(), N, {nullptr, kern});
      cuda::gemm_requant_host(av, w, rq, yy.data(), N, {nullptr, kern});
      expect_same_bits(cc, c, what + " host s32");
      expect_same_bits(dd, d, what + " host f32");
      expect_same_bits(yy, y, what + " host requant");
    }
    for (const ALayout& l : kALayouts) {
      uint8_t* base = nullptr;
      void* out = nullptr;
      ASSERT_EQ(cudaMalloc(&base, static_cast<size_t>(l.offset + M * l.lda)), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&out, static_cast<size_t>(M * N * 4)), cudaSuccess);
      uint8_t* da = base + l.offset;
      ASSERT_EQ(cudaMemcpy2D(da, static_cast<size_t>(l.lda), a.data(), static_cast<size_t>(K), static_cast<size_t>(K),
                             static_cast<size_t>(M), cudaMemcpyHostToDevice),
                cudaSuccess);
      const MatrixView dav{IntType::U8, da, M, K, l.lda};
      const std::string what = m + " lda=" + std::to_string(l.lda) +
                               (cuda::detail::a_rows_take_cp_async(da, l.lda) ? " cp.async" : " byte loads");
      std::vector<int32_t> cc(c.size());
      std::vector<float> dd(d.size());
      std::vector<int8_t> yy(y.size());
      cuda::gemm_s32(dav, w, static_cast<int32_t*>(out), N, {nullptr, cuda::GemmKernel::TensorCore});
      ASSERT_EQ(cudaMemcpy(cc.data(), out, cc.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
      cuda::gemm_f32(dav, w, ddq, static_cast<float*>(out), N, {nullptr, cuda::GemmKernel::TensorCore});
      ASSERT_EQ(cudaMemcpy(dd.data(), out, dd.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
      cuda::gemm_requant(dav, w, drq, out, N, {nullptr, cuda::GemmKernel::TensorCore});
      ASSERT_EQ(cudaMemcpy(yy.data(), out, yy.size(), cudaMemcpyDeviceToHost), cudaSuccess);
      expect_same_bits(cc, c, what + " s32");
      expect_same_bits(dd, d, what + " f32");
      expect_same_bits(yy, y, what + " requant");
      cudaFree(base);
      cudaFree(out);
    }
  }
}

// Each GRU path (reference, persistent, graph) and each pair of state and R widths, two
// bidirectional layers with ragged lengths and h0.
TEST(EveryKernelOnce, Gru) {
  FIXQ_REQUIRE_GPU();
  const GruQuantConfig configs[] = {
      GruQuantConfig::int8(ScaleKind::PowerOfTwo), GruQuantConfig::int16(ScaleKind::Multiplier),
      GruQuantConfig::from_json(R"({"version": 1, "base": "int8", "scales": "pow2", "bits": {"R": 16, "Rh": 16}})"),
      GruQuantConfig::from_json(R"({"version": 1, "base": "int16", "scales": "pow2", "bits": {"h": 8}})")};
  const GruModel m = gru_test::torch_init_model(6, 20, 2, true, 2);
  const int64_t T = 5, B = 3;
  const std::vector<float> x = cuda_test::normal(T * B * 6, 1, 2.0f), h0 = cuda_test::normal(4 * B * 20, 2, 1.0f);
  const std::vector<int64_t> lengths{5, 2, 0};
  GruRunOptions opt;
  opt.h0 = h0.data();
  opt.lengths = lengths;
  for (const GruQuantConfig& config : configs) {
    const QuantizedGru q = cuda_test::quantized_model(m, config, 3);
    const GruOutput cpu = q.forward(x.data(), Shape{T, B, 6}, opt);
    for (const cuda::GpuGruOptions& o : {cuda::GpuGruOptions{0, cuda::GruPath::Reference, true},
                                         cuda::GpuGruOptions{0, cuda::GruPath::Fast, true},
                                         cuda::GpuGruOptions{0, cuda::GruPath::Fast, false}}) {
      const GruOutput gpu = cuda::GpuGru(q, o).forward(x.data(), Shape{T, B, 6}, opt);
      const std::string what = config.to_json() + (o.path == cuda::GruPath::Reference ? " reference" : o.allow_persistent ? " persistent" : " graph");
      expect_same_bits(gpu.y, cpu.y, what + " y");
      expect_same_bits(gpu.h_n, cpu.h_n, what + " h_n");
    }
  }
}

}  // namespace
}  // namespace fixq
