// Checks every module's kernel registry must pass (src/cpu/registry.h): they fail, rather
// than skip, when a family's kernels are missing or were never run.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "cpu/registry.h"
#include "kernel_paths.h"

namespace fixq::test {

// One entry per family of kAllIsas, and an emulated copy of every AVX-512 family table, so
// that AVX2-only machines still run those kernels.
template <class Table>
void expect_complete(const cpu_detail::KernelRegistry<Table>& r) {
  kernel_paths();  // installs the emulated tables
  for (Isa isa : kAllIsas) {
    EXPECT_TRUE(r.has_entry(isa)) << r.module() << "'s kernel list has no entry for " << to_string(isa);
    if (has_emulation(isa) && r.native(isa) != nullptr) {
      EXPECT_TRUE(r.has_emulated(isa)) << r.module() << "'s " << to_string(isa)
                                       << " kernels have no SIMDe build installed (tests/support/kernel_paths.cpp)";
    }
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
