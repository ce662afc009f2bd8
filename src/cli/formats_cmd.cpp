// fixq formats: convert float32 .npy tensors to packed formats (.bin) and back, and
// tensors into and out of GGUF files.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/format_registry.h"
#include "fixq/error.h"
#include "fixq/npy.h"
#include "fixq/packed_file.h"

namespace fixq::cli {

const std::vector<CliFormat>& all_formats() {
  static const std::vector<CliFormat> formats = [] {
    std::vector<CliFormat> v = gguf_formats();
    for (CliFormat& f : lowp_formats()) v.push_back(std::move(f));
    return v;
  }();
  return formats;
}

namespace {

const CliFormat& find_format(const std::string& name) {
  std::string known;
  for (const CliFormat& f : all_formats()) {
    if (f.name == name) return f;
    known += (known.empty() ? "" : ", ") + f.name;
  }
  fail("unknown format '", name, "'; known formats: ", known);
}

struct Options {
  std::string type;
  std::string in;
  std::string out;
  bool saturate = false;
  std::string name, fallback = "f32", tensor;
};

void quantize_cmd(const Options& o) {
  if (is_gguf_output(o.out)) {
    require(!o.saturate, "--saturate applies to the low-precision float formats, which GGUF files do not hold");
    return quantize_to_gguf(o.type, o.in, o.out, o.name, o.fallback);
  }
  require(!o.in.ends_with(".safetensors"), o.in, ": a .safetensors input packs into a GGUF file: name the output *.gguf");
  const CliFormat& f = find_format(o.type);
  Shape shape;
  const std::vector<float> x = load_npy_f32(o.in, &shape);
  PackedTensor t{f.name, shape, f.quantize(x.data(), shape, FormatOptions{o.saturate})};
  save_packed(o.out, t);
  std::printf("%s %s -> %s: %zu bytes of %s (%.3f bits per value)\n", o.in.c_str(), shape_str(shape).c_str(),
              o.out.c_str(), t.payload.size(), f.name.c_str(),
              x.empty() ? 0.0 : 8.0 * static_cast<double>(t.payload.size()) / static_cast<double>(x.size()));
}

void dequantize_cmd(const Options& o) {
  if (is_gguf_file(o.in)) {
    require(o.type.empty(), "--type does not apply to a GGUF file: each tensor has its own type");
    return dequantize_from_gguf(o.in, o.tensor, o.out);
  }
  require(o.tensor.empty(), "--tensor applies to GGUF files; ", o.in, " is a .bin of one tensor");
  const PackedTensor t = load_packed(o.in);
  if (!o.type.empty() && o.type != t.format)
    fail(o.in, " holds ", t.format, ", not ", o.type, " (omit --type to use the file's)");
  const CliFormat& f = find_format(t.format);
  const std::vector<float> x = f.dequantize(t.payload.data(), t.payload.size(), t.shape);
  save_npy_f32(o.out, x.data(), t.shape);
  std::printf("%s (%s %s) -> %s\n", o.in.c_str(), t.format.c_str(), shape_str(t.shape).c_str(), o.out.c_str());
}

}  // namespace

void register_formats(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("formats", "Pack float32 .npy tensors into GGUF / low-precision formats and back");
  cmd->require_subcommand(1);
  cmd->footer(
      "Example (from the repository root: a real weight to GGUF q4_0 and back):\n"
      "  build/bin/fixq formats quantize --type q4_0 data/charlm/gru.weight_hh_l0.npy -o w.bin\n"
      "  build/bin/fixq formats dequantize w.bin -o w_q4_0.npy");

  auto q = std::make_shared<Options>();
  CLI::App* qc = cmd->add_subcommand("quantize", "float32 .npy -> packed .bin");
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
             "  build/bin/fixq formats quantize --type e4m3fn --saturate data/charlm/gru.weight_ih_l0.npy -o w_e4m3.bin");
  qc->callback([q] { quantize_cmd(*q); });

  auto d = std::make_shared<Options>();
  CLI::App* dc = cmd->add_subcommand("dequantize", "packed .bin -> float32 .npy");
  dc->add_option("--type", d->type, "expected format of a .bin (default: the file's)");
  dc->add_option("input", d->in, ".bin written by `fixq formats quantize`, or a GGUF file")->required()->check(CLI::ExistingFile);
  dc->add_option("--tensor", d->tensor, "GGUF: the tensor to write (`fixq gguf info` lists them)");
  dc->add_option("-o,--output", d->out, "output float32 .npy")->required();
  dc->footer("A GGUF tensor comes out with ggml's dequantized bits, its shape in C order (ggml's ne reversed).\n"
             "Example (w.bin and w.gguf as made in `fixq formats quantize --help`):\n"
             "  build/bin/fixq formats dequantize w.bin -o w_q4_0.npy\n"
             "  build/bin/fixq formats dequantize w.gguf --tensor gru.weight_hh_l0 -o w_q8_0.npy");
  dc->callback([d] { dequantize_cmd(*d); });

  CLI::App* lc = cmd->add_subcommand("list", "List the formats");
  lc->footer("Example:\n  build/bin/fixq formats list");
  lc->callback([] {
    for (const CliFormat& f : all_formats()) std::printf("%-14s %s\n", f.name.c_str(), f.description.c_str());
  });
}

}  // namespace fixq::cli
