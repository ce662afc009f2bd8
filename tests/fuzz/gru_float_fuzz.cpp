// libFuzzer target "gru_float": fixq::load_gru_float.
// Corpus: tests/fuzz/corpus/gru_float/; run with scripts/fuzz.sh.
#include "fuzz/fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fixq::fuzz::fuzz_one_input("gru_float", data, size);
}
