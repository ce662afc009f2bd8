// The registry of fixq/formats.h: every family's entries in one table, looked up by name
// or alias, and encode / decode through it.
#include <cstdio>
#include <set>
#include <string>

#include "fixq/error.h"
#include "fixq/formats.h"
#include "formats/families.h"

namespace fixq {

namespace formats_detail {

void require_blocks_of(const std::string& format, const Shape& shape, int64_t block) {
  if (shape.empty() || shape.back() % block != 0)
    fail(format, " packs blocks of ", block, " values along the last axis; shape ", shape_str(shape),
         shape.empty() ? " has no axis" : "'s last dimension is not a multiple of " + std::to_string(block));
}

void require_payload_bytes(const std::string& format, const Shape& shape, int64_t want, std::size_t got) {
  if (static_cast<uint64_t>(want) != got)
    fail(shape_str(shape), " ", format, " values take ", want, " bytes, the payload has ", got);
}

}  // namespace formats_detail

std::string to_string(FormatFamily family) {
  switch (family) {
    case FormatFamily::Gguf: return "gguf";
    case FormatFamily::LowpFloat: return "float";
    case FormatFamily::Mx: return "mx";
    case FormatFamily::IntGroups: return "int_groups";
  }
  return "unknown";
}

const std::vector<Format>& all_formats() {
  static const std::vector<Format> formats = [] {
    std::vector<Format> all;
    for (auto family : {formats_detail::gguf_formats, formats_detail::lowp_float_formats, formats_detail::mx_formats,
                        formats_detail::int_group_formats})
      for (Format& f : family()) all.push_back(std::move(f));
    // One name, one format: a clash would make a .bin file ambiguous.
    std::set<std::string> names;
    for (const Format& f : all) {
      require(names.insert(f.name).second, "formats: the name '", f.name, "' is registered twice");
      for (const std::string& a : f.aliases) require(names.insert(a).second, "formats: the alias '", a, "' is taken");
    }
    return all;
  }();
  return formats;
}

const Format& find_format(std::string_view name) {
  std::string known;
  for (const Format& f : all_formats()) {
    if (f.name == name) return f;
    for (const std::string& a : f.aliases)
      if (a == name) return f;
    known += (known.empty() ? "" : ", ") + f.name;
  }
  fail("unknown format '", name, "'; known formats: ", known);
}

EncodedTensor encode(std::string_view format, const float* x, const Shape& shape, const EncodeOptions& options) {
  const Format& f = find_format(format);
  const int64_t n = numel(shape);
  require(n == 0 || x != nullptr, "encode: null data pointer");
  return EncodedTensor{f.name, shape, f.encode(x, shape, options)};
}

std::vector<float> decode(const EncodedTensor& t) {
  const Format& f = find_format(t.format);
  numel(t.shape);  // validates the extents
  return f.decode(t.payload, t.shape);
}

}  // namespace fixq
