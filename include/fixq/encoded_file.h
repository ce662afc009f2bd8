// fixq/encoded_file.h — the .bin container: one tensor encoded in a named format.
//
// An encoded payload (GGUF blocks, float8 bytes, MX blocks, ...: fixq/formats.h) does not
// say its own shape or format, so fixq wraps it in a small self-describing header, all
// little-endian:
//   8 bytes  magic "FIXQPK" followed by version 1 as a u16
//   u32      length of the format name (1..64), then the name's bytes (printable ASCII)
//   u32      rank (0..32), then rank i64 extents (>= 0)
//   u64      payload length in bytes, then the payload
// Nothing may follow the payload. Reading checks every field and the file size before
// allocating, so a truncated, oversized or corrupt file is a clear fixq::Error, never a
// crash. Writing goes through a temporary file, so a failure never destroys an existing
// file. The container does not interpret the payload: fixq::decode (fixq/formats.h) checks
// it against its format and shape.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "fixq/tensor.h"

namespace fixq {

// Values of `shape` encoded in `format` (a name of fixq/formats.h): `payload` is what
// fixq::encode returns for them.
struct EncodedTensor {
  std::string format;
  Shape shape;
  std::vector<std::byte> payload;
};

void save_encoded(const std::string& path, const EncodedTensor& t);
EncodedTensor load_encoded(const std::string& path);

}  // namespace fixq
