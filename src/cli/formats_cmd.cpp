// fixq formats: float32 .npy tensors into any format of fixq/formats.h (a .bin of
// fixq/encoded_file.h) or into GGUF files (fixq/gguf_file.h), and back. The library does
// the work; this file parses the options and prints what was done.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "fixq/error.h"
#include "fixq/file_kind.h"
#include "fixq/formats.h"
#include "fixq/gguf_file.h"
#include "fixq/npy.h"

namespace fixq::cli {

namespace {

struct Options {
  std::string type;
  std::string in;
  std::string out;
  bool saturate = false;
  std::string name, fallback = "f32", tensor;
};

double bits_per_value(std::size_t bytes, std::size_t values) {
  return values == 0 ? 0.0 : 8.0 * static_cast<double>(bytes) / static_cast<double>(values);
}

void quantize_to_gguf(const Options& o) {
  require(!o.saturate, "--saturate applies to the low-precision float formats, which GGUF files do not hold");
  const gguf::TensorType& type = gguf::tensor_type(o.type);
  if (o.in.ends_with(".safetensors")) {
    require(o.name.empty(), "--name applies to a .npy input; a .safetensors file keeps its tensors' names");
    const auto written = gguf::convert_safetensors(o.in, o.out, type, gguf::tensor_type(o.fallback));
    for (const auto& t : written)
      std::printf("  %-48s %-8s %-20s %s\n", t.name.c_str(), std::string(t.type->name).c_str(), shape_str(t.shape).c_str(),
                  t.note.c_str());
    std::printf("%s -> %s: %zu tensors\n", o.in.c_str(), o.out.c_str(), written.size());
    return;
  }
  Shape shape;
  const std::vector<float> x = load_npy_f32(o.in, &shape);
  const std::string tensor = o.name.empty() ? std::filesystem::path(o.in).stem().string() : o.name;
  const std::size_t bytes = gguf::pack_array(o.out, tensor, type, x, shape);
  std::printf("%s %s -> %s: tensor '%s', %zu bytes of %s (%.3f bits per value)\n", o.in.c_str(), shape_str(shape).c_str(),
              o.out.c_str(), tensor.c_str(), bytes, std::string(type.name).c_str(), bits_per_value(bytes, x.size()));
}

void quantize_cmd(const Options& o) {
  if (o.out.ends_with(".gguf")) return quantize_to_gguf(o);
  require(!o.in.ends_with(".safetensors"), o.in, ": a .safetensors input packs into a GGUF file: name the output *.gguf");
  const Format& f = find_format(o.type);
  require(!o.saturate || f.family == FormatFamily::LowpFloat,
          "--saturate applies to the low-precision float formats, not to ", f.name);
  Shape shape;
  const std::vector<float> x = load_npy_f32(o.in, &shape);
  const EncodedTensor t = encode(f.name, x.data(), shape, {o.saturate ? Overflow::Saturate : Overflow::Default});
  save_encoded(o.out, t);
  std::printf("%s %s -> %s: %zu bytes of %s (%.3f bits per value)\n", o.in.c_str(), shape_str(shape).c_str(),
              o.out.c_str(), t.payload.size(), f.name.c_str(), bits_per_value(t.payload.size(), x.size()));
}

void dequantize_from_gguf(const Options& o) {
  require(o.type.empty(), "--type does not apply to a GGUF file: each tensor has its own type");
  const gguf::File f(o.in);
  if (o.tensor.empty()) {
    std::string names;
    for (std::size_t i = 0; i < f.tensors().size() && i < 8; ++i) names += (i ? ", " : "") + f.tensors()[i].name;
    fail(o.in, " is a GGUF file of ", f.tensors().size(), " tensors: name one with --tensor (",
         f.tensors().size() > 8 ? names + ", ...; `fixq gguf info` lists all" : names, ")");
  }
  const gguf::TensorInfo& t = f.info(o.tensor);
  const std::vector<float> x = f.read_f32(t);
  save_npy_f32(o.out, x.data(), t.shape);
  std::printf("%s: '%s' (%s %s) -> %s\n", o.in.c_str(), t.name.c_str(), std::string(t.type->name).c_str(),
              shape_str(t.shape).c_str(), o.out.c_str());
}

void dequantize_cmd(const Options& o) {
  if (file_kind(o.in) == FileKind::Gguf) return dequantize_from_gguf(o);
  require(o.tensor.empty(), "--tensor applies to GGUF files; ", o.in, " is a .bin of one tensor");
  const EncodedTensor t = load_encoded(o.in);
  if (!o.type.empty() && find_format(o.type).name != t.format)
    fail(o.in, " holds ", t.format, ", not ", o.type, " (omit --type to use the file's)");
  const std::vector<float> x = decode(t);
  save_npy_f32(o.out, x.data(), t.shape);
  std::printf("%s (%s %s) -> %s\n", o.in.c_str(), t.format.c_str(), shape_str(t.shape).c_str(), o.out.c_str());
}

void list_cmd() {
  for (const Format& f : all_formats()) {
    std::string also;
    for (const std::string& a : f.aliases) also += (also.empty() ? " (also " : ", ") + a;
    std::printf("%-14s %s%s\n", f.name.c_str(), f.description.c_str(), also.empty() ? "" : (also + ")").c_str());
  }
}

}  // namespace

void register_formats(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("formats", "Encode float32 .npy tensors in GGUF / low-precision / integer formats and back");
  cmd->require_subcommand(1);
  cmd->footer(
      "Example (from the repository root: a real weight to GGUF q4_0 and back):\n"
      "  build/bin/fixq formats quantize --type q4_0 data/charlm/gru.weight_hh_l0.npy -o w.bin\n"
      "  build/bin/fixq formats dequantize w.bin -o w_q4_0.npy");

  auto q = std::make_shared<Options>();
  CLI::App* qc = cmd->add_subcommand("quantize", "float32 .npy -> encoded .bin (or a .gguf file)");
  qc->add_option("--type", q->type, "format name (see `fixq formats list`; a .gguf output also takes f32, f16, bf16)")
      ->required();
  qc->add_option("input", q->in, "float32 .npy, or a .safetensors to pack whole into a .gguf")
      ->required()
      ->check(CLI::ExistingFile);
  qc->add_option("-o,--output", q->out, "output .bin, or .gguf (a GGUF v3 file)")->required();
  qc->add_flag("--saturate", q->saturate, "low-precision floats: saturate to the largest finite value");
  qc->add_option("--name", q->name, ".npy into .gguf: the tensor's name (default: the input's file stem)");
  qc->add_option("--fallback", q->fallback,
                 ".safetensors into .gguf: the type of float tensors --type cannot hold (vectors, rows that are not whole "
                 "blocks): f32, f16 or bf16")
      ->capture_default_str();
  qc->footer("Example (from the repository root; gru.safetensors as made in `fixq gru quantize --help`):\n"
             "  build/bin/fixq formats quantize --type q4_0 data/charlm/gru.weight_hh_l0.npy -o w.bin\n"
             "  build/bin/fixq formats quantize --type q8_0 data/charlm/gru.weight_hh_l0.npy -o w.gguf\n"
             "  build/bin/fixq formats quantize --type q8_0 gru.safetensors -o gru.gguf\n"
             "  build/bin/fixq formats quantize --type e4m3fn --saturate data/charlm/gru.weight_ih_l0.npy -o w_e4m3.bin\n"
             "  build/bin/fixq formats quantize --type int4_g32 data/charlm/gru.weight_ih_l0.npy -o w_int4.bin");
  qc->callback([q] { quantize_cmd(*q); });

  auto d = std::make_shared<Options>();
  CLI::App* dc = cmd->add_subcommand("dequantize", "encoded .bin (or a GGUF file's tensor) -> float32 .npy");
  dc->add_option("--type", d->type, "expected format of a .bin (default: the file's)");
  dc->add_option("input", d->in, ".bin written by `fixq formats quantize` (or fixq.formats.save_encoded), or a GGUF file")
      ->required()
      ->check(CLI::ExistingFile);
  dc->add_option("--tensor", d->tensor, "GGUF: the tensor to write (`fixq gguf info` lists them)");
  dc->add_option("-o,--output", d->out, "output float32 .npy")->required();
  dc->footer("A GGUF tensor comes out with ggml's dequantized bits, its shape in C order (ggml's ne reversed).\n"
             "Example (w.bin and w.gguf as made in `fixq formats quantize --help`):\n"
             "  build/bin/fixq formats dequantize w.bin -o w_q4_0.npy\n"
             "  build/bin/fixq formats dequantize w.gguf --tensor gru.weight_hh_l0 -o w_q8_0.npy");
  dc->callback([d] { dequantize_cmd(*d); });

  CLI::App* lc = cmd->add_subcommand("list", "List the formats");
  lc->footer("Example:\n  build/bin/fixq formats list");
  lc->callback([] { list_cmd(); });
}

}  // namespace fixq::cli
