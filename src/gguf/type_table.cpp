// The table of formats: one row per GGUF type with its traits and its kernels for each
// instruction set. Adding a format is adding a row (and its kernels).
#include <array>
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
  FormatKernels scalar;
  FormatKernels avx2;
};

constexpr std::optional<Type> kNoDot = std::nullopt;

// In ggml type-id order; rows are indexed by static_cast<int>(Type) through row().
constexpr std::array<FormatRow, 18> kRows = {{
    {{Type::Q4_0, "q4_0", 2, kQK, sizeof(BlockQ4_0), Type::Q8_0, true},
     {1, {0, 0}, -1},
     {quantize_q4_0_ref, dequantize_q4_0_ref, dot_q4_0_q8_0_ref},
     {quantize_q4_0_ref, dequantize_q4_0_avx2, dot_q4_0_q8_0_avx2}},
    {{Type::Q4_1, "q4_1", 3, kQK, sizeof(BlockQ4_1), Type::Q8_1, true},
     {2, {0, 2}, -1},
     {quantize_q4_1_ref, dequantize_q4_1_ref, dot_q4_1_q8_1_ref},
     {quantize_q4_1_ref, dequantize_q4_1_avx2, dot_q4_1_q8_1_avx2}},
    {{Type::Q5_0, "q5_0", 6, kQK, sizeof(BlockQ5_0), Type::Q8_0, true},
     {1, {0, 0}, -1},
     {quantize_q5_0_ref, dequantize_q5_0_ref, dot_q5_0_q8_0_ref},
     {quantize_q5_0_ref, dequantize_q5_0_avx2, dot_q5_0_q8_0_avx2}},
    {{Type::Q5_1, "q5_1", 7, kQK, sizeof(BlockQ5_1), Type::Q8_1, true},
     {2, {0, 2}, -1},
     {quantize_q5_1_ref, dequantize_q5_1_ref, dot_q5_1_q8_1_ref},
     {quantize_q5_1_ref, dequantize_q5_1_avx2, dot_q5_1_q8_1_avx2}},
    {{Type::Q8_0, "q8_0", 8, kQK, sizeof(BlockQ8_0), Type::Q8_0, true},
     {1, {0, 0}, -1},
     {quantize_q8_0_ref, dequantize_q8_0_ref, dot_q8_0_q8_0_ref},
     {quantize_q8_0_avx2, dequantize_q8_0_avx2, dot_q8_0_q8_0_avx2}},
    {{Type::Q8_1, "q8_1", 9, kQK, sizeof(BlockQ8_1), kNoDot, false},
     {2, {0, 2}, -1},
     {quantize_q8_1_ref, dequantize_q8_1_ref, nullptr},
     {quantize_q8_1_avx2, dequantize_q8_1_avx2, nullptr}},
    {{Type::Q2_K, "q2_K", 10, kQK_K, sizeof(BlockQ2_K), Type::Q8_K, true},
     {2, {80, 82}, -1},
     {quantize_q2_k_ref, dequantize_q2_k_ref, dot_q2_k_q8_k_ref},
     {quantize_q2_k_ref, dequantize_q2_k_avx2, dot_q2_k_q8_k_avx2}},
    {{Type::Q3_K, "q3_K", 11, kQK_K, sizeof(BlockQ3_K), Type::Q8_K, true},
     {1, {108, 0}, -1},
     {quantize_q3_k_ref, dequantize_q3_k_ref, dot_q3_k_q8_k_ref},
     {quantize_q3_k_ref, dequantize_q3_k_avx2, dot_q3_k_q8_k_avx2}},
    {{Type::Q4_K, "q4_K", 12, kQK_K, sizeof(BlockQ4_K), Type::Q8_K, true},
     {2, {0, 2}, -1},
     {quantize_q4_k_ref, dequantize_q4_k_ref, dot_q4_k_q8_k_ref},
     {quantize_q4_k_ref, dequantize_q4_k_avx2, dot_q4_k_q8_k_avx2}},
    {{Type::Q5_K, "q5_K", 13, kQK_K, sizeof(BlockQ5_K), Type::Q8_K, true},
     {2, {0, 2}, -1},
     {quantize_q5_k_ref, dequantize_q5_k_ref, dot_q5_k_q8_k_ref},
     {quantize_q5_k_ref, dequantize_q5_k_avx2, dot_q5_k_q8_k_avx2}},
    {{Type::Q6_K, "q6_K", 14, kQK_K, sizeof(BlockQ6_K), Type::Q8_K, true},
     {1, {208, 0}, -1},
     {quantize_q6_k_ref, dequantize_q6_k_ref, dot_q6_k_q8_k_ref},
     {quantize_q6_k_ref, dequantize_q6_k_avx2, dot_q6_k_q8_k_avx2}},
    {{Type::Q8_K, "q8_K", 15, kQK_K, sizeof(BlockQ8_K), kNoDot, true},
     {0, {0, 0}, 0},
     {quantize_q8_k_ref, dequantize_q8_k_ref, nullptr},
     {quantize_q8_k_avx2, dequantize_q8_k_avx2, nullptr}},
    {{Type::IQ4_NL, "iq4_nl", 20, kQK, sizeof(BlockIq4Nl), Type::Q8_0, true},
     {1, {0, 0}, -1},
     {quantize_iq4_nl_ref, dequantize_iq4_nl_ref, dot_iq4_nl_q8_0_ref},
     {quantize_iq4_nl_ref, dequantize_iq4_nl_avx2, dot_iq4_nl_q8_0_avx2}},
    {{Type::IQ4_XS, "iq4_xs", 23, kQK_K, sizeof(BlockIq4Xs), Type::Q8_K, true},
     {1, {0, 0}, -1},
     {quantize_iq4_xs_ref, dequantize_iq4_xs_ref, dot_iq4_xs_q8_k_ref},
     {quantize_iq4_xs_ref, dequantize_iq4_xs_avx2, dot_iq4_xs_q8_k_avx2}},
    {{Type::TQ1_0, "tq1_0", 34, kQK_K, sizeof(BlockTq1_0), Type::Q8_K, true},
     {1, {52, 0}, -1},
     {quantize_tq1_0_ref, dequantize_tq1_0_ref, dot_tq1_0_q8_k_ref},
     {quantize_tq1_0_ref, dequantize_tq1_0_avx2, dot_tq1_0_q8_k_avx2}},
    {{Type::TQ2_0, "tq2_0", 35, kQK_K, sizeof(BlockTq2_0), Type::Q8_K, true},
     {1, {64, 0}, -1},
     {quantize_tq2_0_ref, dequantize_tq2_0_ref, dot_tq2_0_q8_k_ref},
     {quantize_tq2_0_ref, dequantize_tq2_0_avx2, dot_tq2_0_q8_k_avx2}},
    {{Type::MXFP4, "mxfp4", 39, kQK, sizeof(BlockMxfp4), Type::Q8_0, true},
     {0, {0, 0}, -1},
     {quantize_mxfp4_ref, dequantize_mxfp4_ref, dot_mxfp4_q8_0_ref},
     {quantize_mxfp4_ref, dequantize_mxfp4_avx2, dot_mxfp4_q8_0_avx2}},
    {{Type::NVFP4, "nvfp4", 40, kQKNvfp4, sizeof(BlockNvfp4), Type::Q8_0, true},
     {0, {0, 0}, -1},
     {quantize_nvfp4_ref, dequantize_nvfp4_ref, dot_nvfp4_q8_0_ref},
     {quantize_nvfp4_ref, dequantize_nvfp4_avx2, dot_nvfp4_q8_0_avx2}},
}};

constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < kRows.size(); ++i)
    if (static_cast<std::size_t>(kRows[i].traits.type) != i) return false;
  return true;
}
static_assert(rows_in_enum_order(), "kRows must be indexed by Type");

const FormatRow& row(Type type) { return kRows[static_cast<std::size_t>(type)]; }

// The traits alone, contiguous, for all_types(); traits() hands out the same objects.
constexpr std::array<TypeTraits, 18> kTraits = [] {
  std::array<TypeTraits, 18> t{};
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

const detail::FormatKernels& detail::kernels_for(Type type, Isa isa) {
  return isa == Isa::Scalar ? row(type).scalar : row(type).avx2;
}

}  // namespace fixq::gguf
