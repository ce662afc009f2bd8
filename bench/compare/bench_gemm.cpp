// fixq bench gemm: fixq's u8 x s8 -> s32 GEMM against oneDNN's dnnl_gemm_u8s8s32, single
// thread, same process, same inputs; CSV on stdout. Without oneDNN (FIXQ_PEER_ONEDNN unset)
// fixq alone, its peer columns empty.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "compare/compare.h"
#include "compare/peak.h"
#include "compare/timing.h"
#include "fixq/cpu.h"
#include "fixq/kernels.h"
#include "fixq/error.h"
#include "fixq/gemm.h"
#if FIXQ_PEER_ONEDNN
#include "peers/onednn.h"
#endif

namespace fixq::bench {

namespace {

struct Shape3 {
  int64_t m, n, k;
};

const Shape3 kShapes[] = {{1, 768, 256},     {1, 3072, 1024},   {1, 4096, 4096},  {4, 1536, 512},
                          {16, 3072, 1024},  {128, 4096, 4096}, {2048, 2048, 2048}};

// The kernel of few rows, and the one of many rows where the CPU has a family for them (AMX).
std::string kernels_line() {
  const std::string few = active_kernel("gemm u8 x s8"), many = active_kernel("gemm u8 x s8, 8+ rows");
  return many == few ? few : few + " (M < 16), " + many + " (M >= 16)";
}

}  // namespace

void bench_gemm(const GemmBenchOptions& o) {
  set_gemm_threads(1);
#if FIXQ_PEER_ONEDNN
  // One thread each: setting OMP_NUM_THREADS here would be too late (libgomp read it when
  // it loaded), so OpenMP is told directly.
  peers::onednn_single_thread();
  std::printf("# fixq kernels: %s; vs %s dnnl_gemm_u8s8s32, 1 thread, median of 5 samples, %s\n",
              kernels_line().c_str(), peers::onednn_version_str().c_str(), bench_clock_name());
#else
  std::fprintf(stderr, "fixq: note: %s\n", onednn_missing_note().c_str());
  std::printf("# fixq kernels: %s, 1 thread, median of 5 samples, %s; %s\n", kernels_line().c_str(),
              bench_clock_name(), onednn_missing_note().c_str());
#endif
  std::printf("M,N,K,fixq_gops,onednn_gops,ratio,onednn_inexact_pct\n");
  std::mt19937 rng(1);
  for (const Shape3& s : kShapes) {
    if (o.quick && s.m * s.n * s.k > (int64_t{1} << 27)) continue;
    std::vector<uint8_t> a(static_cast<size_t>(s.m * s.k));
    std::vector<int8_t> b(static_cast<size_t>(s.n * s.k));
    for (auto& x : a) x = static_cast<uint8_t>(rng());
    for (auto& x : b) x = static_cast<int8_t>(rng());
    const PackedB pb = PackedB::pack(MatrixView{IntType::S8, b.data(), s.n, s.k, s.k});
    const MatrixView av{IntType::U8, a.data(), s.m, s.k, s.k};
    std::vector<int32_t> c_fixq(static_cast<size_t>(s.m * s.n));
    const double t_fixq = median_seconds_per_call([&] { gemm_s32(av, pb, c_fixq.data(), s.n); });
    const double ops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
    const double g_fixq = ops / t_fixq / 1e9;
    std::printf("%lld,%lld,%lld,%.2f", static_cast<long long>(s.m), static_cast<long long>(s.n),
                static_cast<long long>(s.k), g_fixq);
#if FIXQ_PEER_ONEDNN
    std::vector<int32_t> c_dnnl(c_fixq.size());
    const double t_dnnl = median_seconds_per_call(
        [&] { peers::onednn_gemm_u8s8s32(a.data(), b.data(), c_dnnl.data(), s.m, s.n, s.k); });
    // fixq is exact by construction (tested); oneDNN may saturate intermediate sums on
    // CPUs without VNNI (its documented int8 caveat): count the elements where it did.
    int64_t differ = 0;
    for (size_t i = 0; i < c_fixq.size(); ++i) differ += c_fixq[i] != c_dnnl[i];
    const double g_dnnl = ops / t_dnnl / 1e9;
    std::printf(",%.2f,%.3f,%.2f\n", g_dnnl, g_fixq / g_dnnl,
                100.0 * static_cast<double>(differ) / static_cast<double>(c_fixq.size()));
#else
    std::printf(",,,\n");
#endif
    std::fflush(stdout);
  }
  if (cpu_supports(Isa::Avx512)) {
    std::printf("vpdpbusd_peak_gops,%.1f\n", vpdpbusd_peak_ops() / 1e9);
  } else {
    std::printf("vpdpbusd_peak_gops,unavailable (this CPU has no AVX-512 VNNI)\n");
  }
  if (cpu_supports(Isa::Avx2)) std::printf("vpmaddwd_peak_gops,%.1f\n", vpmaddwd_peak_ops() / 1e9);
}

}  // namespace fixq::bench
