#include "cli/fake_quant.h"

namespace fixq::cli {

QuantScheme make_scheme(int bits, bool is_signed, Symmetry sym, ScaleKind kind, Granularity g, int axis,
                        int64_t group_size) {
  QuantScheme s;
  s.format = IntFormat::make(bits, is_signed);
  s.symmetry = sym;
  s.scale_kind = kind;
  s.granularity = g;
  s.axis = axis;
  s.group_size = group_size;
  s.validate();
  return s;
}

}  // namespace fixq::cli
