// Private: the intrinsics of the x86 kernel files (*_avx2.cpp, *_avx512*.cpp).
//
// Natively each file includes <immintrin.h> and is compiled with its family's -m flags
// (cmake/FixqIsa.cmake). The tests compile every AVX-512 file a second time with
// FIXQ_EMULATE_X86 and no -m flags: the same intrinsic names then resolve to SIMDe's
// portable implementations, which the tests' wrapper provides (tests/support/simde_x86.h),
// and the same kernel source runs, bit for bit, on a CPU without AVX-512. Kernel files wrap
// their code in namespace FIXQ_KERNEL_NS(family) so both copies link into one test binary.
#pragma once

#if defined(FIXQ_EMULATE_X86)
#if !defined(SIMDE_ENABLE_NATIVE_ALIASES)
#error "the SIMDe build of a kernel file includes tests/support/simde_x86.h first (tests/CMakeLists.txt)"
#endif
#define FIXQ_KERNEL_NS(family) family##_emulated
#else
#include <immintrin.h>
#define FIXQ_KERNEL_NS(family) family
#endif
