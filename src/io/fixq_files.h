// Private: the metadata that marks fixq's own safetensors files. The writers
// (gru/model_file.cpp, gru/q_file.cpp) put it there; file_kind() reads it.
#pragma once

namespace fixq {

inline constexpr const char* kFixqFormatKey = "fixq.format";
// The values: to_string(FileKind::GruFloat) and to_string(FileKind::GruQuantized).

}  // namespace fixq
