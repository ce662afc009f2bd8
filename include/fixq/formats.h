// fixq/formats.h — every number format fixq encodes float tensors into, by name.
//
// One registry for the library, the command line (`fixq formats`) and Python
// (fixq.formats): a format is a name, its other accepted names, a family, a one-line
// description, and the pair encode (float32 values of a shape -> payload bytes) / decode
// (payload bytes and the shape -> float32 values). Adding a format is adding an entry.
//
// Families and their payloads (all little-endian):
//   Gguf       ggml's block formats ("q4_0", "q4_K", "iq4_nl", "mxfp4", ...; fixq/gguf.h):
//              each row of the last axis in whole blocks, ggml's quantize_row_*_ref bytes.
//              Encoding refuses NaN / inf and a block whose scale would leave fp16 (ggml
//              would store it as infinity); decoding refuses a block with such a scale.
//   LowpFloat  float8/6/4, bf16, fp16 ("e4m3fn", ..., "bf16", "fp16"; fixq/lowp.h Parts
//              1-3): the codes of all values in order, 16-bit codes as uint16, 8-bit codes
//              as bytes, 6- and 4-bit codes densely packed. Overflow::Saturate picks
//              saturation to +-max; every other family refuses it except Mx, which always
//              clamps (the OCP spec requires it).
//   Mx         OCP MX blocks ("mxfp8_e4m3", ..., "ocp_mxfp4", "mxint8"; fixq/lowp.h Part
//              4): blocks of 32 values along the last axis, each the scale byte then the
//              packed elements. "mxfp4" is ggml's layout of the same values (Gguf).
//   IntGroups  "int2_g32", "int4_g32", "int8_g32": asymmetric b-bit codes with one float32
//              scale and one zero point per group of 32 values along the last axis, the
//              rules of fixq/weightonly.h (ranges never clipped, round half to even). For
//              values [R, C] (C a multiple of 32, G = C / 32): the R * C codes densely
//              packed in C order (fixq/lowp.h Part 3), then the scales float32 [R, G], then
//              the zero points uint8 [R, G]; value = float32(q - z) * s.
// A format that packs the last axis needs rank >= 1 and a last extent its block divides.
// Every function here throws fixq::Error with a one-line message for bad input: an
// unknown name (listing the known ones), a shape the format cannot hold, a payload of the
// wrong size or with invalid contents.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fixq/encoded_file.h"
#include "fixq/lowp.h"
#include "fixq/tensor.h"

namespace fixq {

enum class FormatFamily { Gguf, LowpFloat, Mx, IntGroups };

// "gguf", "float", "mx", "int_groups".
std::string to_string(FormatFamily family);

struct EncodeOptions {
  Overflow overflow = Overflow::Default;  // LowpFloat only (see above)
};

struct Format {
  std::string name;                  // what the .bin file stores, e.g. "q4_K", "e4m3fn"
  std::vector<std::string> aliases;  // other accepted names, e.g. "float8_e4m3fn" (ml_dtypes')
  FormatFamily family;
  std::string description;           // one line
  // Bytes the values of `shape` take; throws for a shape the format cannot hold.
  std::function<int64_t(const Shape& shape)> payload_bytes;
  std::function<std::vector<std::byte>(const float* x, const Shape& shape, const EncodeOptions& options)> encode;
  std::function<std::vector<float>(std::span<const std::byte> payload, const Shape& shape)> decode;
};

// Every format, GGUF first (in ggml type-id order), then the low-precision floats, MX and
// the integer groups. Names and aliases are unique across all of them.
const std::vector<Format>& all_formats();

// The format of a name or alias; throws fixq::Error listing the names.
const Format& find_format(std::string_view name);

// x (numel(shape) values) in the named format; the result names the format by its name,
// not the alias it was asked for.
EncodedTensor encode(std::string_view format, const float* x, const Shape& shape, const EncodeOptions& options = {});

// The values of an encoded tensor: throws unless its format is known and its payload has
// exactly the size and the contents that format requires for its shape.
std::vector<float> decode(const EncodedTensor& t);

}  // namespace fixq
