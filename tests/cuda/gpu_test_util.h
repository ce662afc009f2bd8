// Helpers of the GPU tests: the skip of a test that needs a device where none is usable,
// bit-for-bit comparison, and quantized GRUs of every configuration from a seed.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/recurrence_plan.h"
#include "fixq/cuda.h"
#include "fixq/qgru.h"
#include "gru/float_test_util.h"

namespace fixq::cuda_test {

// Why no GPU can run the device tests here, asked once ("" where one can).
inline const std::string& no_gpu() {
  static const std::string why = cuda::unavailable_reason();
  return why;
}

// n values ~ N(0, sigma^2) from a seed.
inline std::vector<float> normal(int64_t n, uint32_t seed, float sigma) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

template <class T>
void expect_same_bits(const std::vector<T>& gpu, const std::vector<T>& cpu, const std::string& what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  size_t differ = 0, first = 0;
  for (size_t i = 0; i < gpu.size(); ++i)
    if (std::memcmp(&gpu[i], &cpu[i], sizeof(T)) != 0 && differ++ == 0) first = i;
  EXPECT_EQ(differ, 0u) << what << ": " << differ << " of " << gpu.size() << " values differ, the first at " << first;
}

// Whether a line of GpuGru::kernels() says its recurrence ran in the persistent form, or in
// the graph form: the recurrence's part must begin with the form's words. A graph form's
// reasons can name the persistent kernel ("... (the persistent kernel's blocks cannot all
// be resident at once)"), so looking for the word anywhere would take a fallback for it.
inline bool says_persistent_recurrence(const std::string& line) {
  return line.find(std::string("recurrence: ") + cuda::detail::kPersistentRecurrence) != std::string::npos;
}
inline bool says_graph_recurrence(const std::string& line) {
  return line.find(std::string("recurrence: ") + cuda::detail::kGraphRecurrence) != std::string::npos;
}

// A model with torch's initialisation calibrated with min/max on normal inputs under config.
inline QuantizedGru quantized_model(const GruModel& m, const GruQuantConfig& config, uint32_t seed) {
  ObserverConfig oc;
  oc.method = CalibMethod::MinMax;
  GruCalibrator cal(m, config, oc);
  for (uint32_t s = 0; s < 3; ++s) {
    const std::vector<float> x = normal(12 * 4 * m.input_size, seed + s, 1.0f);
    cal.observe(x.data(), Shape{12, 4, m.input_size});
  }
  return QuantizedGru(m, cal.finalize());
}

}  // namespace fixq::cuda_test

// Skips the calling test, with the reason, where no GPU can run it.
#define FIXQ_REQUIRE_GPU()                                                                   \
  do {                                                                                       \
    if (!::fixq::cuda_test::no_gpu().empty()) GTEST_SKIP() << "no usable GPU: " << ::fixq::cuda_test::no_gpu(); \
  } while (0)
