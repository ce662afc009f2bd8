// AlignedVector<T>: a std::vector whose storage starts on a 64-byte boundary.
//
// Why: a 64-byte vector load that straddles two cache lines costs two loads. Per-row
// constants that a kernel reads beside its data (a GRU's requantization windows and
// shifts, its per-unit biases) sat 16 bytes off a line in std::vector's storage; the GRU's
// requantization of one 16-row vector took 5.3 cycles with them there and 3.5 with them
// aligned (Zen 5, one process, the same loop).
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace fixq::cpu {

template <class T>
struct Aligned64Allocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  Aligned64Allocator() = default;
  template <class U>
  Aligned64Allocator(const Aligned64Allocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, kAlign); }
  template <class U>
  bool operator==(const Aligned64Allocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using AlignedVector = std::vector<T, Aligned64Allocator<T>>;

}  // namespace fixq::cpu
