// The scalar tile kernel: the definition the vector kernels must match.
#include <cstring>

#include "gemm/kernels.h"

namespace fixq::gemm_detail {

void tile_scalar(const TileArgs& t) {
  for (int r = 0; r < t.mr; ++r) {
    for (int j = 0; j < kNr; ++j) {
      int32_t sum = 0;  // kc is chosen so that this cannot overflow
      for (int64_t kp = 0; kp < t.kc; ++kp) {
        uint32_t packed;
        std::memcpy(&packed, t.a + r * t.kp_stride + kp, sizeof packed);
        const int32_t a0 = static_cast<int16_t>(packed & 0xFFFF);
        const int32_t a1 = static_cast<int16_t>(packed >> 16);
        int32_t b0, b1;
        if (t.b16) {
          const int16_t* b = static_cast<const int16_t*>(t.b) + (kp * kNr + j) * 2;
          b0 = b[0];
          b1 = b[1];
        } else {
          const int8_t* b = static_cast<const int8_t*>(t.b) + (kp * kNr + j) * 2;
          b0 = b[0];
          b1 = b[1];
        }
        sum += a0 * b0 + a1 * b1;
      }
      t.tile[r * kNr + j] = sum;
    }
  }
}

}  // namespace fixq::gemm_detail
