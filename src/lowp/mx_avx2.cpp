// AVX2 OCP MX kernels: one 32-element block per step, with the scale and the element
// encoding in vector registers and the 4- and 6-bit packing by BMI2 pext / pdep. NaN and
// infinity blocks go through the scalar block definition.
#include <immintrin.h>

#include <cstring>
#include <utility>

#include "lowp/kernels.h"
#include "lowp/mx_block.h"
#include "lowp/vec_avx2.h"

namespace fixq::lowp_detail {

namespace {

// The byte lanes of 8 codes of Bits bits: pdep spreads a packed little-endian bit string
// over the low bits of 8 bytes, pext gathers them back.
template <int Bits>
constexpr uint64_t kLanes = Bits == 4 ? 0x0F0F0F0F0F0F0F0Full : 0x3F3F3F3F3F3F3F3Full;

uint32_t horizontal_max_u32(__m256i m) {
  m = _mm256_max_epu32(m, _mm256_permute2x128_si256(m, m, 1));
  m = _mm256_max_epu32(m, _mm256_shuffle_epi32(m, 0x4E));
  m = _mm256_max_epu32(m, _mm256_shuffle_epi32(m, 0xB1));
  return static_cast<uint32_t>(_mm256_cvtsi256_si32(m));
}

// MXINT8's element on 8 lanes: round half even (explicit immediate), clamp, convert.
__m256i int8_codes(__m256 t) {
  const __m256 r = _mm256_round_ps(_mm256_mul_ps(t, _mm256_set1_ps(64.0f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return _mm256_cvttps_epi32(_mm256_min_ps(_mm256_max_ps(r, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f)));
}

// 32 codes (bytes in lane order) -> the block's element bytes.
template <int Bits>
void store_elements(__m256i c, uint8_t* out) {
  if constexpr (Bits == 8) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), c);
  } else {
    const uint64_t q[4] = {static_cast<uint64_t>(_mm256_extract_epi64(c, 0)), static_cast<uint64_t>(_mm256_extract_epi64(c, 1)),
                           static_cast<uint64_t>(_mm256_extract_epi64(c, 2)), static_cast<uint64_t>(_mm256_extract_epi64(c, 3))};
    for (int k = 0; k < 4; ++k) {
      const uint64_t packed = _pext_u64(q[k], kLanes<Bits>);  // 8 codes -> 8 * Bits bits
      // Stored from registers as 4 (+ 2) bytes, little-endian host.
      const auto lo = static_cast<uint32_t>(packed);
      std::memcpy(out + Bits * k, &lo, 4);
      if constexpr (Bits == 6) {
        const auto hi = static_cast<uint16_t>(packed >> 32);
        std::memcpy(out + Bits * k + 4, &hi, 2);
      }
    }
  }
}

// Codes 8k .. 8k + 7 of the block's element bytes, as int32 lanes.
template <int Bits>
__m256i load_codes8(const uint8_t* in, int k) {
  // Loaded into registers as 8, or 4 (+ 2) bytes: never past the block, and never through
  // a stack slot assembled from partial stores (a store-forwarding stall).
  uint64_t bytes;
  if constexpr (Bits == 8) {
    std::memcpy(&bytes, in + 8 * k, 8);
  } else {
    uint32_t lo;
    std::memcpy(&lo, in + Bits * k, 4);
    bytes = lo;
    if constexpr (Bits == 6) {
      uint16_t hi;
      std::memcpy(&hi, in + Bits * k + 4, 2);
      bytes |= uint64_t{hi} << 32;
    }
    bytes = _pdep_u64(bytes, kLanes<Bits>);
  }
  return _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(bytes)));
}

template <MxType M>
void mx_quantize(const float* x, int64_t blocks, uint8_t* out) {
  using Tr = MxTraits<M>;
  for (int64_t b = 0; b < blocks; ++b) {
    const float* v = x + b * kMxBlockSize;
    uint8_t* o = out + b * Tr::block_bytes;
    __m256 vals[4];
    __m256i amax = _mm256_setzero_si256();
    for (int k = 0; k < 4; ++k) {
      vals[k] = _mm256_loadu_ps(v + 8 * k);
      // Magnitude patterns of non-negative floats order as the values do.
      amax = _mm256_max_epu32(amax, _mm256_and_si256(_mm256_castps_si256(vals[k]), splat(0x7FFFFFFFu)));
    }
    const uint32_t m = horizontal_max_u32(amax);
    if (m >= 0x7F800000u) {
      mx_quantize_block<M>(v, o);
      continue;
    }
    const int s = mx_exponent(m, Tr::emax);
    o[0] = static_cast<uint8_t>(s + 127);
    const __m256 factor = _mm256_set1_ps(pow2f(-s));
    __m256i c[4];
    for (int k = 0; k < 4; ++k) {
      const __m256 t = _mm256_mul_ps(vals[k], factor);
      if constexpr (Tr::is_int) {
        c[k] = int8_codes(t);
      } else {
        c[k] = encode8<Tr::element, Overflow::Saturate>(_mm256_castps_si256(t));
      }
    }
    if constexpr (Tr::is_int) {
      // Signed packs keep the two's complement bytes; lanes are already in [-127, 127].
      const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(c[0], c[1]), _mm256_packs_epi32(c[2], c[3]));
      store_elements<8>(_mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)), o + 1);
    } else {
      store_elements<Tr::bits>(narrow32x8(c[0], c[1], c[2], c[3]), o + 1);
    }
  }
}

template <MxType M>
void mx_dequantize(const uint8_t* in, int64_t blocks, float* x) {
  using Tr = MxTraits<M>;
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* p = in + b * Tr::block_bytes;
    float* v = x + b * kMxBlockSize;
    if (p[0] == kMxNanScale) {
      mx_dequantize_block<M>(p, v);
      continue;
    }
    const __m256 scale = _mm256_set1_ps(pow2f(static_cast<int>(p[0]) - 127));
    for (int k = 0; k < 4; ++k) {
      __m256 e;
      if constexpr (Tr::is_int) {
        const __m256i q = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 1 + 8 * k)));
        e = _mm256_mul_ps(_mm256_cvtepi32_ps(q), _mm256_set1_ps(0.015625f));
      } else {
        e = gather_decode(decode_table<Tr::element>(), load_codes8<Tr::bits>(p + 1, k));
      }
      _mm256_storeu_ps(v + 8 * k, _mm256_mul_ps(e, scale));
    }
  }
}

template <size_t... I>
constexpr MxKernels make(std::index_sequence<I...>) {
  MxKernels k{};
  ((k.quantize[I] = mx_quantize<static_cast<MxType>(I)>, k.dequantize[I] = mx_dequantize<static_cast<MxType>(I)>),
   ...);
  return k;
}

}  // namespace

namespace avx2 {
extern const MxKernels kAvx2Mx;
const MxKernels kAvx2Mx = make(std::make_index_sequence<kMxTypeCount>{});
}  // namespace avx2

}  // namespace fixq::lowp_detail
