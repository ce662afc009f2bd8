// libFuzzer target "safetensors": fixq::SafetensorsFile (open, then read every tensor).
// Corpus: tests/fuzz/corpus/safetensors/; run with scripts/fuzz.sh.
#include "fuzz/fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fixq::fuzz::fuzz_one_input("safetensors", data, size);
}
