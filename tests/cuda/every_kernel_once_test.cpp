// Every GPU kernel once on small inputs, each result against the CPU: the reduced set that
// scripts/gpu_check.sh runs under compute-sanitizer's memcheck, racecheck and synccheck
// (`--gtest_filter=EveryKernelOnce.*`), where kernels run tens of times slower.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

#include "cuda/gpu_test_util.h"
#include "fixq/cuda.h"
#include "fixq/gemm.h"

namespace fixq {
namespace {

using cuda_test::expect_same_bits;

// Each tile of the tensor-core kernel (M = 5, 40, 130), each epilogue, A read by cp.async
// and byte by byte, and the reference kernel.
TEST(EveryKernelOnce, Gemm) {
  FIXQ_REQUIRE_GPU();
  const int64_t N = 40, K = 70;
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
  for (int64_t M : {5, 40, 130})
    for (int64_t lda : {K, int64_t{80}}) {  // 80: 16-byte rows, cp.async; 70: byte loads
      std::vector<uint8_t> a(static_cast<size_t>(M * lda));
      for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i * 91 % 256);
      const MatrixView av{IntType::U8, a.data(), M, K, lda};
      for (cuda::GemmKernel kern : {cuda::GemmKernel::TensorCore, cuda::GemmKernel::Reference}) {
        const std::string what = "M=" + std::to_string(M) + " lda=" + std::to_string(lda);
        std::vector<int32_t> c(static_cast<size_t>(M * N)), cc(c.size());
        gemm_s32(av, packed, c.data(), N);
        cuda::gemm_s32_host(av, w, cc.data(), N, {nullptr, kern});
        expect_same_bits(cc, c, what + " s32");
        std::vector<float> d(static_cast<size_t>(M * N)), dd(d.size());
        gemm_f32(av, packed, {sa, sb, bias, azp}, d.data(), N);
        cuda::gemm_f32_host(av, w, {sa, sb, bias, azp}, dd.data(), N, {nullptr, kern});
        expect_same_bits(dd, d, what + " f32");
        std::vector<int8_t> y(static_cast<size_t>(M * N)), yy(y.size());
        gemm_requant(av, packed, rq, y.data(), N);
        cuda::gemm_requant_host(av, w, rq, yy.data(), N, {nullptr, kern});
        expect_same_bits(yy, y, what + " requant");
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
