// The byte-level wrapper of supplement_checks.h for _mm512_dpbf16_ps (VDPBF16PS, its own
// family: AVX512_BF16), natively and, built a second time by tests/CMakeLists.txt, through
// the supplement (avx512bf16_emulated).
#include <cstring>

#include "cpu/x86.h"
#include "supplement_checks.h"

namespace fixq::supplement_checks::FIXQ_KERNEL_NS(avx512bf16) {

namespace {

__m512bh in_bh(const void* p) {
  __m512bh v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

const Bf16Ops ops = {
    [](const void* src, const void* a, const void* b, void* out) {
      _mm512_storeu_ps(out, _mm512_dpbf16_ps(_mm512_loadu_ps(src), in_bh(a), in_bh(b)));
    },
};

}  // namespace

const Bf16Ops kBf16Ops = ops;

}  // namespace fixq::supplement_checks::FIXQ_KERNEL_NS(avx512bf16)
