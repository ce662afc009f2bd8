// libFuzzer target "npy": fixq::load_npy (and load_npy_f32 for float files).
// Corpus: tests/fuzz/corpus/npy/; run with scripts/fuzz.sh.
#include "fuzz/fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fixq::fuzz::fuzz_one_input("npy", data, size);
}
