#include "cpu/cache.h"

#include <unistd.h>

namespace fixq::cpu {

int64_t l2_bytes() {
  static const int64_t bytes = [] {
    const long v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return v > 0 ? int64_t{v} : int64_t{1} << 20;
  }();
  return bytes;
}

}  // namespace fixq::cpu
