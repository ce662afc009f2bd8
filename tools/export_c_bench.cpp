// Host speed of `fixq gru export-c`'s C beside the library, in one process on one model
// (built and run by tools/bench_export_c.sh): microseconds per time step, batch 1, one
// thread, median of repeats, for
//   export-c    the generated kws_quantize_x + kws_step + kws_dequantize_h per frame;
//   stream      fixq::QuantizedGruStream::step per frame (the library's streaming API);
//   forward     fixq::QuantizedGru::forward over the whole sequence / T (Wx for all steps at
//               once), on the fast path (AVX2 loop) and with FIXQ's scalar reference loop.
// Every row also checks that its outputs equal the generated code's, bit for bit.
//   usage: export_c_bench MODEL.fixq T REPEATS
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "fixq/cpu.h"
#include "fixq/gemm.h"
#include "fixq/qgru.h"

extern "C" {
#include "kws.h"
}

namespace {

double median_us_per_step(const std::function<void()>& f, int repeats, int64_t steps) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count() / static_cast<double>(steps));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s MODEL.fixq T REPEATS\n", argv[0]);
    return 2;
  }
  fixq::set_gemm_threads(1);
  const fixq::QuantizedGru q = fixq::QuantizedGru::load(argv[1]);
  const int64_t T = std::atoll(argv[2]), C = KWS_INPUT_SIZE, H = KWS_HIDDEN_SIZE;
  const int repeats = std::atoi(argv[3]);
  std::mt19937 rng(1);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(T * C));
  for (float& v : x) v = n(rng);

  std::vector<float> y_c(static_cast<size_t>(T * H)), y_lib;
  kws_state s;
  const double c_us = median_us_per_step(
      [&] {
        kws_reset(&s);
        kws_x_t xq[KWS_INPUT_SIZE];
        kws_h_t hq[KWS_HIDDEN_SIZE];
        for (int64_t t = 0; t < T; ++t) {
          kws_quantize_x(&x[static_cast<size_t>(t * C)], xq);
          kws_step(&s, xq, hq);
          kws_dequantize_h(hq, &y_c[static_cast<size_t>(t * H)]);
        }
      },
      repeats, T);
  auto check = [&](const char* what) {
    if (y_lib.size() != y_c.size() || std::memcmp(y_lib.data(), y_c.data(), y_c.size() * sizeof(float)) != 0) {
      std::fprintf(stderr, "export_c_bench: %s differs from the generated C\n", what);
      std::exit(1);
    }
  };
  const double stream_us = median_us_per_step(
      [&] {
        fixq::QuantizedGruStream st(q, 1);
        y_lib.clear();
        for (int64_t t = 0; t < T; ++t) {
          const std::vector<float> h = st.step(&x[static_cast<size_t>(t * C)]);
          y_lib.insert(y_lib.end(), h.begin(), h.end());
        }
      },
      repeats, T);
  check("QuantizedGruStream");
  const double fast_us = median_us_per_step([&] { y_lib = q.forward(x.data(), fixq::Shape{T, 1, C}).y; }, repeats, T);
  check("forward (fast path)");
  fixq::set_isa_override(fixq::Isa::Scalar);
  const double ref_us = median_us_per_step([&] { y_lib = q.forward(x.data(), fixq::Shape{T, 1, C}).y; }, repeats, T);
  check("forward (reference loop)");
  fixq::set_isa_override(std::nullopt);
  std::printf("%lld,%lld,%.3f,%.3f,%.3f,%.3f\n", static_cast<long long>(C), static_cast<long long>(H), c_us, stream_us, fast_us,
              ref_us);
  return 0;
}
