// Private, for the AVX512_VBMI family's kernel files (*_avx512vbmi.cpp) only: the AVX-512
// lane primitives (lanes_avx512.h) plus a table of 256 bytes held in four registers and
// read with vpermi2b, which this family has and the others read with gathers.
#pragma once

#include "simd/lanes_avx512.h"

namespace fixq::simd {
namespace {

struct Avx512Vbmi : Avx512 {
  static constexpr bool kByteTables = true;
  struct ByteTable {
    I b[4];  // entries 0-63, 64-127, 128-191, 192-255
  };
  static ByteTable load_byte_table(const int8_t* bytes) {  // 256 bytes, 64-byte aligned
    return {{_mm512_load_si512(bytes), _mm512_load_si512(bytes + 64), _mm512_load_si512(bytes + 128),
             _mm512_load_si512(bytes + 192)}};
  }
  // t[index] sign-extended to int32 lanes, index in [0, 256): bit 7 picks the upper or the
  // lower 128 bytes, vpermi2b the byte within them.
  static I lookup_bytes(const ByteTable& t, I index) {
    const I b = _mm512_castsi128_si512(_mm512_cvtepi32_epi8(index));
    const I lo = _mm512_permutex2var_epi8(t.b[0], b, t.b[1]);
    const I hi = _mm512_permutex2var_epi8(t.b[2], b, t.b[3]);
    return _mm512_cvtepi8_epi32(_mm512_castsi512_si128(_mm512_mask_blend_epi8(_mm512_movepi8_mask(b), lo, hi)));
  }
};

}  // namespace
}  // namespace fixq::simd
