// The GGUF-file paths of `fixq formats`: .npy or .safetensors into a .gguf, and one tensor
// of a GGUF file out to .npy. The work is the library's (fixq/gguf_file.h).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli/format_registry.h"
#include "fixq/error.h"
#include "fixq/gguf_file.h"
#include "fixq/npy.h"

namespace fixq::cli {

bool is_gguf_output(const std::string& path) { return path.ends_with(".gguf"); }

bool is_gguf_file(const std::string& path) {
  char magic[4] = {};
  std::ifstream(path, std::ios::binary).read(magic, sizeof magic);
  return std::string(magic, sizeof magic) == "GGUF";
}

void quantize_to_gguf(const std::string& type_name, const std::string& in, const std::string& out,
                      const std::string& name, const std::string& fallback) {
  const gguf::TensorType& type = gguf::tensor_type(type_name);
  if (in.ends_with(".safetensors")) {
    require(name.empty(), "--name applies to a .npy input; a .safetensors file keeps its tensors' names");
    const auto packed = gguf::pack_safetensors(in, out, type, gguf::tensor_type(fallback));
    for (const gguf::PackedTensor& t : packed)
      std::printf("  %-48s %-8s %-20s %s\n", t.name.c_str(), std::string(t.type->name).c_str(), shape_str(t.shape).c_str(),
                  t.note.c_str());
    std::printf("%s -> %s: %zu tensors\n", in.c_str(), out.c_str(), packed.size());
    return;
  }
  Shape shape;
  const std::vector<float> x = load_npy_f32(in, &shape);
  const std::string tensor = name.empty() ? std::filesystem::path(in).stem().string() : name;
  const std::vector<std::byte> bytes = gguf::encode(type, x, shape);
  gguf::save(out, {{"general.quantization_version", gguf::Value::u32(2)}},
             {{tensor, &type, shape, [&bytes] { return bytes; }}});
  std::printf("%s %s -> %s: tensor '%s', %zu bytes of %s (%.3f bits per value)\n", in.c_str(), shape_str(shape).c_str(),
              out.c_str(), tensor.c_str(), bytes.size(), std::string(type.name).c_str(),
              x.empty() ? 0.0 : 8.0 * static_cast<double>(bytes.size()) / static_cast<double>(x.size()));
}

void dequantize_from_gguf(const std::string& in, const std::string& tensor, const std::string& out) {
  const gguf::File f(in);
  if (tensor.empty()) {
    std::string names;
    for (std::size_t i = 0; i < f.tensors().size() && i < 8; ++i) names += (i ? ", " : "") + f.tensors()[i].name;
    fail(in, " is a GGUF file of ", f.tensors().size(), " tensors: name one with --tensor (",
         f.tensors().size() > 8 ? names + ", ...; `fixq gguf info` lists all" : names, ")");
  }
  const gguf::TensorInfo& t = f.info(tensor);
  const std::vector<float> x = f.read_f32(t);
  save_npy_f32(out, x.data(), t.shape);
  std::printf("%s: '%s' (%s %s) -> %s\n", in.c_str(), t.name.c_str(), std::string(t.type->name).c_str(),
              shape_str(t.shape).c_str(), out.c_str());
}

}  // namespace fixq::cli
