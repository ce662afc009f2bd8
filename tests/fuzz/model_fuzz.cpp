// libFuzzer target "model": fixq::QuantizedModel::load, then forward on a tiny input.
// Corpus: tests/fuzz/corpus/model/; run with scripts/fuzz.sh.
#include "fuzz/fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fixq::fuzz::fuzz_one_input("model", data, size);
}
