// GGUF metadata values: typed access and a printable rendering.
#include <array>
#include <cinttypes>
#include <cstdio>
#include <string>

#include "fixq/error.h"
#include "fixq/gguf_file.h"
#include "io/printable.h"

namespace fixq::gguf {
namespace {

constexpr std::array<std::string_view, 13> kNames = {"uint8",  "int8",  "uint16", "int16",  "uint32", "int32", "float32",
                                                     "bool",   "string", "array", "uint64", "int64",  "float64"};

bool is_unsigned(ValueType t) {
  return t == ValueType::U8 || t == ValueType::U16 || t == ValueType::U32 || t == ValueType::U64;
}
bool is_signed(ValueType t) {
  return t == ValueType::I8 || t == ValueType::I16 || t == ValueType::I32 || t == ValueType::I64;
}

// Quoted, with control characters and non-ASCII bytes escaped, so that any file prints
// as one safe line; long strings are cut.
std::string quote(const std::string& s) {
  constexpr std::size_t kMaxChars = 120;
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size() && i < kMaxChars; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += s.size() > kMaxChars ? "\"... (" + std::to_string(s.size()) + " bytes)" : "\"";
  return out;
}

}  // namespace

std::string printable(std::string_view s) { return detail::printable(s); }

std::string_view to_string(ValueType type) {
  const auto i = static_cast<std::size_t>(type);
  if (i >= kNames.size()) fail("gguf: invalid ValueType ", i);
  return kNames[i];
}

Value Value::array(ValueType element, std::vector<Value> items) {
  for (std::size_t i = 0; i < items.size(); ++i)
    if (items[i].type() != element)
      fail("gguf: array of ", to_string(element), ": item ", i, " is a ", to_string(items[i].type()));
  return {ValueType::Array, Array{element, std::move(items)}};
}

uint64_t Value::as_uint() const {
  if (!is_unsigned(type_)) fail("gguf: value is a ", to_string(type_), ", not an unsigned integer");
  return std::get<uint64_t>(v_);
}

int64_t Value::as_int() const {
  if (is_signed(type_)) return std::get<int64_t>(v_);
  if (is_unsigned(type_) && std::get<uint64_t>(v_) <= static_cast<uint64_t>(INT64_MAX))
    return static_cast<int64_t>(std::get<uint64_t>(v_));
  fail("gguf: value is a ", to_string(type_), is_unsigned(type_) ? " beyond int64" : "", ", not an integer");
}

double Value::as_float() const {
  if (type_ != ValueType::F32 && type_ != ValueType::F64) fail("gguf: value is a ", to_string(type_), ", not a float");
  return std::get<double>(v_);
}

bool Value::as_bool() const {
  if (type_ != ValueType::Bool) fail("gguf: value is a ", to_string(type_), ", not a bool");
  return std::get<bool>(v_);
}

const std::string& Value::as_string() const {
  if (type_ != ValueType::String) fail("gguf: value is a ", to_string(type_), ", not a string");
  return std::get<std::string>(v_);
}

const Value::Array& Value::as_array() const {
  if (type_ != ValueType::Array) fail("gguf: value is a ", to_string(type_), ", not an array");
  return std::get<Array>(v_);
}

std::string Value::str(std::size_t max_items) const {
  char buf[64];
  switch (type_) {
    case ValueType::U8:
    case ValueType::U16:
    case ValueType::U32:
    case ValueType::U64:
      return std::to_string(std::get<uint64_t>(v_));
    case ValueType::I8:
    case ValueType::I16:
    case ValueType::I32:
    case ValueType::I64:
      return std::to_string(std::get<int64_t>(v_));
    case ValueType::F32:
      std::snprintf(buf, sizeof buf, "%.9g", std::get<double>(v_));
      return buf;
    case ValueType::F64:
      std::snprintf(buf, sizeof buf, "%.17g", std::get<double>(v_));
      return buf;
    case ValueType::Bool:
      return std::get<bool>(v_) ? "true" : "false";
    case ValueType::String:
      return quote(std::get<std::string>(v_));
    case ValueType::Array: {
      const Array& a = std::get<Array>(v_);
      std::string out = "[" + std::to_string(a.items.size()) + " x " + std::string(to_string(a.element)) + "] [";
      for (std::size_t i = 0; i < a.items.size() && i < max_items; ++i)
        out += (i ? ", " : "") + a.items[i].str(max_items);
      return out + (a.items.size() > max_items ? ", ...]" : "]");
    }
  }
  fail("gguf: invalid ValueType ", static_cast<uint32_t>(type_));
}

}  // namespace fixq::gguf
