#include "export/c_text.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "fixq/error.h"

namespace fixq::export_detail {

std::string c_int(int64_t v) {
  if (v == INT64_MIN) return "(-9223372036854775807 - 1)";
  if (v == INT32_MIN) return "(-2147483647 - 1)";
  return std::to_string(v);
}

std::string c_macro_int(int64_t v) {
  const std::string s = c_int(v);
  return v < 0 && s[0] != '(' ? "(" + s + ")" : s;
}

std::string c_float(float v) {
  require(std::isfinite(v), "C export: non-finite constant ", v);
  if (v == 0.0f) return std::signbit(v) ? "-0.0f" : "0.0f";
  int e = 0;
  const double f = std::frexp(static_cast<double>(std::fabs(v)), &e);  // |v| = f 2^e, f in [0.5, 1)
  // A binary32 significand has 24 bits: f * 2^24 is an exact integer.
  auto m = static_cast<uint32_t>(std::ldexp(f, 24));
  int exp = e - 24;
  while (m % 2 == 0) {  // the shortest odd significand, so the literal reads well
    m /= 2;
    ++exp;
  }
  char hex[16];
  std::snprintf(hex, sizeof hex, "%X", m);
  char dec[32];
  const auto r = std::to_chars(dec, dec + sizeof dec, v);  // shortest round-trip decimal
  return std::string(v < 0 ? "-" : "") + "0x" + hex + "p" + std::to_string(exp) + "f /* " +
         std::string(dec, r.ptr) + " */";
}

std::string with_prefix(std::string text, const std::string& prefix) {
  std::string upper = prefix;
  for (char& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '$' && i + 1 < text.size() && (text[i + 1] == 'p' || text[i + 1] == 'U')) {
      out += text[i + 1] == 'p' ? prefix : upper;
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace fixq::export_detail
