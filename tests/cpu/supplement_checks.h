// Byte-level wrappers around every intrinsic name tests/support/simde_supplement.h defines, so
// tests/cpu/supplement_test.cpp can run each one natively (the hardware instruction) and as
// the emulated kernels see it (SIMDe plus the supplement), and compare them bit for bit.
// Defined in supplement_avx512.cpp and supplement_avx512bf16.cpp; tests/CMakeLists.txt
// compiles both files a second time with FIXQ_EMULATE_X86 into namespaces *_emulated.
//
// Vector operands and results travel as bytes (an __m512i is 64 of them), masks as the low
// bits of a uint64_t; pointers are passed through to the intrinsic untouched, so the tests
// decide exactly which bytes exist around a masked load or store.
#pragma once

#include <cstdint>

namespace fixq::supplement_checks {

// The names of simde_supplement.h in its order; each comment gives the instruction and the
// byte sizes of operands -> result.
struct Ops {
  // Masked loads: out = lanes of k from p, the others 0 (maskz) or from src (mask).
  void (*maskz_loadu_epi32)(uint64_t k, const void* p, void* out);          // 64
  void (*maskz_loadu_epi8)(uint64_t k, const void* p, void* out);           // 64
  void (*maskz_loadu_epi16)(uint64_t k, const void* p, void* out);          // 64
  void (*maskz_loadu_ps)(uint64_t k, const void* p, void* out);             // 64
  void (*mask_loadu_ps)(const void* src, uint64_t k, const void* p, void* out);  // 64
  void (*mm_maskz_loadu_epi8)(uint64_t k, const void* p, void* out);        // 16
  void (*mm256_maskz_loadu_epi16)(uint64_t k, const void* p, void* out);    // 32
  // Masked stores: the lanes of k of a (64 bytes) to p, no other byte written.
  void (*mask_storeu_epi32)(void* p, uint64_t k, const void* a);
  void (*mask_storeu_ps)(void* p, uint64_t k, const void* a);
  void (*mask_cvtepi32_storeu_epi8)(void* p, uint64_t k, const void* a);   // VPMOVDB m8 {k}
  void (*mask_cvtepi32_storeu_epi16)(void* p, uint64_t k, const void* a);  // VPMOVDW m16 {k}
  // Unary: a -> out.
  void (*cvtepi32_ps)(const void* a, void* out);      // VCVTDQ2PS 64 -> 64
  void (*cvttps_epi32)(const void* a, void* out);     // VCVTTPS2DQ 64 -> 64
  void (*cvtepi8_epi32)(const void* a, void* out);    // VPMOVSXBD 16 -> 64
  void (*cvtepu8_epi32)(const void* a, void* out);    // VPMOVZXBD 16 -> 64
  void (*cvtepi16_epi32)(const void* a, void* out);   // VPMOVSXWD 32 -> 64
  void (*cvtepu16_epi32)(const void* a, void* out);   // VPMOVZXWD 32 -> 64
  void (*cvtepi32_epi64)(const void* a, void* out);   // VPMOVSXDQ 32 -> 64
  void (*cvtepi32_epi16)(const void* a, void* out);   // VPMOVDW 64 -> 32
  void (*cvtepi32_epi8)(const void* a, void* out);    // VPMOVDB 64 -> 16
  void (*cvtepu8_epi16)(const void* a, void* out);    // VPMOVZXBW 32 -> 64
  void (*zextsi128_si512)(const void* a, void* out);  // 16 -> 64
  void (*zextsi256_si512)(const void* a, void* out);  // 32 -> 64
  void (*mm_cvtph_ps)(const void* a, void* out);      // VCVTPH2PS 16 (low 8 used) -> 16
  void (*cvtph_ps)(const void* a, void* out);         // VCVTPH2PS 32 -> 64
  // Binary: a, b -> out.
  void (*cmplt_epi32_mask)(const void* a, const void* b, uint16_t* out);   // VPCMPD lt
  void (*cmpneq_epi32_mask)(const void* a, const void* b, uint16_t* out);  // VPCMPD neq
  void (*srav_epi32)(const void* a, const void* count, void* out);         // VPSRAVD
  void (*srav_epi64)(const void* a, const void* count, void* out);         // VPSRAVQ
  void (*mulhi_epu16)(const void* a, const void* b, void* out);            // VPMULHUW
  void (*madd_epi16)(const void* a, const void* b, void* out);             // VPMADDWD
  // Ternary: a, b, c -> out.
  void (*fmadd_ps)(const void* a, const void* b, const void* c, void* out);  // VFMADD231PS
  // With a count: VPSRAQ imm, VPSRLW / VPSRLD imm {k} (lanes outside k from src).
  void (*srai_epi64)(const void* a, unsigned n, void* out);
  void (*mask_srli_epi16)(const void* src, uint64_t k, const void* a, unsigned n, void* out);
  void (*mask_srli_epi32)(const void* src, uint64_t k, const void* a, unsigned n, void* out);
  // VPGATHERDD: 16 int32 from base + index * scale, scale 1, 2, 4 or 8.
  void (*i32gather_epi32)(const void* index, const void* base, int scale, void* out);
  // VPGATHERDQ: 8 int64 from base + index * scale (8 int32 indices), scale 1, 2, 4 or 8.
  void (*i32gather_epi64)(const void* index, const void* base, int scale, void* out);
};

struct Bf16Ops {
  // VDPBF16PS zmm: src (16 float32) + pairwise products of a and b (32 bfloat16 each).
  void (*dpbf16_ps)(const void* src, const void* a, const void* b, void* out);
};

namespace avx512 { extern const Ops kOps; }
namespace avx512_emulated { extern const Ops kOps; }
namespace avx512bf16 { extern const Bf16Ops kBf16Ops; }
namespace avx512bf16_emulated { extern const Bf16Ops kBf16Ops; }

}  // namespace fixq::supplement_checks
