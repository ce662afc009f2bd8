// fixq bench gru --device cuda: the integer GRU on the GPU (1 layer, C = H, torch's
// initialisation), int8 and int16, forward_device over device buffers on one stream,
// CUDA-event medians per forward divided by T. CSV H,batch,impl,us_per_step; '#' lines name
// the GPU and the kernels each row ran.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/bench_cuda.h"
#include "cuda/event_timer.h"
#include "cuda/runtime.h"
#include "fixq/cuda.h"
#include "fixq/error.h"
#include "fixq/qgru.h"
#include "gru/float_test_util.h"

namespace fixq::bench {

namespace {

// "256,512" -> {256, 512}, each in [1, max]; `what` names the option in the error.
std::vector<int64_t> integers(const std::string& text, const std::vector<int64_t>& fallback, int64_t max, const char* what) {
  if (text.empty()) return fallback;
  std::vector<int64_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || v < 1 || v > max) fail(what, ": '", item, "' is not an integer in [1, ", max, "]");
    out.push_back(v);
  }
  return out;
}

QuantizedGru quantized(const GruModel& m, const GruQuantConfig& config) {
  ObserverConfig oc;
  oc.method = CalibMethod::MinMax;
  GruCalibrator cal(m, config, oc);
  const std::vector<float> x = gru_test::random_values(static_cast<size_t>(16 * 4 * m.input_size), 5, 1.0f);
  cal.observe(x.data(), Shape{16, 4, m.input_size});
  return QuantizedGru(m, cal.finalize());
}

}  // namespace

void bench_gru_cuda(const GruCudaBenchOptions& o) {
  const std::vector<int64_t> hidden = integers(o.hidden, o.quick ? std::vector<int64_t>{64, 128} : std::vector<int64_t>{256, 512, 1024}, 4096, "--hidden");
  const std::vector<int64_t> batches = integers(o.batch, o.quick ? std::vector<int64_t>{1, 4} : std::vector<int64_t>{1, 16, 64}, 1024, "--batch");
  const int64_t T = integers(o.steps, {o.quick ? 20 : 100}, 10000, "--steps").at(0);
  const cuda::DeviceInfo d = cuda::usable_device(0);
  std::printf("# GPU 0: %s, compute capability %d.%d, %d multiprocessors; CUDA events, median of 7 samples\n",
              d.name.c_str(), d.major, d.minor, d.multiprocessors);
  std::printf("H,batch,impl,us_per_step\n");
  cuda::detail::DeviceScope scope(0);
  cudaStream_t stream = nullptr;
  cuda::detail::check(cudaStreamCreate(&stream), "creating the bench's stream");
  for (int64_t H : hidden) {
    const GruModel model = gru_test::torch_init_model(H, H, 1, false, 42);
    for (const auto& [impl, config] : {std::pair{"fixq_int8_cuda", GruQuantConfig::int8(ScaleKind::PowerOfTwo)},
                                       std::pair{"fixq_int16_cuda", GruQuantConfig::int16(ScaleKind::PowerOfTwo)}}) {
      const cuda::GpuGru gpu(quantized(model, config));
      for (int64_t B : batches) {
        const std::vector<float> x = gru_test::random_values(static_cast<size_t>(T * B * H), 7, 1.0f);
        cuda::detail::DeviceBuffer dx(T * B * H * 4, "the bench input"), dy(T * B * H * 4, "the bench output");
        cuda::detail::copy_to_device(dx.get(), x.data(), T * B * H * 4, stream, "the bench input");
        cuda::GpuRunOptions run;
        run.stream = stream;
        // Each forward_device enqueues the whole forward before it waits for the input
        // check's event (src/cuda/gru.cpp), so the next call's kernels queue up behind this
        // one's and the events time the GPU's work, not a host round trip in mid-forward.
        const double us = median_us_per_call(
            [&](cudaStream_t) { gpu.forward_device(dx.as<float>(), Shape{T, B, H}, dy.as<float>(), nullptr, run); }, stream);
        std::printf("# %s H=%lld B=%lld: %s\n", impl, static_cast<long long>(H), static_cast<long long>(B),
                    gpu.kernels().at(0).c_str());
        std::printf("%lld,%lld,%s,%.3f\n", static_cast<long long>(H), static_cast<long long>(B), impl, us / static_cast<double>(T));
        std::fflush(stdout);
      }
    }
  }
  cudaStreamDestroy(stream);
}

}  // namespace fixq::bench
