// libFuzzer target "encoded": fixq::load_encoded, then fixq::decode of what it read.
// Corpus: tests/fuzz/corpus/encoded/; run with scripts/fuzz.sh.
#include "fuzz/fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fixq::fuzz::fuzz_one_input("encoded", data, size);
}
