// Private: bytes from a file (names, keys, parser messages quoting them) made safe for a
// one-line message or a terminal.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace fixq::detail {

// The length of the valid UTF-8 sequence starting at s[i] (2..4), or 0 when there is
// none or it encodes a C1 control character (U+0080..U+009F).
inline std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const std::size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  // No C1 controls, overlong forms, surrogates or code points beyond U+10FFFF (RFC 3629).
  const auto c1 = static_cast<unsigned char>(s[i + 1]);
  if ((c == 0xc2 && c1 < 0xa0) || (c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 > 0x9f) || (c == 0xf0 && c1 < 0x90) ||
      (c == 0xf4 && c1 > 0x8f))
    return 0;
  return n;
}

// s with printable ASCII and UTF-8 sequences kept, every other byte as \xNN.
inline std::string printable(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      ++i;
    } else if (const std::size_t n = c >= 0x80 ? utf8_sequence(s, i) : 0; n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      ++i;
    }
  }
  return out;
}

}  // namespace fixq::detail
