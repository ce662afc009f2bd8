// The byte-level wrappers of supplement_checks.h for every AVX-512 name of
// tests/support/simde_supplement.h: natively (namespace avx512, this file's -m flags) and, built a
// second time by tests/CMakeLists.txt, through SIMDe and the supplement (avx512_emulated).
// Everything here has internal linkage but kOps, so no AVX-512 copy of an inline function
// can stand in for a plain one elsewhere in the test binary.
#include <cstring>

#include "cpu/x86.h"
#include "supplement_checks.h"

namespace fixq::supplement_checks::FIXQ_KERNEL_NS(avx512) {

namespace {

__m128i in128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
__m256i in256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
__m512i in512(const void* p) { return _mm512_loadu_si512(p); }
__m512 in512f(const void* p) { return _mm512_loadu_ps(p); }
void out128(void* p, __m128i v) { _mm_storeu_si128(static_cast<__m128i*>(p), v); }
void out256(void* p, __m256i v) { _mm256_storeu_si256(static_cast<__m256i*>(p), v); }
void out512(void* p, __m512i v) { _mm512_storeu_si512(p, v); }
void out512f(void* p, __m512 v) { _mm512_storeu_ps(p, v); }

const Ops ops = {
    [](uint64_t k, const void* p, void* out) { out512(out, _mm512_maskz_loadu_epi32(static_cast<__mmask16>(k), p)); },
    [](uint64_t k, const void* p, void* out) { out512(out, _mm512_maskz_loadu_epi8(static_cast<__mmask64>(k), p)); },
    [](uint64_t k, const void* p, void* out) { out512(out, _mm512_maskz_loadu_epi16(static_cast<__mmask32>(k), p)); },
    [](uint64_t k, const void* p, void* out) { out512f(out, _mm512_maskz_loadu_ps(static_cast<__mmask16>(k), p)); },
    [](const void* src, uint64_t k, const void* p, void* out) {
      out512f(out, _mm512_mask_loadu_ps(in512f(src), static_cast<__mmask16>(k), p));
    },
    [](uint64_t k, const void* p, void* out) { out128(out, _mm_maskz_loadu_epi8(static_cast<__mmask16>(k), p)); },
    [](uint64_t k, const void* p, void* out) { out256(out, _mm256_maskz_loadu_epi16(static_cast<__mmask16>(k), p)); },
    [](void* p, uint64_t k, const void* a) { _mm512_mask_storeu_epi32(p, static_cast<__mmask16>(k), in512(a)); },
    [](void* p, uint64_t k, const void* a) { _mm512_mask_storeu_ps(p, static_cast<__mmask16>(k), in512f(a)); },
    [](void* p, uint64_t k, const void* a) { _mm512_mask_cvtepi32_storeu_epi8(p, static_cast<__mmask16>(k), in512(a)); },
    [](void* p, uint64_t k, const void* a) { _mm512_mask_cvtepi32_storeu_epi16(p, static_cast<__mmask16>(k), in512(a)); },
    [](const void* a, void* out) { out512f(out, _mm512_cvtepi32_ps(in512(a))); },
    [](const void* a, void* out) { out512(out, _mm512_cvttps_epi32(in512f(a))); },
    [](const void* a, void* out) { out512(out, _mm512_cvtepi8_epi32(in128(a))); },
    [](const void* a, void* out) { out512(out, _mm512_cvtepu8_epi32(in128(a))); },
    [](const void* a, void* out) { out512(out, _mm512_cvtepi16_epi32(in256(a))); },
    [](const void* a, void* out) { out512(out, _mm512_cvtepu16_epi32(in256(a))); },
    [](const void* a, void* out) { out512(out, _mm512_cvtepi32_epi64(in256(a))); },
    [](const void* a, void* out) { out256(out, _mm512_cvtepi32_epi16(in512(a))); },
    [](const void* a, void* out) { out128(out, _mm512_cvtepi32_epi8(in512(a))); },
    [](const void* a, void* out) { out512(out, _mm512_cvtepu8_epi16(in256(a))); },
    [](const void* a, void* out) { out512(out, _mm512_zextsi128_si512(in128(a))); },
    [](const void* a, void* out) { out512(out, _mm512_zextsi256_si512(in256(a))); },
    [](const void* a, void* out) { _mm_storeu_ps(static_cast<float*>(out), _mm_cvtph_ps(in128(a))); },
    [](const void* a, void* out) { out512f(out, _mm512_cvtph_ps(in256(a))); },
    [](const void* a, const void* b, uint16_t* out) { *out = _mm512_cmplt_epi32_mask(in512(a), in512(b)); },
    [](const void* a, const void* b, uint16_t* out) { *out = _mm512_cmpneq_epi32_mask(in512(a), in512(b)); },
    [](const void* a, const void* c, void* out) { out512(out, _mm512_srav_epi32(in512(a), in512(c))); },
    [](const void* a, const void* c, void* out) { out512(out, _mm512_srav_epi64(in512(a), in512(c))); },
    [](const void* a, const void* b, void* out) { out512(out, _mm512_mulhi_epu16(in512(a), in512(b))); },
    [](const void* a, const void* b, void* out) { out512(out, _mm512_madd_epi16(in512(a), in512(b))); },
    [](const void* a, const void* b, const void* c, void* out) {
      out512f(out, _mm512_fmadd_ps(in512f(a), in512f(b), in512f(c)));
    },
    [](const void* a, unsigned n, void* out) { out512(out, _mm512_srai_epi64(in512(a), n)); },
    [](const void* src, uint64_t k, const void* a, unsigned n, void* out) {
      out512(out, _mm512_mask_srli_epi16(in512(src), static_cast<__mmask32>(k), in512(a), n));
    },
    [](const void* src, uint64_t k, const void* a, unsigned n, void* out) {
      out512(out, _mm512_mask_srli_epi32(in512(src), static_cast<__mmask16>(k), in512(a), n));
    },
    // The scale is an immediate of the instruction.
    [](const void* index, const void* base, int scale, void* out) {
      const __m512i i = in512(index);
      switch (scale) {
        case 1: out512(out, _mm512_i32gather_epi32(i, base, 1)); break;
        case 2: out512(out, _mm512_i32gather_epi32(i, base, 2)); break;
        case 4: out512(out, _mm512_i32gather_epi32(i, base, 4)); break;
        default: out512(out, _mm512_i32gather_epi32(i, base, 8)); break;
      }
    },
    [](const void* index, const void* base, int scale, void* out) {
      __m256i i;
      std::memcpy(&i, index, sizeof i);
      switch (scale) {
        case 1: out512(out, _mm512_i32gather_epi64(i, base, 1)); break;
        case 2: out512(out, _mm512_i32gather_epi64(i, base, 2)); break;
        case 4: out512(out, _mm512_i32gather_epi64(i, base, 4)); break;
        default: out512(out, _mm512_i32gather_epi64(i, base, 8)); break;
      }
    },
};

}  // namespace

const Ops kOps = ops;

}  // namespace fixq::supplement_checks::FIXQ_KERNEL_NS(avx512)
