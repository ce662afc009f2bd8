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

std::string to_string(GruCellKind kind) {
  switch (kind) {
    case GruCellKind::ResetAfter: return "reset_after";
    case GruCellKind::ResetBefore: return "reset_before";
  }
  fail("invalid GruCellKind value ", static_cast<int>(kind));
}

GruCellKind parse_gru_cell_kind(const std::string& name, const std::string& what) {
  for (GruCellKind k : {GruCellKind::ResetAfter, GruCellKind::ResetBefore})
    if (name == to_string(k)) return k;
  fail(what, " '", name, "' is not one of: reset_after, reset_before");
}

bool gru_op_used(GruOp op, GruCellKind kind) {
  return kind == GruCellKind::ResetAfter || (op != GruOp::RhAddBr && op != GruOp::RRh);
}

}  // namespace fixq
