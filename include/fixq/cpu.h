// fixq/cpu.h — which instruction set the fast kernels may use.
//
// Every fast kernel has a scalar reference with the same contract; these functions pick
// one at run time from the CPU's features, so one build runs on any x86-64. The
// environment variable FIXQ_ISA=scalar|avx2|avx512 forces a path (tests use it to compare
// every path on the same machine); forcing a path the CPU lacks is an error, not a crash.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fixq {

enum class Isa {
  Scalar,  // portable C++: the reference every fast path must match bit for bit
  Avx2,    // AVX2 + FMA + F16C
  Avx512,  // AVX-512 F, BW, DQ, VL and VNNI
};

std::string to_string(Isa isa);
// Parses "scalar", "avx2" or "avx512"; throws fixq::Error otherwise.
Isa parse_isa(std::string_view name);

// Whether this CPU (and OS) can run code of that instruction set.
bool cpu_supports(Isa isa);
// The best instruction set this CPU supports.
Isa best_isa();
// The instruction set kernels use now: the in-process override if set, else FIXQ_ISA if
// set, else best_isa(). Throws fixq::Error if the requested set is unsupported here.
Isa active_isa();
// Overrides active_isa() in this process (std::nullopt restores the default). Throws if
// the CPU lacks the instruction set.
void set_isa_override(std::optional<Isa> isa);

}  // namespace fixq
