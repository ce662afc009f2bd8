// libFuzzer target "packed": fixq::load_packed.
// Corpus: tests/fuzz/corpus/packed/; run with scripts/fuzz.sh.
#include "fuzz/fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fixq::fuzz::fuzz_one_input("packed", data, size);
}
