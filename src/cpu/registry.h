// Private: the one dispatch mechanism every module uses.
//
// Each instruction-set family defines its kernels as one table (a struct of function
// pointers and constants) in its own file, with FIXQ_KERNEL_TABLE. A module lists the
// tables of the families that bring kernels in one KernelRegistry, in any order: the
// registry puts them best first, a family before every family whose features are a subset
// of its own (fixq/cpu.h: isa_features). pick() returns, for one operation, the first entry
// that the active features allow and that provides it. A family may leave an operation
// null, or bring no table at all: the operation then falls back, by features, to the best
// family below it that has one (as ruy's RUY_INHERIT_KERNEL). Adding a family is new files
// per module plus one word in each module's list that gains kernels; a list names families
// of every architecture, and those the build lacks drop out at compile time.
//
// Tests also compile each AVX-512 family's tables a second time against SIMDe
// (src/cpu/x86.h); those copies are installed into the same registries, and with emulation
// on pick() prefers them, so a family the CPU lacks runs through them instead of being
// skipped.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fixq/cpu.h"

// Declares a module's table `name` of type `Type` in the namespace of every family fixq
// knows (FIXQ_KNOWN_ISA_FAMILIES, fixq/cpu.h), of every architecture, so that the module's
// registry can name any family; one this build lacks is declared and never odr-used.
#define FIXQ_DECLARE_FAMILY_TABLE_(e, family, arch, features, Type, name) \
  namespace family {                                                      \
  extern const Type name;                                                 \
  }
#define FIXQ_DECLARE_KERNEL_TABLES(Type, name) FIXQ_KNOWN_ISA_FAMILIES(FIXQ_DECLARE_FAMILY_TABLE_, Type, name)

#if defined(FIXQ_EMULATE_X86)
#define FIXQ_TABLE_IS_EMULATED_ true
#else
#define FIXQ_TABLE_IS_EMULATED_ false
#endif

// Defines the kernel table `name` (of type Type, family `isa`) in a family file, inside the
// file's FIXQ_KERNEL_NS namespace, followed by its initializer:
//   FIXQ_KERNEL_TABLE(GemmKernels, kGemm, Isa::Avx2){&kPairs, ...};
// It also records the table in the census (below), so that the tests can check that the
// module's registry lists it and install its SIMDe copy. `registry()` is the module's.
#define FIXQ_KERNEL_TABLE(Type, name, isa)                                                                  \
  extern const Type name;                                                                                  \
  namespace {                                                                                              \
  [[maybe_unused]] const ::fixq::cpu_detail::TableRecorder name##_census{                                  \
      ::fixq::cpu_detail::TableRecord::of(registry(), isa, FIXQ_TABLE_IS_EMULATED_, &name)};              \
  }                                                                                                        \
  const Type name

// Defines the module's registry(): its name, the name of its tables, and the families that
// bring kernels for it, by name, in any order:
//   FIXQ_KERNEL_REGISTRY(GemmKernels, "gemm", kGemm, amx, avx512, avx2, neon, scalar)
// A family this build does not have (another architecture's) drops out of the list at
// compile time (its table is named only in a discarded `if constexpr` branch, so nothing
// references it), which is how one list serves every architecture.
#define FIXQ_KERNEL_REGISTRY(Type, module, table, ...)                                                 \
  ::fixq::cpu_detail::KernelRegistry<Type>& registry() {                                              \
    static ::fixq::cpu_detail::KernelRegistry<Type> r(                                                \
        module, {FIXQ_REGISTRY_FOR_EACH_(FIXQ_REGISTRY_ENTRY_, Type, table, __VA_ARGS__)});           \
    return r;                                                                                          \
  }
#define FIXQ_REGISTRY_ENTRY_(Type, table, family)                                                   \
  [] {                                                                                              \
    constexpr ::fixq::Isa isa = ::fixq::cpu_detail::isa_named(#family);                             \
    if constexpr (::fixq::isa_built(isa))                                                           \
      return ::fixq::cpu_detail::KernelRegistry<Type>::Entry{isa, &family::table};                  \
    else                                                                                            \
      return ::fixq::cpu_detail::KernelRegistry<Type>::Entry{isa, nullptr};                         \
  }(),
// FIXQ_REGISTRY_FOR_EACH_(M, a, b, x1, x2, ...): M(a, b, x1) M(a, b, x2) ... (up to 64 x).
#define FIXQ_REGISTRY_PARENS_ ()
#define FIXQ_REGISTRY_EXPAND_(...) FIXQ_REGISTRY_EXPAND3_(FIXQ_REGISTRY_EXPAND3_(FIXQ_REGISTRY_EXPAND3_(__VA_ARGS__)))
#define FIXQ_REGISTRY_EXPAND3_(...) FIXQ_REGISTRY_EXPAND2_(FIXQ_REGISTRY_EXPAND2_(FIXQ_REGISTRY_EXPAND2_(__VA_ARGS__)))
#define FIXQ_REGISTRY_EXPAND2_(...) FIXQ_REGISTRY_EXPAND1_(FIXQ_REGISTRY_EXPAND1_(FIXQ_REGISTRY_EXPAND1_(__VA_ARGS__)))
#define FIXQ_REGISTRY_EXPAND1_(...) __VA_ARGS__
#define FIXQ_REGISTRY_FOR_EACH_(M, a, b, ...) __VA_OPT__(FIXQ_REGISTRY_EXPAND_(FIXQ_REGISTRY_FOR_EACH_HELPER_(M, a, b, __VA_ARGS__)))
#define FIXQ_REGISTRY_FOR_EACH_HELPER_(M, a, b, x, ...) \
  M(a, b, x) __VA_OPT__(FIXQ_REGISTRY_FOR_EACH_AGAIN_ FIXQ_REGISTRY_PARENS_(M, a, b, __VA_ARGS__))
#define FIXQ_REGISTRY_FOR_EACH_AGAIN_() FIXQ_REGISTRY_FOR_EACH_HELPER_

namespace fixq::cpu_detail {

// Test-only switch (tests/support): with emulation on, set_isa_override accepts any
// family and registries run the emulated tables installed for it.
bool emulation_enabled();
void set_emulation(bool on);

// The family of a name in FIXQ_KNOWN_ISA_FAMILIES, at compile time (registry lists name
// families as their namespaces); not a name: a compile error.
consteval Isa isa_named(std::string_view name) {
#define FIXQ_ISA_NAMED_(e, family, arch, features, ...) \
  if (name == #family) return Isa::e;
  FIXQ_KNOWN_ISA_FAMILIES(FIXQ_ISA_NAMED_, )
#undef FIXQ_ISA_NAMED_
  throw "FIXQ_KERNEL_REGISTRY names an unknown family";
}

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
    const Table* table;
  };

  // The families that bring kernels, each once, in any order; the scalar table (where the
  // module has one) provides every operation. An entry of a family this build does not
  // have comes with a null table and is left out.
  KernelRegistry(const char* module, std::initializer_list<Entry> families) : module_(module) {
    for (const Entry& e : families) {
      if (!isa_built(e.isa)) continue;
      if (e.table == nullptr || count_ == slots_.size() || has_family(e.isa)) std::abort();  // a malformed list
      slots_[count_++] = Slot{e.isa, e.table, nullptr};
    }
    // Best first: more features before fewer. Every family's features include those of
    // each family it extends (fixq/cpu.h), so a family precedes all it could fall back to;
    // families of equal count (avx512vbmi, avx512bf16) are never both allowed by a
    // narrower override and keep the list's order.
    std::stable_sort(slots_.begin(), slots_.begin() + static_cast<std::ptrdiff_t>(count_), [](const Slot& a, const Slot& b) {
      return std::popcount(isa_features(a.isa)) > std::popcount(isa_features(b.isa));
    });
  }

  const char* module() const { return module_; }

  // The table a family contributes natively (null if it brings none).
  const Table* native(Isa isa) const {
    const Slot* s = slot(isa);
    return s != nullptr ? s->native : nullptr;
  }

  // Installs the emulated copy of a listed family's table (tests only, before any kernel
  // runs); false when the family is not listed.
  bool install_emulated(Isa isa, const Table* table) {
    Slot* s = slot(isa);
    if (s != nullptr) s->emulated = table;
    return s != nullptr;
  }
  bool has_emulated(Isa isa) const {
    const Slot* s = slot(isa);
    return s != nullptr && s->emulated != nullptr;
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
      if (auto k = get(*t)) {
        last_picked_.store(static_cast<int>(s.isa), std::memory_order_relaxed);
        return {k, s.isa};
      }
    }
    last_picked_.store(static_cast<int>(Isa::Scalar), std::memory_order_relaxed);
    return {nullptr, Isa::Scalar};
  }

  // find() for operations the scalar family always provides.
  template <class Get>
  auto pick(Get get) const -> Picked<decltype(get(std::declval<const Table&>()))> {
    auto p = find(get);
    if (p.kernel == nullptr) std::abort();  // unreachable: the scalar table provides it (tests check)
    return p;
  }

  // The family of the kernel find() returned last, Isa::Scalar when it found none (a trace
  // for the tests, which hold a module's report of its kernel to the kernel that actually
  // ran); -1 before any.
  int last_picked() const { return last_picked_.load(std::memory_order_relaxed); }

 private:
  struct Slot {
    Isa isa = Isa::Scalar;
    const Table* native = nullptr;
    const Table* emulated = nullptr;
  };
  bool has_family(Isa isa) const { return slot(isa) != nullptr; }
  const Slot* slot(Isa isa) const {
    for (std::size_t i = 0; i < count_; ++i)
      if (slots_[i].isa == isa) return &slots_[i];
    return nullptr;
  }
  Slot* slot(Isa isa) { return const_cast<Slot*>(std::as_const(*this).slot(isa)); }

  const char* module_;
  std::array<Slot, kAllIsas.size()> slots_{};
  std::size_t count_ = 0;
  mutable std::atomic<int> last_picked_{-1};
};

// The row of fixq::active_kernels() for an operation whose kernel is get(table): the
// family of the kernel pick() returns, which is the one the operation runs.
template <class Table, class Get>
KernelChoice choice(const char* operation, const KernelRegistry<Table>& r, Get get) {
  const Isa isa = r.pick(get).isa;
  return {operation, to_string(isa), isa};
}

// The census of kernel tables: every FIXQ_KERNEL_TABLE whose object file is linked records
// itself here before main. Dispatch never reads it (a static library drops the files no
// registry names); the tests link every object and hold the registries to it: each native
// table must be listed, each SIMDe copy is installed from it.
struct TableRecord {
  void* registry;  // the module's KernelRegistry<Table>
  const char* module;
  Isa isa;
  bool emulated;
  const void* table;
  bool (*listed)(const TableRecord&);  // the registry lists this native table for its family
  bool (*install)(const TableRecord&);  // installs this SIMDe copy (false: family not listed)

  template <class Table>
  static TableRecord of(KernelRegistry<Table>& r, Isa isa, bool emulated, const Table* table) {
    return {&r,
            r.module(),
            isa,
            emulated,
            table,
            [](const TableRecord& t) {
              return static_cast<const KernelRegistry<Table>*>(t.registry)->native(t.isa) == t.table;
            },
            [](const TableRecord& t) {
              return static_cast<KernelRegistry<Table>*>(t.registry)->install_emulated(
                  t.isa, static_cast<const Table*>(t.table));
            }};
  }
};

struct TableRecorder {
  explicit TableRecorder(const TableRecord& r);
};

// Every table recorded so far.
const std::vector<TableRecord>& recorded_tables();

}  // namespace fixq::cpu_detail
