// Names of the GRU operators (docs/spec.md 3.2), for messages, files and command lines.
#include <array>
#include <string>

#include "fixq/error.h"
#include "fixq/gru.h"

namespace fixq {
namespace {

// Indexed by GruOp.
constexpr std::array<const char*, kGruOpCount> kOpNames{
    "x",     "h",     "W",     "R",     "bx",        "br",  "Wx",          "Rh",         "z_pre",
    "r_pre", "g_pre", "z_out", "r_out", "g_out", "Rh_add_br", "rRh", "old_contrib", "new_contrib"};

}  // namespace

std::string to_string(GruOp op) {
  const auto i = static_cast<std::size_t>(op);
  if (i >= kOpNames.size()) fail("invalid GruOp value ", i);
  return kOpNames[i];
}

GruOp parse_gru_op(const std::string& name) {
  for (std::size_t i = 0; i < kOpNames.size(); ++i)
    if (name == kOpNames[i]) return static_cast<GruOp>(i);
  std::string known;
  for (const char* n : kOpNames) known += (known.empty() ? "" : ", ") + std::string(n);
  fail("unknown GRU operator '", name, "' (known: ", known, ")");
}

}  // namespace fixq
