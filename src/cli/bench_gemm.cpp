// fixq bench gemm: fixq's u8 x s8 -> s32 GEMM against oneDNN's dnnl_gemm_u8s8s32, single
// thread, same process, same inputs; CSV on stdout.
#include <oneapi/dnnl/dnnl.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "cli/bench.h"
#include "cli/peak.h"
#include "cli/timing.h"
#include "fixq/cpu.h"
#include "fixq/error.h"
#include "fixq/gemm.h"

namespace fixq::cli {

namespace {

struct Shape3 {
  int64_t m, n, k;
};

const Shape3 kShapes[] = {{1, 768, 256},     {1, 3072, 1024},   {1, 4096, 4096},  {4, 1536, 512},
                          {16, 3072, 1024},  {128, 4096, 4096}, {2048, 2048, 2048}};

}  // namespace

void bench_gemm(const BenchOptions& o) {
  // One thread each: setting OMP_NUM_THREADS here would be too late (libgomp read it when
  // it loaded), so OpenMP is told directly.
  onednn_single_thread();
  set_gemm_threads(1);
  std::printf("# fixq kernel: %s; vs oneDNN %d.%d.%d dnnl_gemm_u8s8s32, 1 thread, median of 5 samples, %s\n",
              active_kernel("gemm u8 x s8").c_str(), dnnl_version()->major, dnnl_version()->minor,
              dnnl_version()->patch, bench_clock_name());
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
    std::vector<int32_t> c_fixq(static_cast<size_t>(s.m * s.n)), c_dnnl(c_fixq.size());
    const double t_fixq = median_seconds_per_call([&] { gemm_s32(av, pb, c_fixq.data(), s.n); });
    const int32_t co = 0;
    auto run_dnnl = [&] {
      const dnnl_status_t st = dnnl_gemm_u8s8s32('N', 'T', 'F', s.m, s.n, s.k, 1.0f, a.data(), s.k, 0, b.data(), s.k, 0,
                                                 0.0f, c_dnnl.data(), s.n, &co);
      if (st != dnnl_success) fail("oneDNN dnnl_gemm_u8s8s32 failed with status ", static_cast<int>(st));
    };
    const double t_dnnl = median_seconds_per_call(run_dnnl);
    // fixq is exact by construction (tested); oneDNN may saturate intermediate sums on
    // CPUs without VNNI (its documented int8 caveat): count the elements where it did.
    int64_t differ = 0;
    for (size_t i = 0; i < c_fixq.size(); ++i) differ += c_fixq[i] != c_dnnl[i];
    const double ops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
    const double g_fixq = ops / t_fixq / 1e9, g_dnnl = ops / t_dnnl / 1e9;
    std::printf("%lld,%lld,%lld,%.2f,%.2f,%.3f,%.2f\n", static_cast<long long>(s.m), static_cast<long long>(s.n),
                static_cast<long long>(s.k), g_fixq, g_dnnl, g_fixq / g_dnnl,
                100.0 * static_cast<double>(differ) / static_cast<double>(c_fixq.size()));
    std::fflush(stdout);
  }
  if (cpu_supports(Isa::Avx512)) {
    std::printf("vpdpbusd_peak_gops,%.1f\n", vpdpbusd_peak_ops() / 1e9);
  } else {
    std::printf("vpdpbusd_peak_gops,unavailable (this CPU has no AVX-512 VNNI)\n");
  }
  if (cpu_supports(Isa::Avx2)) std::printf("vpmaddwd_peak_gops,%.1f\n", vpmaddwd_peak_ops() / 1e9);
}

}  // namespace fixq::cli
