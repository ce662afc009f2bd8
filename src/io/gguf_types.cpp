// The tensor types a GGUF file may hold: ggml's type ids with their block sizes. Block
// formats come from fixq/gguf.h's table (all_types()), so a format added there is read
// and written here without a change; ggml's formats that fixq has no kernels for keep
// their sizes here, so that files holding them open and list.
#include <algorithm>
#include <string>
#include <vector>

#include "fixq/error.h"
#include "fixq/gguf_file.h"

namespace fixq::gguf {
namespace {

struct Row {
  uint32_t id;
  const char* name;
  int64_t block_elems;
  std::size_t block_bytes;
};

// Plain element types: one value per "block".
constexpr Row kFloat[] = {{0, "f32", 1, 4}, {1, "f16", 1, 2}, {28, "f64", 1, 8}, {30, "bf16", 1, 2}};
constexpr Row kInt[] = {{24, "i8", 1, 1}, {25, "i16", 1, 2}, {26, "i32", 1, 4}, {27, "i64", 1, 8}};
// ggml's block formats (ggml.h / ggml-common.h), sizes from their block structs. Rows of
// fixq/gguf.h's table take precedence, so only the formats fixq cannot decode are used.
constexpr Row kGgmlBlocks[] = {
    {16, "iq2_xxs", 256, 66}, {17, "iq2_xs", 256, 74}, {18, "iq3_xxs", 256, 98}, {19, "iq1_s", 256, 50},
    {21, "iq3_s", 256, 110},  {22, "iq2_s", 256, 82},  {23, "iq4_xs", 256, 136}, {29, "iq1_m", 256, 56},
    {34, "tq1_0", 256, 54},   {35, "tq2_0", 256, 66},  {40, "nvfp4", 64, 36},
};

std::vector<TensorType> build_table() {
  std::vector<TensorType> v;
  for (const Row& r : kFloat) v.push_back({r.id, r.name, r.block_elems, r.block_bytes, std::nullopt, true, false});
  for (const Row& r : kInt) v.push_back({r.id, r.name, r.block_elems, r.block_bytes, std::nullopt, false, true});
  for (const TypeTraits& t : all_types())
    v.push_back({static_cast<uint32_t>(t.ggml_type), t.name, t.block_elems, t.block_bytes, t.type, false, false});
  for (const Row& r : kGgmlBlocks) {
    const bool known = std::any_of(v.begin(), v.end(), [&](const TensorType& t) { return t.id == r.id; });
    if (!known) v.push_back({r.id, r.name, r.block_elems, r.block_bytes, std::nullopt, false, false});
  }
  std::sort(v.begin(), v.end(), [](const TensorType& a, const TensorType& b) { return a.id < b.id; });
  return v;
}

const std::vector<TensorType>& table() {
  static const std::vector<TensorType> t = build_table();
  return t;
}

}  // namespace

std::vector<TensorType> all_tensor_types() { return table(); }

const TensorType* find_tensor_type(uint32_t id) {
  for (const TensorType& t : table())
    if (t.id == id) return &t;
  return nullptr;
}

const TensorType& tensor_type(std::string_view name) {
  std::string known;
  for (const TensorType& t : table()) {
    if (t.name == name) return t;
    known += (known.empty() ? "" : ", ") + std::string(t.name);
  }
  fail("unknown GGUF tensor type '", name, "'; known types: ", known);
}

uint64_t tensor_bytes(const TensorType& type, const Shape& shape) {
  const int64_t row = shape.empty() ? 1 : shape.back();
  const int64_t n = numel(shape);  // throws for negative extents and overflow
  if (row % type.block_elems != 0)
    fail(type.name, " packs each row in blocks of ", type.block_elems, " values; shape ", shape_str(shape),
         " has rows of ", row);
  return static_cast<uint64_t>(checked_mul(n / type.block_elems, static_cast<int64_t>(type.block_bytes),
                                           "the byte count of a ", type.name, " tensor of shape ", shape_str(shape)));
}

}  // namespace fixq::gguf
