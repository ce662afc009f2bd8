// The safetensors dtype table: names as the format spells them and item sizes.
#include <array>
#include <string>

#include "fixq/error.h"
#include "fixq/safetensors.h"

namespace fixq {
namespace {

struct DtypeRow {
  SafetensorsDtype dtype;
  const char* name;
  std::size_t itemsize;
};

// One row per dtype, in enum order.
constexpr std::array<DtypeRow, 15> kDtypes{{
    {SafetensorsDtype::BOOL, "BOOL", 1},   {SafetensorsDtype::U8, "U8", 1},
    {SafetensorsDtype::I8, "I8", 1},       {SafetensorsDtype::F8_E5M2, "F8_E5M2", 1},
    {SafetensorsDtype::F8_E4M3, "F8_E4M3", 1}, {SafetensorsDtype::I16, "I16", 2},
    {SafetensorsDtype::U16, "U16", 2},     {SafetensorsDtype::F16, "F16", 2},
    {SafetensorsDtype::BF16, "BF16", 2},   {SafetensorsDtype::I32, "I32", 4},
    {SafetensorsDtype::U32, "U32", 4},     {SafetensorsDtype::F32, "F32", 4},
    {SafetensorsDtype::I64, "I64", 8},     {SafetensorsDtype::U64, "U64", 8},
    {SafetensorsDtype::F64, "F64", 8},
}};

constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < kDtypes.size(); ++i)
    if (static_cast<std::size_t>(kDtypes[i].dtype) != i) return false;
  return true;
}
static_assert(rows_in_enum_order(), "kDtypes is indexed by SafetensorsDtype");

const DtypeRow& row(SafetensorsDtype dtype) {
  const auto i = static_cast<std::size_t>(dtype);
  if (i >= kDtypes.size()) fail("safetensors: invalid SafetensorsDtype value ", i);
  return kDtypes[i];
}

}  // namespace

std::string to_string(SafetensorsDtype dtype) { return row(dtype).name; }

std::size_t safetensors_itemsize(SafetensorsDtype dtype) { return row(dtype).itemsize; }

SafetensorsDtype parse_safetensors_dtype(const std::string& name) {
  std::string known;
  for (const DtypeRow& r : kDtypes) {
    if (name == r.name) return r.dtype;
    known += known.empty() ? "" : ", ";
    known += r.name;
  }
  fail("unknown safetensors dtype '", name, "' (known: ", known, ")");
}

}  // namespace fixq
