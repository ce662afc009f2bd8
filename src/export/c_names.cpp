// The symbol prefix of generated C code: every public name is PREFIX_... or prefix_...,
// the files are prefix.h and prefix.c, so the prefix must be a plain C identifier.
#include <string>
#include <string_view>

#include "fixq/error.h"
#include "fixq/export.h"

namespace fixq {

namespace {

// C99's keywords, C11's and C23's (the names a C compiler may reserve), and the spellings
// of C++ keywords that C headers meet through extern "C".
constexpr std::string_view kReserved[] = {
    "auto",     "break",   "case",      "char",      "const",    "continue",      "default",  "do",       "double",
    "else",     "enum",    "extern",    "float",     "for",      "goto",          "if",       "inline",   "int",
    "long",     "register", "restrict", "return",    "short",    "signed",        "sizeof",   "static",   "struct",
    "switch",   "typedef", "union",     "unsigned",  "void",     "volatile",      "while",    "bool",     "true",
    "false",    "nullptr", "alignas",   "alignof",   "constexpr", "static_assert", "thread_local", "typeof",
    "typeof_unqual", "class", "delete", "new",       "namespace", "operator",     "private",  "protected", "public",
    "template", "this",    "throw",     "try",       "catch",    "virtual"};

bool identifier_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

}  // namespace

void validate_c_name(const std::string& name) {
  if (name.empty()) fail("the C name is empty; give a C identifier such as kws");
  for (size_t i = 0; i < name.size(); ++i)
    if (!identifier_char(name[i], i == 0))
      fail("'", name, "' is not a C identifier (character ", i + 1, " is not a letter, digit or '_', or a digit comes first); ",
           "use letters, digits and '_', e.g. kws");
  if (name[0] == '_') fail("'", name, "' starts with '_': such names are reserved to the C implementation; use e.g. kws");
  if (name.size() > 32) fail("'", name, "' is longer than 32 characters; choose a shorter prefix");
  for (std::string_view k : kReserved)
    if (name == k) fail("'", name, "' is a C (or C++) keyword; choose another name, e.g. ", name, "_gru");
}

}  // namespace fixq
