// Private: parsing and validating the JSON header of a safetensors file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fixq/safetensors.h"

namespace fixq {

struct SafetensorsHeader {
  std::vector<SafetensorsTensorInfo> tensors;  // in data order
  std::map<std::string, std::string> metadata;
};

// Parses the N header bytes `text` of the file at `path` (for messages) whose data section
// holds `data_bytes` bytes, and checks everything fixq/safetensors.h lists. Throws
// fixq::Error "safetensors: <path>: ...".
SafetensorsHeader parse_safetensors_header(const std::string& path, std::string_view text,
                                           uint64_t data_bytes);

}  // namespace fixq
