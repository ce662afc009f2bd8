// fixq bench bf16: fixq's bf16 x bf16 -> f32 GEMM against oneDNN's bf16 matmul, single
// thread, same process, same inputs; then the measured vdpbf16ps peak. CSV on stdout.
// Without oneDNN (FIXQ_PEER_ONEDNN unset), or where oneDNN has no bf16 matmul for this CPU
// (oneDNN 2.x runs bf16 on AVX-512 CPUs only), fixq alone, its peer columns empty.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <random>
#include <vector>

#include "compare/compare.h"
#include "compare/peak.h"
#include "compare/timing.h"
#include "fixq/bf16.h"
#include "fixq/cpu.h"
#include "fixq/kernels.h"
#include "fixq/error.h"
#if FIXQ_PEER_ONEDNN
#include "peers/onednn.h"
#endif

namespace fixq::bench {

namespace {

struct Shape3 {
  int64_t m, n, k;
};
const Shape3 kShapes[] = {{1, 4096, 4096}, {16, 3072, 1024}, {128, 4096, 4096}, {2048, 2048, 2048}};

}  // namespace

void bench_bf16(const Bf16BenchOptions& o) {
#if FIXQ_PEER_ONEDNN
  peers::onednn_single_thread();
  std::printf("# fixq kernel: %s (bf16 x bf16 -> f32, vdpbf16ps semantics); vs %s matmul bf16 x bf16 -> f32, "
              "1 thread, median of 5 samples, %s\n",
              active_kernel("bf16 dot/gemm").c_str(), peers::onednn_version_str().c_str(), bench_clock_name());
#else
  std::fprintf(stderr, "fixq: note: %s\n", onednn_missing_note().c_str());
  std::printf("# fixq kernel: %s (bf16 x bf16 -> f32, vdpbf16ps semantics), 1 thread, median of 5 samples, %s; %s\n",
              active_kernel("bf16 dot/gemm").c_str(), bench_clock_name(), onednn_missing_note().c_str());
#endif
  std::printf("M,N,K,fixq_gflops,onednn_gflops,ratio\n");
  [[maybe_unused]] bool peer_refused = false;
  std::mt19937 rng(1);
  std::normal_distribution<float> g;
  for (const Shape3& s : kShapes) {
    if (o.quick && s.m * s.n * s.k > (int64_t{1} << 27)) continue;
    std::vector<float> af(static_cast<std::size_t>(s.m * s.k)), wf(static_cast<std::size_t>(s.n * s.k));
    for (float& x : af) x = g(rng);
    for (float& x : wf) x = g(rng) * 0.05f;
    const std::vector<uint16_t> a = bf16::from_float(af), w = bf16::from_float(wf);
    const bf16::PackedB pb = bf16::PackedB::pack(w, s.n, s.k);
    std::vector<float> c(static_cast<std::size_t>(s.m * s.n));
    const double t_fixq = median_seconds_per_call([&] { bf16::gemm(a.data(), s.m, s.k, pb, c.data(), s.n); });
    const double flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
    const double g_fixq = flops / t_fixq / 1e9;
    // The shape's row: fixq, then oneDNN and the ratio where oneDNN ran (g_dnnl > 0).
    auto print_row = [&](double g_dnnl) {
      std::printf("%lld,%lld,%lld,%.2f", static_cast<long long>(s.m), static_cast<long long>(s.n),
                  static_cast<long long>(s.k), g_fixq);
      if (g_dnnl > 0) std::printf(",%.2f,%.3f\n", g_dnnl, g_fixq / g_dnnl);
      else std::printf(",,\n");
      std::fflush(stdout);
    };
#if FIXQ_PEER_ONEDNN
    // oneDNN refuses the primitive on CPUs without AVX-512 (an AVX2 machine): say so once
    // and time fixq alone, as without oneDNN.
    std::unique_ptr<peers::OnednnBf16Matmul> made;
    try {
      made = std::make_unique<peers::OnednnBf16Matmul>(a.data(), w.data(), s.m, s.n, s.k);
    } catch (const std::exception& e) {
      if (!peer_refused) std::printf("# oneDNN has no bf16 matmul on this CPU (%s): fixq timed alone\n", e.what());
      peer_refused = true;
    }
    if (made == nullptr) {
      print_row(0);
      continue;
    }
    peers::OnednnBf16Matmul& peer = *made;
    const double t_dnnl = median_seconds_per_call([&] { peer.run(); });
    // Same products, other summation orders: the results agree to float32 rounding.
    double worst = 0.0, scale = 0.0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      worst = std::max(worst, std::abs(double{c[i]} - peer.output()[i]));
      scale = std::max(scale, std::abs(double{c[i]}));
    }
    require(worst <= 1e-3 * (scale + 1.0), "bench bf16: fixq and oneDNN differ by ", worst, " at ", s.m, "x", s.n,
            "x", s.k);
    const double g_dnnl = flops / t_dnnl / 1e9;
    std::printf("# oneDNN implementation: %s\n", peer.implementation().c_str());
    print_row(g_dnnl);
#else
    print_row(0);
#endif
  }
  if (cpu_supports(Isa::Avx512Bf16)) {
    std::printf("vdpbf16ps_peak_gflops,%.1f\n", vdpbf16ps_peak_flops() / 1e9);
  } else {
    std::printf("vdpbf16ps_peak_gflops,unavailable (this CPU has no AVX512_BF16)\n");
  }
}

}  // namespace fixq::bench
