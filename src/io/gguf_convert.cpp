// Float tensors into GGUF tensor bytes, and a whole safetensors file into one GGUF file.
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include "fixq/error.h"
#include "fixq/gguf_file.h"
#include "fixq/lowp.h"
#include "fixq/safetensors.h"

namespace fixq::gguf {
namespace {

// general.quantization_version of the files written here: ggml's GGML_QNT_VERSION, the
// version of its block formats' bytes.
constexpr uint32_t kQuantizationVersion = 2;

std::vector<std::byte> to_bytes(const void* p, std::size_t n) {
  const auto* b = static_cast<const std::byte*>(p);
  return {b, b + n};
}

std::vector<std::byte> encode_16(LowpType t, std::span<const float> x) {
  if (t == LowpType::Fp16)
    for (std::size_t i = 0; i < x.size(); ++i)
      if (std::isfinite(x[i]) && std::fabs(x[i]) >= 65520.0f)  // rounds to +-inf in fp16
        fail("f16: element ", i, " = ", x[i], " is beyond the f16 range (65504); use bf16 or f32");
  std::vector<uint16_t> codes(x.size());
  lowp_encode(t, x.data(), static_cast<int64_t>(x.size()), codes.data());
  return to_bytes(codes.data(), codes.size() * 2);
}

}  // namespace

std::vector<std::byte> encode(const TensorType& type, std::span<const float> x, const Shape& shape) {
  const uint64_t bytes = tensor_bytes(type, shape);
  if (static_cast<int64_t>(x.size()) != numel(shape))
    fail("encode to ", type.name, ": ", x.size(), " values for shape ", shape_str(shape));
  if (type.name == "f32") return to_bytes(x.data(), x.size() * 4);
  if (type.name == "f16") return encode_16(LowpType::Fp16, x);
  if (type.name == "bf16") return encode_16(LowpType::Bf16, x);
  if (!type.block)
    fail("encode to ", type.name, ": fixq writes float data as f32, f16, bf16 or one of its block formats, not ",
         type.is_int ? "an integer type" : "this format");
  std::vector<std::byte> out(bytes);
  quantize(*type.block, x.data(), static_cast<int64_t>(x.size()), out.data());
  const int64_t bad = first_invalid_block(*type.block, out);
  if (bad >= 0)
    fail(type.name, " block ", bad, " (elements ", bad * type.block_elems, "..", (bad + 1) * type.block_elems - 1,
         " in C order) needs a scale beyond the fp16 range (its values are too large for this format)");
  return out;
}

std::vector<ConvertedTensor> convert_safetensors(const std::string& in, const std::string& out, const TensorType& type,
                                           const TensorType& fallback) {
  if (!fallback.is_float || fallback.name == "f64")
    fail("convert_safetensors: the fallback type must be f32, f16 or bf16, not ", fallback.name);
  if (!type.is_float && !type.block) fail("convert_safetensors: fixq packs float tensors as f32, f16, bf16 or a block format, not ", type.name);
  const SafetensorsFile file(in);
  std::vector<ConvertedTensor> plan;
  std::vector<TensorToWrite> tensors;
  std::string refused;
  for (const SafetensorsTensorInfo& t : file.tensors()) {
    ConvertedTensor p{t.name, &type, t.shape, ""};
    switch (t.dtype) {
      case SafetensorsDtype::F32:
      case SafetensorsDtype::F16:
      case SafetensorsDtype::BF16:
      case SafetensorsDtype::F64:
        if (type.block && t.shape.size() < 2) {
          p.type = &fallback;
          p.note = "a vector: kept as " + std::string(fallback.name) + " (llama.cpp quantizes matrices only)";
        } else if (!t.shape.empty() && t.shape.back() % type.block_elems != 0) {
          p.type = &fallback;
          p.note = "rows of " + std::to_string(t.shape.back()) + " are not whole " + std::string(type.name) +
                   " blocks of " + std::to_string(type.block_elems) + ": kept as " + std::string(fallback.name);
        }
        break;
      case SafetensorsDtype::I8: p.type = &tensor_type("i8"); break;
      case SafetensorsDtype::I16: p.type = &tensor_type("i16"); break;
      case SafetensorsDtype::I32: p.type = &tensor_type("i32"); break;
      case SafetensorsDtype::I64: p.type = &tensor_type("i64"); break;
      default:
        refused += (refused.empty() ? "" : ", ") + t.name + " (" + to_string(t.dtype) + ")";
        continue;
    }
    if (t.shape.size() > 4) fail("convert_safetensors: ", in, ": tensor '", t.name, "' has rank ", t.shape.size(), "; GGUF allows at most 4");
    const TensorType* tt = p.type;
    const std::string name = t.name;
    const Shape shape = t.shape;
    const bool is_float = !tt->is_int;
    tensors.push_back({name, tt, shape, [&file, tt, name, shape, is_float]() -> std::vector<std::byte> {
                         if (!is_float) return file.read_raw(name);
                         try {
                           return encode(*tt, file.read_f32(name), shape);
                         } catch (const Error& e) {
                           fail("tensor '", name, "': ", e.what());
                         }
                       }});
    plan.push_back(std::move(p));
  }
  if (!refused.empty())
    fail("convert_safetensors: ", in, ": tensors of dtypes GGUF has no type for: ", refused,
         "; convert them to a float or signed integer dtype first");
  Metadata kv;
  kv.emplace_back("general.name", Value::string(std::filesystem::path(in).filename().string()));
  kv.emplace_back("general.quantization_version", Value::u32(kQuantizationVersion));
  for (const auto& [key, value] : file.metadata()) kv.emplace_back("safetensors." + key, Value::string(value));
  save(out, kv, tensors);
  return plan;
}

std::size_t pack_array(const std::string& out, const std::string& name, const TensorType& type, std::span<const float> x,
                       const Shape& shape) {
  const std::vector<std::byte> bytes = encode(type, x, shape);
  save(out, {{"general.quantization_version", Value::u32(kQuantizationVersion)}},
       {{name, &type, shape, [&bytes] { return bytes; }}});
  return bytes.size();
}

}  // namespace fixq::gguf
