// Private to the CLI: the formats `fixq formats quantize|dequantize` converts .npy to and
// from. Each format family registers its entries from its own file (formats_gguf.cpp,
// formats_lowp.cpp, ...), so adding a format is adding an entry.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "fixq/tensor.h"

namespace fixq::cli {

struct FormatOptions {
  bool saturate = false;  // low-precision floats: saturate to the largest finite value
};

struct CliFormat {
  std::string name;         // what --type takes, e.g. "q4_K", "e4m3fn"
  std::string description;  // one line for --help
  // Packs float32 values of the given shape; throws fixq::Error for shapes the format
  // cannot hold (e.g. a last dimension that is not a multiple of the block) or bad values.
  std::function<std::vector<std::byte>(const float* x, const Shape& shape, const FormatOptions&)> quantize;
  // Unpacks a payload produced by quantize for this shape; throws fixq::Error if its size
  // does not match the shape or its contents are invalid.
  std::function<std::vector<float>(const std::byte* data, size_t bytes, const Shape& shape)> dequantize;
};

// Every registered format. Registration is explicit (no static initializers), in
// formats_cmd.cpp, so the order is fixed and nothing is dropped by the linker.
const std::vector<CliFormat>& all_formats();

// The entries of each family, defined in that family's file.
std::vector<CliFormat> gguf_formats();
std::vector<CliFormat> lowp_formats();

// GGUF files in `fixq formats` (formats_gguf_file.cpp): `quantize` writes a .gguf when the
// output is named so (from one .npy, or every tensor of a .safetensors), and `dequantize`
// reads one tensor of a GGUF file.
bool is_gguf_output(const std::string& path);
bool is_gguf_file(const std::string& path);  // by its magic
void quantize_to_gguf(const std::string& type, const std::string& in, const std::string& out, const std::string& name,
                      const std::string& fallback);
void dequantize_from_gguf(const std::string& in, const std::string& tensor, const std::string& out);

}  // namespace fixq::cli
