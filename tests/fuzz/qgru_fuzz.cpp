// libFuzzer target "qgru": fixq::QuantizedGru::load, then forward on a [2, 1, C] input.
// Corpus: tests/fuzz/corpus/qgru/; run with scripts/fuzz.sh.
#include "fuzz/fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fixq::fuzz::fuzz_one_input("qgru", data, size);
}
