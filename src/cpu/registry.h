// Private: the one dispatch mechanism every module uses.
//
// Each instruction-set family defines its kernels as one table (a struct of function
// pointers and constants) in its own file. A module lists its tables best first, one entry
// per family of kAllIsas, in one KernelRegistry; pick() returns, for one operation, the
// first entry that the active features allow (fixq/cpu.h) and that provides it. A family
// may leave an operation null, or give no table at all: it then inherits the next entry's
// kernel (as ruy's RUY_INHERIT_KERNEL). Adding a family is a new file per module plus one
// line in each module's list.
//
// Tests also install a second copy of each AVX-512 family's table, the same source compiled
// against SIMDe (src/cpu/x86.h); with emulation on, pick() prefers those copies, and a
// family the CPU lacks runs through them instead of being skipped.
#pragma once

#include <array>
#include <cstdlib>
#include <initializer_list>
#include <utility>

#include "fixq/cpu.h"

namespace fixq::cpu_detail {

// Test-only switch (tests/support): with emulation on, set_isa_override accepts any
// family and registries run the emulated tables installed for it.
bool emulation_enabled();
void set_emulation(bool on);

// What pick() chose: the kernel and the family that provided it.
template <class K>
struct Picked {
  K kernel;
  Isa isa;
};

template <class Table>
class KernelRegistry {
 public:
  struct Entry {
    Isa isa;
    const Table* table;  // null: every kernel inherited from the next entry
  };

  // best_first: one entry per family of kAllIsas, the scalar table last (it must provide
  // every operation). A list that misses a family is caught by has_entry() in the tests.
  constexpr KernelRegistry(const char* module, std::initializer_list<Entry> best_first) : module_(module) {
    for (const Entry& e : best_first) {
      if (count_ < slots_.size()) slots_[count_++] = Slot{e.isa, e.table, nullptr};
    }
  }

  const char* module() const { return module_; }

  bool has_entry(Isa isa) const {
    for (std::size_t i = 0; i < count_; ++i)
      if (slots_[i].isa == isa) return true;
    return false;
  }

  // The table a family contributes natively (null if it inherits everything).
  const Table* native(Isa isa) const {
    for (std::size_t i = 0; i < count_; ++i)
      if (slots_[i].isa == isa) return slots_[i].native;
    return nullptr;
  }

  // Installs the emulated copy of a family's table (tests only, before any kernel runs).
  void install_emulated(Isa isa, const Table* table) {
    for (std::size_t i = 0; i < count_; ++i)
      if (slots_[i].isa == isa) slots_[i].emulated = table;
  }
  bool has_emulated(Isa isa) const {
    for (std::size_t i = 0; i < count_; ++i)
      if (slots_[i].isa == isa) return slots_[i].emulated != nullptr;
    return false;
  }

  // The first kernel get(table) that is not null, over the entries the active features
  // allow, best first; a null kernel (and Isa::Scalar) when no family provides one.
  template <class Get>
  auto find(Get get) const -> Picked<decltype(get(std::declval<const Table&>()))> {
    const FeatureMask allowed = active_features(), cpu = cpu_features();
    const bool emulate = emulation_enabled();
    for (std::size_t i = 0; i < count_; ++i) {
      const Slot& s = slots_[i];
      const FeatureMask need = isa_features(s.isa);
      if ((need & ~allowed) != 0) continue;
      const Table* t = emulate && s.emulated != nullptr ? s.emulated : ((need & ~cpu) == 0 ? s.native : nullptr);
      if (t == nullptr) continue;
      if (auto k = get(*t)) return {k, s.isa};
    }
    return {nullptr, Isa::Scalar};
  }

  // find() for operations the scalar family always provides.
  template <class Get>
  auto pick(Get get) const -> Picked<decltype(get(std::declval<const Table&>()))> {
    auto p = find(get);
    if (p.kernel == nullptr) std::abort();  // unreachable: the scalar table provides it (tests check)
    return p;
  }

 private:
  struct Slot {
    Isa isa = Isa::Scalar;
    const Table* native = nullptr;
    const Table* emulated = nullptr;
  };
  const char* module_;
  std::array<Slot, kAllIsas.size()> slots_{};
  std::size_t count_ = 0;
};

}  // namespace fixq::cpu_detail
