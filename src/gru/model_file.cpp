// The float GRU model file (an nn.GRU state_dict in safetensors, with metadata that says
// what it is), and the front door that tells the files users have apart by their bytes.
#include <map>
#include <string>
#include <vector>

#include "fixq/error.h"
#include "fixq/file_kind.h"
#include "fixq/gru.h"
#include "fixq/safetensors.h"
#include "gru/state_dict_file.h"
#include "io/fixq_files.h"

namespace fixq {
namespace {

constexpr const char* kFormatKey = kFixqFormatKey;
const std::string kFormat = to_string(FileKind::GruFloat);

template <class... Args>
[[noreturn]] void fail_load(const std::string& path, const Args&... what) {
  fail("load_gru_float: ", path, ": ", what...);
}

const std::string& metadata_value(const std::string& path, const std::map<std::string, std::string>& metadata,
                                  const std::string& key) {
  const auto it = metadata.find(key);
  if (it == metadata.end()) fail_load(path, "metadata has no \"", key, "\"");
  return it->second;
}

// A metadata size: plain decimal digits, no sign, at most 18 of them.
int64_t metadata_size(const std::string& path, const std::map<std::string, std::string>& metadata,
                      const std::string& key) {
  const std::string& text = metadata_value(path, metadata, key);
  int64_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9' || text.size() > 18)
      fail_load(path, "metadata \"", key, "\" is \"", text, "\", not a decimal size");
    v = v * 10 + (c - '0');
  }
  if (text.empty()) fail_load(path, "metadata \"", key, "\" is empty, not a decimal size");
  return v;
}

// fixq's own file: every tensor is the GRU's, and the metadata repeats the sizes.
GruModel load_fixq_file(const std::string& path, const SafetensorsFile& file) {
  const auto& metadata = file.metadata();
  std::vector<NamedTensor> state_dict;
  for (const SafetensorsTensorInfo& t : file.tensors()) state_dict.push_back({t.name, t.shape, file.read_f32(t.name)});
  GruModel model;
  try {
    model = gru_from_torch(state_dict);
  } catch (const Error& e) {
    fail_load(path, e.what());
  }

  // The metadata repeats what the shapes say; a disagreement means a broken writer.
  const std::pair<const char*, int64_t> sizes[] = {
      {"input_size", model.input_size}, {"hidden_size", model.hidden_size}, {"num_layers", model.num_layers}};
  for (const auto& [key, from_tensors] : sizes)
    if (metadata_size(path, metadata, key) != from_tensors)
      fail_load(path, "metadata \"", key, "\" is \"", metadata.at(key), "\" but the tensors say ", from_tensors);
  const std::string& bidirectional = metadata_value(path, metadata, "bidirectional");
  if (bidirectional != "true" && bidirectional != "false")
    fail_load(path, "metadata \"bidirectional\" is \"", bidirectional, "\", not \"true\" or \"false\"");
  if ((bidirectional == "true") != model.bidirectional)
    fail_load(path, "metadata \"bidirectional\" is \"", bidirectional, "\" but the tensors say ",
              model.bidirectional ? "true" : "false");
  return model;
}

GruModel load_safetensors_model(const std::string& path, const std::string& prefix) {
  const SafetensorsFile file(path);
  const auto format = file.metadata().find(kFormatKey);
  if (format == file.metadata().end()) return gru_from_state_dict_file(file, prefix);
  if (format->second != kFormat)
    fail_load(path, "not a float GRU model file: metadata \"", kFormatKey, "\" is \"", format->second,
              "\" (expected \"", kFormat, "\"; tools/export_gru.py writes such files, and a plain state_dict has no \"",
              kFormatKey, "\")");
  if (!prefix.empty())
    fail_load(path, "--prefix '", prefix, "' does not apply: this is fixq's own model file, which holds one GRU");
  return load_fixq_file(path, file);
}

}  // namespace

GruModel load_gru_float(const std::string& path, const std::string& prefix) {
  FileKind kind;
  try {
    kind = file_kind(path);
  } catch (const IoError& e) {
    fail_io(e.sys_errno(), "load_gru_float: ", e.what());
  }
  switch (kind) {
    case FileKind::Safetensors:
    case FileKind::GruFloat:
    case FileKind::GruQuantized:  // its metadata gets the reader's message
    case FileKind::ModelQuantized:
      return load_safetensors_model(path, prefix);
    case FileKind::Onnx:
      return load_gru_onnx(path, prefix);
    case FileKind::Gguf:
      fail_load(path, "is a GGUF file (LLM weights for ggml); a float GRU comes as safetensors (a state_dict) or ONNX");
    case FileKind::Npy:
    case FileKind::EncodedTensor:
    case FileKind::Unknown:
      break;
  }
  fail_load(path, "neither a safetensors file nor an ONNX model; fixq reads a GRU from either "
            "(safetensors.torch.save_file(model.state_dict(), ...) or torch.onnx.export)");
}

void save_gru_float(const std::string& path, const GruModel& model) {
  const std::vector<NamedTensor> state_dict = gru_to_torch(model);  // validates the model
  std::vector<SafetensorsTensorView> views;
  for (const NamedTensor& t : state_dict)
    views.push_back({t.name, SafetensorsDtype::F32, t.shape, std::as_bytes(std::span(t.data))});
  save_safetensors(path, views,
                   {{kFormatKey, kFormat},
                    {"input_size", std::to_string(model.input_size)},
                    {"hidden_size", std::to_string(model.hidden_size)},
                    {"num_layers", std::to_string(model.num_layers)},
                    {"bidirectional", model.bidirectional ? "true" : "false"}});
}

}  // namespace fixq
