// fixq/quantize_stats.h — llama.cpp's quantize-stats: how much error each GGUF block type
// (and bf16, the row seed 004 prints beside them) costs over the float tensors of a file.
//
// A file's tensors are read one at a time (memory: one tensor plus small buffers) and
// round-tripped through every requested type in chunks of whole blocks, which is identical
// to packing the whole tensor since no block straddles a chunk. `fixq quantize-stats`
// prints the result as llama.cpp does (ErrorStats::llama_line, summary).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fixq/gguf.h"
#include "fixq/metrics.h"
#include "fixq/tensor.h"

namespace fixq {

struct QuantizeStatsOptions {
  // GGUF type names, as ggml spells them ("q4_0", "q4_K", ...), or "bf16" (fixq/bf16.h:
  // round to nearest even, one value per "block").
  std::vector<std::string> types;
  bool per_tensor = false;         // also keep each tensor's own statistics
  // Called as the work advances: done and total count values times types (a tensor skipped
  // for a type counts as done for it), e.g. for a progress bar.
  std::function<void(int64_t done, int64_t total)> progress;
};

struct QuantizeStatsType {
  std::string name;                        // as requested: "q4_K", "bf16"
  const gguf::TypeTraits* type = nullptr;  // null for bf16
  int64_t block_elems = 1;                 // values per block (1 for bf16)
  ErrorStats total;                                          // every tensor measured
  std::vector<std::pair<std::string, ErrorStats>> tensors;   // per tensor, with per_tensor
  // Tensors whose last dimension is not a multiple of the type's block, left out.
  int64_t skipped_tensors = 0, skipped_values = 0;
};

// The float tensors of one file: a .npy (one tensor, <f4 or <f8), a safetensors file (F32,
// F16, BF16, F64) or a GGUF file (f32, f16, bf16, f64), told apart by their first bytes.
// Tensors of other dtypes, and a GGUF file's tensors already in a block format, are listed
// and not measured. Throws fixq::Error naming the file when it is none of these.
class QuantizeStatsInput {
 public:
  explicit QuantizeStatsInput(const std::string& path);
  ~QuantizeStatsInput();
  QuantizeStatsInput(const QuantizeStatsInput&) = delete;
  QuantizeStatsInput& operator=(const QuantizeStatsInput&) = delete;

  std::size_t float_tensors() const;
  int64_t float_values() const;                  // over all float tensors
  const std::vector<std::string>& skipped() const;    // "name dtype": other dtypes
  const std::vector<std::string>& quantized() const;  // "name type": already in a block format

  // Round-trips every float tensor through every type of `options`. Throws fixq::Error for
  // an unknown type, a non-finite value (naming tensor and element), or values too large
  // for a type's fp16 block scales.
  std::vector<QuantizeStatsType> run(const QuantizeStatsOptions& options) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace fixq
