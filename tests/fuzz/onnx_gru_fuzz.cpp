// libFuzzer target "onnx_gru": fixq::load_gru_onnx (ONNX protobuf, GRU chains, weights).
// Corpus: tests/fuzz/corpus/onnx_gru/; run with scripts/fuzz.sh.
#include "fuzz/fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fixq::fuzz::fuzz_one_input("onnx_gru", data, size);
}
