// fixq formats: convert float32 .npy tensors to packed formats (.bin) and back.
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
};

void quantize_cmd(const Options& o) {
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
  qc->add_option("--type", q->type, "format name (see `fixq formats list`)")->required();
  qc->add_option("input", q->in, "float32 .npy")->required()->check(CLI::ExistingFile);
  qc->add_option("-o,--output", q->out, "output .bin")->required();
  qc->add_flag("--saturate", q->saturate, "low-precision floats: saturate to the largest finite value");
  qc->footer("Example (from the repository root):\n"
             "  build/bin/fixq formats quantize --type q4_0 data/charlm/gru.weight_hh_l0.npy -o w.bin\n"
             "  build/bin/fixq formats quantize --type e4m3fn --saturate data/charlm/gru.weight_ih_l0.npy -o w_e4m3.bin");
  qc->callback([q] { quantize_cmd(*q); });

  auto d = std::make_shared<Options>();
  CLI::App* dc = cmd->add_subcommand("dequantize", "packed .bin -> float32 .npy");
  dc->add_option("--type", d->type, "expected format (default: the file's)");
  dc->add_option("input", d->in, ".bin written by `fixq formats quantize`")->required()->check(CLI::ExistingFile);
  dc->add_option("-o,--output", d->out, "output .npy")->required();
  dc->footer("Example (w.bin as made in `fixq formats quantize --help`):\n  build/bin/fixq formats dequantize w.bin -o w_q4_0.npy");
  dc->callback([d] { dequantize_cmd(*d); });

  CLI::App* lc = cmd->add_subcommand("list", "List the formats");
  lc->footer("Example:\n  build/bin/fixq formats list");
  lc->callback([] {
    for (const CliFormat& f : all_formats()) std::printf("%-14s %s\n", f.name.c_str(), f.description.c_str());
  });
}

}  // namespace fixq::cli
