// The intrinsics of the tests' SIMDe build of the kernel files: each generated wrapper
// (tests/CMakeLists.txt) defines FIXQ_EMULATE_X86 and includes this header before the
// kernel source, so that the intrinsic names the source uses resolve to SIMDe's portable
// implementations (Debian's libsimde-dev) or, for the few SIMDe 0.7 lacks, to
// simde_supplement.h, written from Intel's pseudo-code. src/cpu/x86.h then includes no
// <immintrin.h> of its own.
#pragma once

#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#include <simde/x86/gfni.h>

#include "support/simde_supplement.h"
