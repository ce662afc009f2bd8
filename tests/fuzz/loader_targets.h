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

inline constexpr std::array<Target, 7> kTargets{{
    {"safetensors", load_safetensors},
    {"gru_float", load_gru_float_model},
    {"qgru", load_qgru_and_run},
    {"encoded", load_encoded_tensor},
    {"npy", load_npy_array},
    {"gguf", load_gguf},
    {"onnx_gru", load_gru_onnx_model},
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
