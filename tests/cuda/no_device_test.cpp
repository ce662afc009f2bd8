// Without a usable GPU (no driver, no device), the GPU entry points fail with a DeviceError
// that says why, before anything else: the reason unavailable_reason() gives. Bad input to
// the weights' upload is reported first, device or not. Where a GPU is present these tests
// report themselves skipped (the device tests run instead).
#include <gtest/gtest.h>

#include <vector>

#include "cuda/gpu_test_util.h"
#include "fixq/cuda.h"
#include "support/expect.h"

namespace fixq {
namespace {

TEST(NoDevice, EntryPointsSayWhy) {
  if (cuda_test::no_gpu().empty()) GTEST_SKIP() << "a GPU is present: the device tests cover it";
  const std::string why = cuda_test::no_gpu();
  EXPECT_TRUE(cuda::devices().empty() || why.find("compute capability") != std::string::npos) << why;
  const std::vector<int8_t> w(12, 1);
  try {
    cuda::DeviceWeights::upload(MatrixView{IntType::S8, w.data(), 3, 4, 4});
    ADD_FAILURE() << "upload without a GPU succeeded";
  } catch (const cuda::DeviceError& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
  const GruModel m = gru_test::torch_init_model(3, 4, 1, false, 1);
  const QuantizedGru q = cuda_test::quantized_model(m, GruQuantConfig::int8(ScaleKind::PowerOfTwo), 1);
  try {
    cuda::GpuGru gpu(q);
    ADD_FAILURE() << "a GpuGru without a GPU";
  } catch (const cuda::DeviceError& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
  EXPECT_THROW(cuda::usable_device(0), cuda::DeviceError);
}

TEST(GemmUpload, BadWeightsAreReportedBeforeTheDevice) {
  const std::vector<int16_t> w16(12, 1);
  test::expect_error([&] { cuda::DeviceWeights::upload(MatrixView{IntType::S16, w16.data(), 3, 4, 4}); }, "must be s8");
  test::expect_error([] { cuda::DeviceWeights::upload(MatrixView{IntType::S8, nullptr, 3, 4, 4}); }, "null");
}

TEST(GpuReason, IsOneLine) {
  EXPECT_EQ(cuda_test::no_gpu().find('\n'), std::string::npos) << cuda_test::no_gpu();
}

}  // namespace
}  // namespace fixq
