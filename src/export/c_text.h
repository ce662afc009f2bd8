// Private: writing C source text that is exact and the same on every machine (integer
// literals that are valid for every value, binary32 constants as hexadecimal literals,
// arrays laid out 16 to a line, `$p` / `$U` placeholders for the symbol prefix).
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace fixq::export_detail {

// A decimal integer literal valid in C for every int64 value (INT64_MIN and INT32_MIN
// are written as expressions, since their magnitude is not a literal of their type).
std::string c_int(int64_t v);
// c_int for a macro's value: a negative number in parentheses, so that any expression may
// use the macro.
std::string c_macro_int(int64_t v);

// An exact C99 hexadecimal floating literal of a finite binary32 value, with the decimal
// value in a comment: "0x800000p-30f /* 0.0078125 */". Independent of printf's %a.
std::string c_float(float v);

// "{ v0, v1, ... }" with 16 values per line, each line indented by `indent` spaces.
template <class T>
std::string c_array_body(std::span<const T> values, int indent = 2) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i % 16 == 0) out += "\n" + std::string(static_cast<size_t>(indent), ' ');
    out += c_int(static_cast<int64_t>(values[i]));
    if (i + 1 < values.size()) out += i % 16 == 15 ? "," : ", ";
  }
  return out + "\n}";
}

// text with every "$p" replaced by prefix and every "$U" by PREFIX (upper case).
std::string with_prefix(std::string text, const std::string& prefix);

}  // namespace fixq::export_detail
