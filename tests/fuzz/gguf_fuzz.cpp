// libFuzzer target "gguf": fixq::gguf::File (open, then read every tensor).
// Corpus: tests/fuzz/corpus/gguf/; run with scripts/fuzz.sh.
#include "fuzz/fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fixq::fuzz::fuzz_one_input("gguf", data, size);
}
