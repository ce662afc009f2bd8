// The ways tests run kernels: every instruction-set family natively where the CPU has it,
// and every AVX-512 family through SIMDe (the same kernel source compiled against portable
// intrinsics, src/cpu/x86.h), so a CPU without AVX-512 still proves those kernels bit-exact.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "fixq/cpu.h"

namespace fixq::test {

struct KernelPath {
  Isa isa = Isa::Scalar;
  bool emulated = false;  // through the SIMDe build of the family's kernels
  // "avx2", "avx512_simde": usable as a gtest parameter name.
  std::string name() const;
};
inline std::ostream& operator<<(std::ostream& os, const KernelPath& p) { return os << p.name(); }

// Scalar first, then every family of kAllIsas this CPU runs, then every AVX-512 family
// emulated. Installs the emulated kernel tables on first use.
std::vector<KernelPath> kernel_paths();
// kernel_paths() without the scalar reference.
std::vector<KernelPath> fast_paths();
// The scalar reference path.
inline KernelPath scalar_path() { return {Isa::Scalar, false}; }

// Kernels run on `path` while the scope lives; the defaults come back after, even when an
// assertion fails inside.
class PathScope {
 public:
  explicit PathScope(const KernelPath& path);
  ~PathScope();
  PathScope(const PathScope&) = delete;
  PathScope& operator=(const PathScope&) = delete;
};

// Kernels run on `path` from now on (tests that switch paths inside one scope; pair with a
// PathGuard that restores the defaults).
void use_path(const KernelPath& path);
struct PathGuard {
  PathGuard() = default;
  PathGuard(const PathGuard&) = delete;
  PathGuard& operator=(const PathGuard&) = delete;
  ~PathGuard();
};

// Whether a family's kernels are emulated by the SIMDe build (the AVX-512 families).
bool has_emulation(Isa isa);

}  // namespace fixq::test
