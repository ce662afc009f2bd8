// fixq bench bf16: fixq's bf16 x bf16 -> f32 GEMM against oneDNN's bf16 matmul (the peer
// picks its own kernel, e.g. brg:avx512_core_bf16, and its own weight layout, reordered
// before timing as fixq's PackedB is packed before timing), single thread, same process,
// same inputs; then the measured vdpbf16ps peak. CSV on stdout.
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cli/bench.h"
#include "cli/peak.h"
#include "cli/timing.h"
#include "fixq/bf16.h"
#include "fixq/cpu.h"
#include "fixq/error.h"

#if __has_include(<oneapi/dnnl/dnnl.hpp>)
#include <oneapi/dnnl/dnnl.hpp>
#define FIXQ_BENCH_ONEDNN 1
#endif

namespace fixq::cli {

namespace {

struct Shape3 {
  int64_t m, n, k;
};
const Shape3 kShapes[] = {{1, 4096, 4096}, {16, 3072, 1024}, {128, 4096, 4096}, {2048, 2048, 2048}};

#ifdef FIXQ_BENCH_ONEDNN
// C = A (m x k, bf16) times W^T, W the n x k weights (oneDNN's k x n weights in layout
// "ba"), reordered to the layout the primitive wants.
class OnednnMatmul {
 public:
  OnednnMatmul(const Shape3& s, const std::vector<uint16_t>& a, const std::vector<uint16_t>& w)
      : eng_(dnnl::engine::kind::cpu, 0), strm_(eng_) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const dnnl::memory::desc src({s.m, s.k}, dt::bf16, tag::ab), dst({s.m, s.n}, dt::f32, tag::ab);
    const dnnl::memory::desc wany({s.k, s.n}, dt::bf16, tag::any), wuser({s.k, s.n}, dt::bf16, tag::ba);
    pd_ = dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, wany, dst), eng_);
    prim_ = dnnl::matmul(pd_);
    src_ = dnnl::memory(src, eng_, const_cast<uint16_t*>(a.data()));
    dst_ = dnnl::memory(dst, eng_);
    const dnnl::memory user(wuser, eng_, const_cast<uint16_t*>(w.data()));
    wei_ = dnnl::memory(pd_.weights_desc(), eng_);
    dnnl::reorder(user, wei_).execute(strm_, const_cast<dnnl::memory&>(user), wei_);
    strm_.wait();
  }
  void run() {
    prim_.execute(strm_, {{DNNL_ARG_SRC, src_}, {DNNL_ARG_WEIGHTS, wei_}, {DNNL_ARG_DST, dst_}});
    strm_.wait();
  }
  const float* out() const { return static_cast<const float*>(dst_.get_data_handle()); }
  std::string impl() const { return pd_.impl_info_str(); }

 private:
  dnnl::engine eng_;
  dnnl::stream strm_;
  dnnl::matmul::primitive_desc pd_;
  dnnl::matmul prim_;
  dnnl::memory src_, dst_, wei_;
};
#endif

}  // namespace

void bench_bf16(const BenchOptions& o) {
  std::printf("# fixq kernel: %s (bf16 x bf16 -> f32, vdpbf16ps semantics), 1 thread, median of 5 samples, %s\n",
              active_kernel("bf16 dot/gemm").c_str(), bench_clock_name());
#ifdef FIXQ_BENCH_ONEDNN
  onednn_single_thread();
  std::printf("# peer: %s matmul bf16 x bf16 -> f32\n", onednn_version_str().c_str());
#else
  std::printf("# peer: oneDNN is absent from this build: its columns are empty\n");
#endif
  std::printf("M,N,K,fixq_gflops,onednn_gflops,ratio\n");
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
#ifdef FIXQ_BENCH_ONEDNN
    OnednnMatmul peer(s, a, w);
    const double t_dnnl = median_seconds_per_call([&] { peer.run(); });
    // Same products, other summation orders: the results agree to float32 rounding.
    double worst = 0.0, scale = 0.0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      worst = std::max(worst, std::abs(double{c[i]} - peer.out()[i]));
      scale = std::max(scale, std::abs(double{c[i]}));
    }
    require(worst <= 1e-3 * (scale + 1.0), "bench bf16: fixq and oneDNN differ by ", worst, " at ", s.m, "x", s.n, "x",
            s.k);
    const double g_dnnl = flops / t_dnnl / 1e9;
    if (&s == &kShapes[0]) std::printf("# oneDNN implementation: %s\n", peer.impl().c_str());
    std::printf("%lld,%lld,%lld,%.2f,%.2f,%.3f\n", static_cast<long long>(s.m), static_cast<long long>(s.n),
                static_cast<long long>(s.k), g_fixq, g_dnnl, g_fixq / g_dnnl);
#else
    std::printf("%lld,%lld,%lld,%.2f,,\n", static_cast<long long>(s.m), static_cast<long long>(s.n),
                static_cast<long long>(s.k), g_fixq);
#endif
    std::fflush(stdout);
  }
  if (cpu_supports(Isa::Avx512Bf16)) {
    std::printf("vdpbf16ps_peak_gflops,%.1f\n", vdpbf16ps_peak_flops() / 1e9);
  } else {
    std::printf("vdpbf16ps_peak_gflops,unavailable (this CPU has no AVX512_BF16)\n");
  }
}

}  // namespace fixq::cli
