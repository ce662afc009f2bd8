// The GGUF entries of `fixq formats`: one per type of fixq/gguf.h, named as ggml names
// them. Packing is ggml's reference quantization; a tensor whose blocks would get a scale
// beyond fp16 (which ggml stores as infinity and ggml_validate_row_data then rejects) is
// refused on the way in, and a .bin with such a block on the way out.
#include <cstdio>
#include <string>

#include "cli/format_registry.h"
#include "fixq/error.h"
#include "fixq/gguf.h"

namespace fixq::cli {

namespace {

std::string describe(const gguf::TypeTraits& t) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "GGUF %s: blocks of %lld values in %zu bytes (%.4g bits per value), ggml's bytes",
                std::string(t.name).c_str(), static_cast<long long>(t.block_elems), t.block_bytes,
                8.0 * static_cast<double>(t.block_bytes) / static_cast<double>(t.block_elems));
  return buf;
}

// Throws unless every block's scale fields are finite.
void require_valid_blocks(const gguf::TypeTraits& t, std::span<const std::byte> packed, const char* when) {
  const int64_t bad = gguf::first_invalid_block(t.type, packed);
  if (bad < 0) return;
  fail(t.name, " block ", bad, " (elements ", bad * t.block_elems, "..", (bad + 1) * t.block_elems - 1,
       " in C order) ", when);
}

CliFormat entry(const gguf::TypeTraits& t) {
  const gguf::Type type = t.type;
  CliFormat f;
  f.name = std::string(t.name);
  f.description = describe(t);
  f.quantize = [type](const float* x, const Shape& shape, const FormatOptions& options) {
    const gguf::TypeTraits& tt = gguf::traits(type);
    require(!options.saturate, "--saturate applies to the low-precision float formats, not to ", tt.name);
    std::vector<std::byte> packed(gguf::packed_size(type, shape));
    gguf::quantize(type, x, numel(shape), packed.data());
    require_valid_blocks(tt, packed, "needs a scale beyond the fp16 range (its values are too large for this format)");
    return packed;
  };
  f.dequantize = [type](const std::byte* data, std::size_t bytes, const Shape& shape) {
    const std::span<const std::byte> packed(data, bytes);
    std::vector<float> x = gguf::dequantize(type, packed, shape);
    require_valid_blocks(gguf::traits(type), packed, "has a NaN or infinite scale");
    return x;
  };
  return f;
}

}  // namespace

std::vector<CliFormat> gguf_formats() {
  std::vector<CliFormat> out;
  for (const gguf::TypeTraits& t : gguf::all_types()) out.push_back(entry(t));
  return out;
}

}  // namespace fixq::cli
