// The table of formats: one row per GGUF type with its traits. Adding a format is adding a
// row here and its kernels to each family's table (table_<family>.cpp).
#include <array>
#include <cstddef>
#include <string>

#include "fixq/error.h"
#include "gguf/blocks.h"
#include "gguf/kernels.h"

namespace fixq::gguf {

namespace {

using namespace detail;

struct FormatRow {
  TypeTraits traits;
  ScaleFields fields;
};

constexpr std::optional<Type> kNoDot = std::nullopt;

// In ggml type-id order; rows are indexed by static_cast<int>(Type) through row().
constexpr std::array<FormatRow, kTypeCount> kRows = {{
    {{Type::Q4_0, "q4_0", 2, kQK, sizeof(BlockQ4_0), Type::Q8_0, true},
     {1, {offsetof(BlockQ4_0, d), 0}, -1}},
    {{Type::Q4_1, "q4_1", 3, kQK, sizeof(BlockQ4_1), Type::Q8_1, true},
     {2, {offsetof(BlockQ4_1, d), offsetof(BlockQ4_1, m)}, -1}},
    {{Type::Q5_0, "q5_0", 6, kQK, sizeof(BlockQ5_0), Type::Q8_0, true},
     {1, {offsetof(BlockQ5_0, d), 0}, -1}},
    {{Type::Q5_1, "q5_1", 7, kQK, sizeof(BlockQ5_1), Type::Q8_1, true},
     {2, {offsetof(BlockQ5_1, d), offsetof(BlockQ5_1, m)}, -1}},
    {{Type::Q8_0, "q8_0", 8, kQK, sizeof(BlockQ8_0), Type::Q8_0, true},
     {1, {offsetof(BlockQ8_0, d), 0}, -1}},
    {{Type::Q8_1, "q8_1", 9, kQK, sizeof(BlockQ8_1), kNoDot, false},
     {2, {offsetof(BlockQ8_1, d), offsetof(BlockQ8_1, s)}, -1}},
    {{Type::Q2_K, "q2_K", 10, kQK_K, sizeof(BlockQ2_K), Type::Q8_K, true},
     {2, {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)}, -1}},
    {{Type::Q3_K, "q3_K", 11, kQK_K, sizeof(BlockQ3_K), Type::Q8_K, true},
     {1, {offsetof(BlockQ3_K, d), 0}, -1}},
    {{Type::Q4_K, "q4_K", 12, kQK_K, sizeof(BlockQ4_K), Type::Q8_K, true},
     {2, {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)}, -1}},
    {{Type::Q5_K, "q5_K", 13, kQK_K, sizeof(BlockQ5_K), Type::Q8_K, true},
     {2, {offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)}, -1}},
    {{Type::Q6_K, "q6_K", 14, kQK_K, sizeof(BlockQ6_K), Type::Q8_K, true},
     {1, {offsetof(BlockQ6_K, d), 0}, -1}},
    {{Type::Q8_K, "q8_K", 15, kQK_K, sizeof(BlockQ8_K), kNoDot, true},
     {0, {0, 0}, offsetof(BlockQ8_K, d)}},
    {{Type::IQ4_NL, "iq4_nl", 20, kQK, sizeof(BlockIq4Nl), Type::Q8_0, true},
     {1, {offsetof(BlockIq4Nl, d), 0}, -1}},
    {{Type::IQ4_XS, "iq4_xs", 23, kQK_K, sizeof(BlockIq4Xs), Type::Q8_K, true},
     {1, {offsetof(BlockIq4Xs, d), 0}, -1}},
    {{Type::TQ1_0, "tq1_0", 34, kQK_K, sizeof(BlockTq1_0), Type::Q8_K, true},
     {1, {offsetof(BlockTq1_0, d), 0}, -1}},
    {{Type::TQ2_0, "tq2_0", 35, kQK_K, sizeof(BlockTq2_0), Type::Q8_K, true},
     {1, {offsetof(BlockTq2_0, d), 0}, -1}},
    {{Type::MXFP4, "mxfp4", 39, kQK, sizeof(BlockMxfp4), Type::Q8_0, true},
     {0, {0, 0}, -1}},
    {{Type::NVFP4, "nvfp4", 40, kQKNvfp4, sizeof(BlockNvfp4), Type::Q8_0, true},
     {0, {0, 0}, -1}},
}};

constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < kRows.size(); ++i)
    if (static_cast<std::size_t>(kRows[i].traits.type) != i) return false;
  return true;
}
static_assert(rows_in_enum_order(), "kRows must be indexed by Type");

const FormatRow& row(Type type) { return kRows[static_cast<std::size_t>(type)]; }

// The traits alone, contiguous, for all_types(); traits() hands out the same objects.
constexpr std::array<TypeTraits, kTypeCount> kTraits = [] {
  std::array<TypeTraits, kTypeCount> t{};
  for (std::size_t i = 0; i < kRows.size(); ++i) t[i] = kRows[i].traits;
  return t;
}();

}  // namespace

std::span<const TypeTraits> all_types() { return kTraits; }

const TypeTraits& traits(Type type) { return kTraits[static_cast<std::size_t>(type)]; }

const TypeTraits& traits(std::string_view name) {
  std::string known;
  for (const TypeTraits& t : kTraits) {
    if (t.name == name) return t;
    known += (known.empty() ? "" : ", ") + std::string(t.name);
  }
  fail("unknown GGUF type '", name, "'; known types: ", known);
}

const detail::ScaleFields& detail::scale_fields(Type type) { return row(type).fields; }


}  // namespace fixq::gguf
