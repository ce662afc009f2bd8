// thread_address(x): the address of a thread_local object, as a value the optimizer cannot
// recompute.
//
// Why: GCC treats a thread_local's address as cheap to recompute, and under register
// pressure it recomputes it inside a kernel's loop instead of keeping it in a register or
// spilling it. In -fPIC code (every object of the library is, for the shared build) that
// is a call to __tls_get_addr, so every vector register is spilled around it and a
// vzeroupper issued; linking the static library relaxes the call but keeps the spills. The
// Q4_K matrix-vector product ran 15-22% slower from the library than the same kernel
// compiled into an executable. Taken once through an empty asm, the address is an ordinary
// pointer that stays in a register or is spilled like any other.
#pragma once

namespace fixq::cpu {

template <class T>
[[gnu::always_inline]] inline T& thread_address(T& object) {
  T* p = &object;
  asm("" : "+r"(p));
  return *p;
}

}  // namespace fixq::cpu
