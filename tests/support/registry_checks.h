// Checks every module's kernel registry must pass (src/cpu/registry.h): they fail, rather
// than skip, when a family's table is left out of its module's list, when an AVX-512
// family's table has no SIMDe copy, and when a family's kernels were never run.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "cpu/registry.h"
#include "kernel_paths.h"

namespace fixq::test {

// Every table a family file of this module defines (the census: the tests link every
// object) is listed in the registry, and every listed AVX-512 family's table has its SIMDe
// copy installed, so that AVX2-only machines still run those kernels.
template <class Table>
void expect_complete(const cpu_detail::KernelRegistry<Table>& r) {
  kernel_paths();  // installs the emulated tables
  int native = 0;
  for (const cpu_detail::TableRecord& t : cpu_detail::recorded_tables()) {
    if (t.registry != static_cast<const void*>(&r) || t.emulated) continue;
    ++native;
    EXPECT_TRUE(t.listed(t)) << r.module() << ": the " << to_string(t.isa)
                             << " family defines a kernel table that the module's registry does not list";
    if (has_emulation(t.isa)) {
      EXPECT_TRUE(r.has_emulated(t.isa)) << r.module() << "'s " << to_string(t.isa)
                                         << " kernels have no SIMDe copy (tests/CMakeLists.txt builds *_avx512*.cpp)";
    }
  }
  // (A registry whose families all belong to another architecture lists no table in this
  // build, as the fast GRU step's on aarch64, which has only its reference loop.)
  bool lists_any = false;
  for (Isa isa : kAllIsas) lists_any = lists_any || r.native(isa) != nullptr;
  if (lists_any) {
    EXPECT_GT(native, 0) << r.module() << ": no kernel table recorded (are the tests linking the library whole?)";
  }
}

// On every kernel path whose family has its own kernel for this operation, that kernel is
// the one that runs: the tests that ran on the path exercised it.
template <class Table, class Get>
void expect_each_family_runs_its_own(const cpu_detail::KernelRegistry<Table>& r, Get get, const std::string& what) {
  for (const KernelPath& p : kernel_paths()) {
    const Table* own = r.native(p.isa);
    if (own == nullptr || get(*own) == nullptr) continue;  // the family inherits this one
    PathScope scope(p);
    EXPECT_EQ(to_string(r.pick(get).isa), to_string(p.isa)) << r.module() << " " << what << " on " << p.name();
  }
}

}  // namespace fixq::test
