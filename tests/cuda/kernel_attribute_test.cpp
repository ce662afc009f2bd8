// The host logic around the GPU launches, on the host: the tensor-core GEMM's shared-memory
// opt-in reaches every kernel variant on every device (issue 47 §1), and a cooperative
// launch the driver refuses as too large is a form to fall back from, not an error (§12).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda/gemm_args.h"
#include "cuda/once_per_device.h"
#include "cuda/runtime.h"

namespace fixq::cuda::detail {
namespace {

// Host stand-ins of two gemm_mma_kernel variants: distinct functions of the one type that
// every variant has, as the launch passes them (gemm_mma.cu, launch_kernel).
void variant_small(GemmArgs) {}
void variant_large(GemmArgs) {}
void variant_other_test(GemmArgs) {}

using Kernel = void (*)(GemmArgs);

// The attribute calls made, in order: (kernel, device, bytes).
struct Recorder {
  std::vector<std::pair<Kernel, int>> calls;
  int device = 0;
  void operator()(Kernel k, int bytes) {
    calls.emplace_back(k, device);
    EXPECT_GT(bytes, 0);
  }
};

TEST(KernelAttribute, EveryVariantGetsItsSharedMemoryOnEveryDevice) {
  Recorder r;
  auto launch = [&r](auto kernel_constant, int device, int bytes) {
    r.device = device;
    raise_dynamic_shared_memory<decltype(kernel_constant)::value>(device, bytes, [&r](Kernel k, int b) { r(k, b); });
  };
  using Small = std::integral_constant<Kernel, &variant_small>;
  using Large = std::integral_constant<Kernel, &variant_large>;
  launch(Small{}, 0, 20480);  // a small product first, as a process's first GEMM may be
  launch(Large{}, 0, 61440);  // then a large one: its own opt-in, not the small one's
  launch(Small{}, 0, 20480);  // remembered: no second call
  launch(Large{}, 0, 61440);
  launch(Large{}, 1, 61440);  // another device: its own opt-in
  launch(Large{}, 1, 61440);
  const std::vector<std::pair<Kernel, int>> want = {{&variant_small, 0}, {&variant_large, 0}, {&variant_large, 1}};
  EXPECT_EQ(r.calls, want);
}

TEST(KernelAttribute, AFailedSettingIsTriedAgain) {
  int calls = 0;
  auto failing = [&calls](Kernel, int) {
    ++calls;
    throw std::runtime_error("refused");
  };
  EXPECT_THROW(raise_dynamic_shared_memory<&variant_other_test>(0, 1024, failing), std::runtime_error);
  EXPECT_THROW(raise_dynamic_shared_memory<&variant_other_test>(0, 1024, failing), std::runtime_error);
  EXPECT_EQ(calls, 2);
  raise_dynamic_shared_memory<&variant_other_test>(0, 1024, [&calls](Kernel, int) { ++calls; });
  raise_dynamic_shared_memory<&variant_other_test>(0, 1024, [&calls](Kernel, int) { ++calls; });
  EXPECT_EQ(calls, 3);
}

TEST(KernelAttribute, DevicesPastTheMaskAreSetEveryTime) {
  int calls = 0;
  for (int i = 0; i < 3; ++i)
    raise_dynamic_shared_memory<&variant_other_test>(kRememberedDevices, 1024, [&calls](Kernel, int) { ++calls; });
  EXPECT_EQ(calls, 3);
}

TEST(CooperativeLaunch, TooLargeIsARefusalOtherErrorsThrow) {
  EXPECT_EQ(cooperative_launch_outcome(cudaSuccess, "x"), CooperativeLaunch::Launched);
  EXPECT_EQ(cooperative_launch_outcome(cudaErrorCooperativeLaunchTooLarge, "x"), CooperativeLaunch::Refused);
  try {
    cooperative_launch_outcome(cudaErrorInvalidConfiguration, "launching the persistent GRU recurrence");
    ADD_FAILURE() << "no DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("launching the persistent GRU recurrence"), std::string::npos) << e.what();
  }
}

TEST(TensorCoreLoads, CpAsyncTakesAlignedRowsOnly) {
  alignas(256) static unsigned char base[512];
  EXPECT_TRUE(a_rows_take_cp_async(base, 80));
  EXPECT_TRUE(a_rows_take_cp_async(base + 16, 4096));
  EXPECT_FALSE(a_rows_take_cp_async(base + 1, 80));  // odd base
  EXPECT_FALSE(a_rows_take_cp_async(base, 70));      // stride not a multiple of 16
  EXPECT_FALSE(a_rows_take_cp_async(base + 8, 88));
}

}  // namespace
}  // namespace fixq::cuda::detail
