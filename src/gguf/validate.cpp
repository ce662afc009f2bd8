// Validation: non-finite inputs before quantizing, and packed blocks whose scale fields
// are NaN or infinite (the check of ggml_validate_row_data).
#include <cmath>
#include <cstring>

#include "fixq/gguf.h"
#include "gguf/ggml_arith.h"
#include "gguf/kernels.h"

namespace fixq::gguf {

int64_t detail::first_nonfinite_ref(const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) return i;
  return -1;
}

int64_t first_invalid_block(Type type, std::span<const std::byte> packed) {
  const int64_t n_blocks = packed_elements(type, packed.size()) / traits(type).block_elems;
  const std::size_t block_bytes = traits(type).block_bytes;
  const detail::ScaleFields& fields = detail::scale_fields(type);
  for (int64_t i = 0; i < n_blocks; ++i) {
    const std::byte* b = packed.data() + static_cast<std::size_t>(i) * block_bytes;
    for (int k = 0; k < fields.n_f16; ++k) {
      uint16_t h;
      std::memcpy(&h, b + fields.f16[k], sizeof h);
      if ((h & 0x7C00u) == 0x7C00u) return i;  // all-ones exponent: inf or NaN
    }
    if (fields.f32 >= 0) {
      float v;
      std::memcpy(&v, b + fields.f32, sizeof v);
      if (!std::isfinite(v)) return i;
    }
  }
  return -1;
}

}  // namespace fixq::gguf
