// Private: a per-kernel setting (a function attribute) applied once per device and process,
// keyed by the kernel itself. Host code with no CUDA header, so that the tests compile this
// very code for the host (tests/cuda/kernel_attribute_test.cpp).
//
// The key is a template *value*, the kernel's address, not a type: every instantiation of a
// kernel template shares its function type (all gemm_mma_kernel variants are
// void (*)(GemmArgs)), so a flag keyed on the type would be one flag for all of them, and
// only the first variant launched in a process would get its attribute.
#pragma once

#include <atomic>
#include <cstdint>

namespace fixq::cuda::detail {

// Devices 0..63 are remembered in one 64-bit mask; a device numbered beyond gets the
// setting applied on every call (correct, only not cached).
inline constexpr int kRememberedDevices = 64;

template <auto kKernel>
class OncePerDevice {
 public:
  // apply() on the first call for `device` in this process; later calls for it return at
  // once. If apply() throws, nothing is remembered and the next call tries again. Two
  // threads may both apply on their first call: the settings this serves are idempotent.
  template <class Apply>
  static void run(int device, Apply&& apply) {
    if (device < 0 || device >= kRememberedDevices) {
      apply();
      return;
    }
    const uint64_t bit = uint64_t{1} << device;
    if ((done_.load(std::memory_order_acquire) & bit) != 0) return;
    apply();
    done_.fetch_or(bit, std::memory_order_release);
  }

 private:
  static inline std::atomic<uint64_t> done_{0};
};

// Raises kKernel's dynamic shared-memory limit to `bytes` on `device`, once per device:
// set(kKernel, bytes) is the attribute call (cudaFuncSetAttribute in gemm_mma.cu, a
// recorder in the tests).
template <auto kKernel, class Set>
void raise_dynamic_shared_memory(int device, int bytes, Set&& set) {
  OncePerDevice<kKernel>::run(device, [&] { set(kKernel, bytes); });
}

}  // namespace fixq::cuda::detail
