// fixq::active_kernels() gathers each module's report of the kernel it picked (src/report/
// kernel_report.cpp). On every kernel path, each operation of the report is run for real and
// the family of the kernel that ran, as its registry traced it (KernelRegistry::last_picked),
// must be the family the module reported: a module cannot report one kernel and run another.
#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bf16/kernels.h"
#include "fixq/bf16.h"
#include "fixq/gemm.h"
#include "fixq/gguf.h"
#include "fixq/gru.h"
#include "fixq/kernels.h"
#include "fixq/lowp.h"
#include "fixq/weightonly.h"
#include "fixq/qgru.h"
#include "fixq/quant.h"
#include "gemm/kernels.h"
#include "gguf/kernels.h"
#include "gru/float/kernels.h"
#include "gru/float_test_util.h"
#include "gru/int/fast/loop.h"
#include "lowp/kernels.h"
#include "model/kernels.h"
#include "model/model_builder.h"
#include "weightonly/layout.h"
#include "quant/kernels.h"
#include "support/kernel_paths.h"

namespace fixq {
namespace {

std::vector<float> randoms(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

// One run of an operation, and the registry whose trace names the family that ran it.
struct Probe {
  std::function<void()> run;
  std::function<int()> traced;
};

template <class Table>
std::function<int()> trace_of(const cpu_detail::KernelRegistry<Table>& r) {
  return [&r] { return r.last_picked(); };
}

void gemm_run(IntType a_type, IntType b_type, int64_t m = 3) {
  const int64_t n = 37, k = 70;
  std::vector<int16_t> a16(static_cast<size_t>(m * k), 3), b16(static_cast<size_t>(n * k), -2);
  std::vector<int8_t> a8(a16.begin(), a16.end()), b8(b16.begin(), b16.end());
  const void* a = a_type == IntType::S16 ? static_cast<const void*>(a16.data()) : a8.data();
  const void* b = b_type == IntType::S16 ? static_cast<const void*>(b16.data()) : b8.data();
  const PackedB packed = PackedB::pack(MatrixView{b_type, b, n, k, k});
  std::vector<int64_t> c(static_cast<size_t>(m * n));
  gemm_s64(MatrixView{a_type, a, m, k, k}, packed, c.data(), n);
}

// Every operation of the report, by its name.
std::map<std::string, Probe> probes() {
  std::map<std::string, Probe> p;
  const auto gemm = trace_of(gemm_detail::registry());
  p["gemm u8 x s8"] = {[] { gemm_run(IntType::U8, IntType::S8); }, gemm};
  p["gemm s8 x s8"] = {[] { gemm_run(IntType::S8, IntType::S8); }, gemm};
  p["gemm s16 x s8"] = {[] { gemm_run(IntType::S16, IntType::S8); }, gemm};
  p["gemm u8/s8 x s16"] = {[] { gemm_run(IntType::U8, IntType::S16); }, gemm};
  p["gemm u8 x s8, 8+ rows"] = {[] { gemm_run(IntType::U8, IntType::S8, 20); }, gemm};
  p["gemm s8 x s8, 8+ rows"] = {[] { gemm_run(IntType::S8, IntType::S8, 20); }, gemm};
  p["gemm s16 x s8, 8+ rows"] = {[] { gemm_run(IntType::S16, IntType::S8, 20); }, gemm};
  p["gru step"] = {[] {
                     const GruModel m = gru_test::random_model(5, 19, 1, false, 7);
                     const std::vector<float> x = randoms(4 * 2 * 5, 3);
                     GruCalibrator cal(m, GruQuantConfig::int8(ScaleKind::PowerOfTwo), {});
                     cal.observe(x.data(), Shape{4, 2, 5});
                     QuantizedGru(m, cal.finalize()).forward(x.data(), Shape{4, 2, 5});
                   },
                   trace_of(gru_detail::registry())};
  p["gru float"] = {[] {
                      const GruModel m = gru_test::random_model(5, 19, 1, false, 7);
                      const std::vector<float> x = randoms(4 * 2 * 5, 3);
                      gru_forward(m, x.data(), Shape{4, 2, 5});
                    },
                    trace_of(gru_float::registry())};
  p["model requantize"] = {[] {
                             test::GraphBuilder g;
                             g.output(g.linear("dense", g.input("x", 19), 21));
                             const std::vector<std::vector<ModelArray>> calib{test::random_inputs(g.m, 2, 5, 1)};
                             QuantizedModel::quantize(g.m, calib, {}).forward(test::random_inputs(g.m, 2, 5, 2));
                           },
                           trace_of(model_detail::registry())};
  p["quantize int8"] = {[] {
                          const std::vector<float> x = randoms(41, 5);
                          QuantScheme s;
                          const QuantParams q = params_from_tensor(x.data(), Shape{41}, s);
                          std::vector<int8_t> out(41);
                          quantize(x.data(), Shape{41}, q, out.data());
                        },
                        trace_of(quant_detail::registry())};
  p["float8/6/4 convert"] = {[] {
                               const std::vector<float> x = randoms(41, 5);
                               std::vector<uint8_t> codes(41);
                               lowp_encode(LowpType::E4m3fn, x.data(), 41, codes.data());
                               lowp_decode(LowpType::E4m3fn, codes.data(), 41, std::vector<float>(41).data());
                             },
                             trace_of(lowp_detail::registry())};
  p["packed weight-only matmul"] = {[] {
                                      const std::vector<float> w = randoms(256 * 40, 9), x = randoms(3 * 256, 4);
                                      const PackedWeights pw = PackedWeights::quantize(w.data(), 256, 40, {});
                                      std::vector<float> y(3 * 40);
                                      weight_only_matmul(x.data(), 3, pw, y.data());
                                    },
                                    trace_of(weightonly_detail::registry())};
  p["bf16 dot/gemm"] = {[] {
                          const std::vector<uint16_t> b = bf16::from_float(randoms(40 * 33, 2));
                          const std::vector<float> a = randoms(3 * 33, 8);
                          std::vector<float> c(3 * 40);
                          bf16::gemm(a.data(), 3, 33, bf16::PackedB::pack(b, 40, 33), c.data(), 40);
                        },
                        trace_of(bf16_detail::registry())};
  return p;
}

class KernelReport : public ::testing::TestWithParam<test::KernelPath> {};

TEST_P(KernelReport, EachModuleReportsTheKernelItRuns) {
  test::PathScope scope(GetParam());
  const std::map<std::string, Probe> all = probes();
  int checked = 0;
  for (const KernelChoice& c : active_kernels()) {
    if (c.operation.rfind("gguf ", 0) == 0) continue;  // per format, below
    const auto it = all.find(c.operation);
    ASSERT_NE(it, all.end()) << "the report names an operation this test cannot run: " << c.operation;
    it->second.run();
    EXPECT_EQ(it->second.traced(), static_cast<int>(c.family))
        << c.operation << ": reported " << to_string(c.family) << " (" << c.kernel << ") but ran "
        << to_string(static_cast<Isa>(it->second.traced()));
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(all.size()));
}

// The GGUF formats' kernels come from different families on one CPU: each format's
// reported family (fixq::gguf::active_kernel_family, which the report's rows gather) is the
// one whose kernel runs it.
TEST_P(KernelReport, EachGgufFormatReportsTheKernelItRuns) {
  test::PathScope scope(GetParam());
  const auto& r = gguf::detail::registry();
  const std::vector<float> x = randoms(512, 6);
  for (const gguf::TypeTraits& t : gguf::all_types()) {
    const std::vector<std::byte> packed = gguf::quantize(t.type, x);
    gguf::dequantize(t.type, packed);
    EXPECT_EQ(to_string(static_cast<Isa>(r.last_picked())), gguf::active_kernel_family(t.type, "dequantize")) << t.name;
    if (!t.dot_type) continue;
    const std::vector<std::byte> y = gguf::quantize(*t.dot_type, x);
    gguf::matvec(t.type, packed, 1, y);
    EXPECT_EQ(to_string(static_cast<Isa>(r.last_picked())), gguf::active_kernel_family(t.type, "matvec")) << t.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, KernelReport, ::testing::ValuesIn(test::kernel_paths()),
                         [](const auto& info) { return info.param.name(); });

}  // namespace
}  // namespace fixq
