// libFuzzer target "onnx_model": fixq::load_model_onnx (ONNX protobuf, the whole graph:
// layouts, folded shape chains, GRU chains, weights) and a float forward of what loads.
// Corpus: tests/fuzz/corpus/onnx_model/; run with scripts/fuzz.sh.
#include "fuzz/fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fixq::fuzz::fuzz_one_input("onnx_model", data, size);
}
