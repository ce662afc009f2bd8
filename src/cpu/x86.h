// Private: the intrinsics of the x86 kernel files (*_avx2.cpp, *_avx512*.cpp).
//
// Natively each file includes <immintrin.h> and is compiled with its family's -m flags
// (cmake/FixqIsa.cmake). The tests compile every AVX-512 file a second time with
// FIXQ_EMULATE_X86 and no -m flags (library fixq_emulated): the same intrinsic names then
// resolve to SIMDe's portable implementations (Debian libsimde-dev) or, for the few that
// SIMDe 0.7 lacks, to cpu/simde_supplement.h, written from Intel's pseudo-code. The same
// kernel source thus runs, bit for bit, on a CPU without AVX-512. Kernel files wrap their
// code in namespace FIXQ_KERNEL_NS(family) so both copies link into one test binary.
#pragma once

#if defined(FIXQ_EMULATE_X86)
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#include <simde/x86/gfni.h>

#include "cpu/simde_supplement.h"
#define FIXQ_KERNEL_NS(family) family##_emulated
#else
#include <immintrin.h>
#define FIXQ_KERNEL_NS(family) family
#endif
