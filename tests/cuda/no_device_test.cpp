// The GPU entry points agree with unavailable_reason() in whichever world the test runs,
// and report themselves skipped in neither (scripts/gpu_check.sh counts a skipped test on a
// GPU as a failure: it would be a GPU test that did not run). Without a usable GPU (no
// driver, no device) each entry point fails with a DeviceError that says why, before
// anything else; with one, they succeed on it. Bad input to the weights' upload is reported
// first, device or not.
#include <gtest/gtest.h>

#include <vector>

#include "cuda/gpu_test_util.h"
#include "fixq/cuda.h"
#include "support/expect.h"

namespace fixq {
namespace {

TEST(DeviceAvailability, EntryPointsAgreeWithTheReason) {
  const std::string why = cuda_test::no_gpu();
  const std::vector<int8_t> w(12, 1);
  const GruModel m = gru_test::torch_init_model(3, 4, 1, false, 1);
  const QuantizedGru q = cuda_test::quantized_model(m, GruQuantConfig::int8(ScaleKind::PowerOfTwo), 1);
  if (why.empty()) {
    // A usable GPU 0: it is listed, new enough, and the entry points run on it.
    ASSERT_FALSE(cuda::devices().empty());
    const cuda::DeviceInfo d = cuda::usable_device(0);
    EXPECT_GE(d.major, 8) << d.name;
    const cuda::DeviceWeights dw = cuda::DeviceWeights::upload(MatrixView{IntType::S8, w.data(), 3, 4, 4});
    EXPECT_EQ(dw.n(), 3);
    const cuda::GpuGru gpu(q);
    EXPECT_EQ(gpu.device().index, 0);
    return;
  }
  EXPECT_TRUE(cuda::devices().empty() || why.find("compute capability") != std::string::npos) << why;
  try {
    cuda::DeviceWeights::upload(MatrixView{IntType::S8, w.data(), 3, 4, 4});
    ADD_FAILURE() << "upload without a GPU succeeded";
  } catch (const cuda::DeviceError& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
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
