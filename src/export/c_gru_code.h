// Private: the model-independent parts of the generated C file, as text with `$p` / `$U`
// placeholders (c_text.h). Each function is one operation of docs/spec.md; the generator
// (c_gru.cpp) adds the typedefs that depend on the widths, the constants and the API.
#pragma once

namespace fixq::export_detail {

// Part 1: RSHR, saturation, A(rho, x) with its exact 128-bit path, requantize, LUT.
extern const char* const kPrimitivesC;
// Part 2: the cell's constants (struct gru_cell) and one function per operator of 5.1/5.2,
// the unit update and the cell step. Needs the typedefs w_t, r_t, acc_w_t, acc_r_t.
extern const char* const kOperatorsC;
// 6.4: a lower layer's h in the next layer's x parameters (multi-layer models only).
extern const char* const kNextLayerC;
// 3.1: quantize one float (host helper, under $U_NO_FLOAT).
extern const char* const kQuantizeC;

}  // namespace fixq::export_detail
