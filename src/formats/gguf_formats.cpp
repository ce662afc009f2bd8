// The Gguf family of fixq/formats.h: one entry per block format of fixq/gguf.h, named as
// ggml names it, encoded as a GGUF file's tensor of that type (gguf::encode, which refuses
// a block whose scale would leave fp16: ggml stores it as infinity and
// ggml_validate_row_data then rejects it). Decoding refuses a payload with such a block.
#include <cstdio>
#include <string>

#include "fixq/error.h"
#include "fixq/gguf.h"
#include "fixq/gguf_file.h"
#include "formats/families.h"

namespace fixq::formats_detail {

namespace {

std::string describe(const gguf::TypeTraits& t) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "GGUF %s: blocks of %lld values in %zu bytes (%.4g bits per value), ggml's bytes",
                std::string(t.name).c_str(), static_cast<long long>(t.block_elems), t.block_bytes,
                8.0 * static_cast<double>(t.block_bytes) / static_cast<double>(t.block_elems));
  return buf;
}

// Throws unless every block's scale fields are finite.
void require_valid_blocks(const gguf::TypeTraits& t, std::span<const std::byte> payload) {
  const int64_t bad = gguf::first_invalid_block(t.type, payload);
  if (bad < 0) return;
  fail(t.name, " block ", bad, " (elements ", bad * t.block_elems, "..", (bad + 1) * t.block_elems - 1,
       " in C order) has a NaN or infinite scale");
}

Format entry(const gguf::TypeTraits& t) {
  const gguf::Type type = t.type;
  Format f;
  f.name = std::string(t.name);
  f.family = FormatFamily::Gguf;
  f.description = describe(t);
  // As gguf::packed_size, which validates the shape, but as an int64: near numel's limit
  // the blocks take up to 15% more bytes than int64 holds.
  f.payload_bytes = [type, name = f.name](const Shape& shape) {
    const gguf::TypeTraits& tt = gguf::traits(type);
    gguf::packed_size(type, shape);
    return checked_mul(numel(shape) / tt.block_elems, static_cast<int64_t>(tt.block_bytes), "the byte count of ", name,
                       " values of shape ", shape_str(shape));
  };
  f.encode = [name = f.name](const float* x, const Shape& shape, const EncodeOptions& options) {
    require(options.overflow == Overflow::Default, "saturation applies to the low-precision float formats, not to ", name);
    // The bytes of a GGUF file's tensor of this type, checked as such (fixq/gguf_file.h).
    return gguf::encode(gguf::tensor_type(name), std::span<const float>(x, static_cast<size_t>(numel(shape))), shape);
  };
  f.decode = [type](std::span<const std::byte> payload, const Shape& shape) {
    std::vector<float> x = gguf::dequantize(type, payload, shape);
    require_valid_blocks(gguf::traits(type), payload);
    return x;
  };
  return f;
}

}  // namespace

std::vector<Format> gguf_formats() {
  std::vector<Format> out;
  for (const gguf::TypeTraits& t : gguf::all_types()) out.push_back(entry(t));
  return out;
}

}  // namespace fixq::formats_detail
