// The model-file loaders under fuzzing, one "target" each, shared by the libFuzzer
// executables (tests/fuzz/*_fuzz.cpp) and the corpus regression test
// (tests/fuzz_regression/), so that both run every input in exactly the same way.
//
// The contract checked: on any file a loader returns normally or throws fixq::Error.
// run_target() swallows fixq::Error only; any other exception escapes (libFuzzer then
// reports a crash, gtest a failure), and crashes and sanitizer reports surface as such.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fixq/error.h"
#include "fixq/gguf_file.h"
#include "fixq/gru.h"
#include "fixq/model.h"
#include "fixq/npy.h"
#include "fixq/encoded_file.h"
#include "fixq/formats.h"
#include "fixq/qgru.h"
#include "fixq/safetensors.h"

namespace fixq::fuzz {

// Opens the file and reads every tensor: raw bytes always, and as float32 where the
// dtype converts (read_f32 has its own checks, e.g. F64 beyond the float range).
inline void load_safetensors(const std::string& path) {
  const SafetensorsFile file(path);
  for (const SafetensorsTensorInfo& t : file.tensors()) {
    file.read_raw(t.name);
    const SafetensorsDtype d = t.dtype;
    if (d == SafetensorsDtype::F32 || d == SafetensorsDtype::F16 || d == SafetensorsDtype::BF16 ||
        d == SafetensorsDtype::F64)
      file.read_f32(t.name);
  }
}

// fixq's float model file, a plain state_dict or an ONNX model, whichever the bytes are.
inline void load_gru_float_model(const std::string& path) { load_gru_float(path); }

// An ONNX model's GRU (the bytes are always taken as ONNX, whatever they start with).
inline void load_gru_onnx_model(const std::string& path) { load_gru_onnx(path); }

// A whole ONNX model; what loads also runs a float forward on a tiny input (B = 1, T = 2,
// zeros for initial states), so that every imported operator and layout is used once.
// Models wider than 4096 features are only loaded (a forward would only cost time).
inline void load_onnx_model_and_run(const std::string& path) {
  const Model m = load_model_onnx(path);
  std::vector<ModelArray> inputs;
  for (const int i : m.inputs) {
    const ModelValue& v = m.values[static_cast<size_t>(i)];
    ModelArray a;
    if (v.kind == ValueKind::Sequence) {
      if (v.features > 4096) return;
      for (const char axis : v.layout.axes) a.shape.push_back(axis == 'B' ? 1 : axis == 'T' ? 2 : v.features);
      a.data.resize(static_cast<size_t>(numel(a.shape)));
      for (size_t k = 0; k < a.data.size(); ++k) a.data[k] = static_cast<float>(static_cast<int>(k % 5) - 2) * 0.5f;
    }
    inputs.push_back(std::move(a));
  }
  for (const ModelNode& n : m.nodes)
    if (n.in_features > 4096 || n.out_features > 4096 || (n.gru && n.gru->hidden_size > 4096)) return;
  model_forward(m, inputs);
}

// Opens the file, then reads every tensor: raw bytes always, and as float32 where fixq
// decodes the type (read_f32 has its own checks, e.g. integers not exact in float32).
inline void load_gguf(const std::string& path) {
  const gguf::File file(path);
  for (const gguf::TensorInfo& t : file.tensors()) {
    file.read_raw(t);
    if (t.type->decodable()) file.read_f32(t);
  }
}

// A loaded model is also run on a tiny input of its width (T = 2, B = 1), so that every
// loaded parameter (scales, tables, weights) is used at least once.
inline void load_qgru_and_run(const std::string& path) {
  const QuantizedGru q = QuantizedGru::load(path);
  const int64_t C = q.input_size();
  std::vector<float> x(static_cast<size_t>(2 * C));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.25f;
  q.forward(x.data(), Shape{2, 1, C});
}

// A whole quantized model, run on a tiny input (T = 2, B = 1, State inputs zero) so that
// every loaded parameter (scales, tables, weights, GRUs) is used at least once.
inline void load_model_and_run(const std::string& path) {
  const QuantizedModel q = QuantizedModel::load(path);
  const Model& m = q.model();
  std::vector<ModelArray> in;
  for (int v : m.inputs) {
    const ModelValue& mv = m.values[static_cast<size_t>(v)];
    if (mv.kind == ValueKind::State) {
      in.push_back({});
      continue;
    }
    const int64_t C = mv.features;
    ModelArray a;
    a.shape = mv.layout.axes == "TC" ? Shape{2, C} : mv.layout.axes == "BCT" ? Shape{1, C, 2} : mv.layout.axes == "TBC" ? Shape{2, 1, C} : Shape{1, 2, C};
    for (int64_t i = 0; i < 2 * C; ++i) a.data.push_back(static_cast<float>(static_cast<int>(i % 7) - 3) * 0.25f);
    in.push_back(std::move(a));
  }
  q.forward(in);
}

// A .bin file and its values: the container's checks, then the format's own decoder
// (fixq/formats.h) on whatever format name, shape and payload the file holds.
inline void load_encoded_tensor(const std::string& path) { decode(load_encoded(path)); }

// load_npy, and for float files also load_npy_f32 (whose f8 -> f4 range check is its own).
inline void load_npy_array(const std::string& path) {
  const NpyArray a = load_npy(path);
  if (a.dtype == "<f4" || a.dtype == "<f8") load_npy_f32(path);
}

struct Target {
  std::string_view name;  // executable fuzz_<name>, corpus tests/fuzz/corpus/<name>/
  void (*load)(const std::string& path);
};

inline constexpr std::array<Target, 9> kTargets{{
    {"safetensors", load_safetensors},
    {"gru_float", load_gru_float_model},
    {"qgru", load_qgru_and_run},
    {"encoded", load_encoded_tensor},
    {"npy", load_npy_array},
    {"gguf", load_gguf},
    {"onnx_gru", load_gru_onnx_model},
    {"onnx_model", load_onnx_model_and_run},
    {"model", load_model_and_run},
}};

// The target of that name; throws fixq::Error for an unknown one.
inline const Target& find_target(std::string_view name) {
  for (const Target& t : kTargets)
    if (t.name == name) return t;
  fail("fuzz: no target named '", name, "'");
}

// Runs one file through a target: true when it loaded, false when the loader refused it
// with fixq::Error. Anything else is a bug and is not caught here.
inline bool run_target(const Target& target, const std::string& path) {
  try {
    target.load(path);
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace fixq::fuzz
