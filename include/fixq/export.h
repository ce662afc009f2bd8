// fixq/export.h — a quantized GRU as standalone C99 source, and its tables as files, for
// microcontrollers, DSPs and hardware flows.
//
// export_gru_c writes NAME.h and NAME.c: the integer GRU of a QuantizedGru with every
// constant (weights, biases, fixed-point ratios, zero points, ranges, activation tables)
// as const data, and one C function per operator of docs/spec.md. The generated code is
// C99, uses no heap, no libm and no float outside its two host helpers, includes only
// <stdint.h>, <stddef.h> and <string.h>, and computes the same integers as
// QuantizedGru::forward (the library's reference loop) bit for bit. Its API:
//   NAME_INPUT_SIZE, NAME_HIDDEN_SIZE, NAME_NUM_LAYERS, NAME_DIRECTIONS, NAME_OUTPUT_SIZE;
//   NAME_x_t, NAME_h_t: int8_t or int16_t, the widths of layer 0's x and of h;
//   struct NAME_state (owned by the caller), void NAME_reset(NAME_state*);
//   unidirectional: void NAME_step(NAME_state*, const NAME_x_t* x_q, NAME_h_t* h_q);
//   bidirectional:  void NAME_sequence(NAME_state*, const NAME_x_t* x_q, size_t steps,
//                                      NAME_h_t* y_q, NAME_x_t* scratch);
//   unless NAME_NO_FLOAT is defined: NAME_quantize_x, NAME_dequantize_h (docs/spec.md 3.1).
// The same model gives the same bytes on every run.
#pragma once

#include <string>

#include "fixq/qgru.h"

namespace fixq {

struct CExportOptions {
  std::string name = "gru";  // prefix of every symbol and the file names; a C identifier
  std::string source;        // where the model came from, quoted in the files' comments
};

struct CExportFiles {
  std::string header;  // NAME.h
  std::string source;  // NAME.c
};

// Throws fixq::Error unless name is usable as the prefix: a C identifier of at most 32
// characters, not a C keyword and not starting with '_' (reserved).
void validate_c_name(const std::string& name);

// The two files' text. Throws fixq::Error for a bad name or a model the generator cannot
// express (a size beyond the limits fixq itself enforces).
CExportFiles export_gru_c(const QuantizedGru& model, const CExportOptions& options);

// Writes DIR/NAME.h and DIR/NAME.c (each atomically; DIR and its parents are created when
// missing) and nothing else.
void write_gru_c(const QuantizedGru& model, const std::string& dir, const CExportOptions& options);

// Writes every activation table of the model to DIR (created when missing): cell{c}.{sig_z,sig_r,tanh_g}.npy
// (int32, the entries as stored in the .fixq file) and tables.h, the same entries as C
// arrays with each table's layout (input minimum, interpolation step, fractional bits,
// output range). Returns the paths written, in order.
std::vector<std::string> write_gru_tables(const QuantizedGru& model, const std::string& dir);

}  // namespace fixq
