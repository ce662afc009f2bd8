// fixq gru tables | export-c: a quantized GRU's activation tables as files, and the whole
// model as standalone C (fixq/export.h does the work).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "fixq/error.h"
#include "fixq/export.h"
#include "fixq/qgru.h"

namespace fixq::cli {

namespace {

struct ExportOptions {
  std::string model, out, name = "gru";
};

void tables_cmd(const ExportOptions& o) {
  const QuantizedGru q = QuantizedGru::load(o.model);
  const std::vector<std::string> files = write_gru_tables(q, o.out);
  std::printf("%s: %zu tables -> %s (.npy per table, tables.h)\n", o.model.c_str(), files.size() - 1, o.out.c_str());
}

void export_c_cmd(const ExportOptions& o) {
  validate_c_name(o.name);  // before loading: a typo costs nothing
  const QuantizedGru q = QuantizedGru::load(o.model);
  CExportOptions opt;
  opt.name = o.name;
  opt.source = std::filesystem::path(o.model).filename().string();
  write_gru_c(q, o.out, opt);
  std::printf("%s -> %s/%s.h, %s/%s.c\n", o.model.c_str(), o.out.c_str(), o.name.c_str(), o.out.c_str(), o.name.c_str());
}

}  // namespace

void register_gru_export(CLI::App& gru) {
  auto t = std::make_shared<ExportOptions>();
  CLI::App* tc = gru.add_subcommand("tables", "Write a quantized GRU's activation tables as .npy files and C arrays");
  tc->add_option("--model", t->model, "quantized .fixq")->required()->check(CLI::ExistingFile);
  tc->add_option("-o,--output", t->out, "directory for cell{c}.{sig_z,sig_r,tanh_g}.npy and tables.h (created when missing)")->required();
  tc->footer("The entries are the ones the .fixq file stores and every fixq run uses (docs/spec.md 4.4).\n"
             "Example (gru.fixq as made in `fixq gru quantize --help`):\n"
             "  build/bin/fixq gru tables --model gru.fixq -o tables");
  tc->callback([t] { tables_cmd(*t); });

  auto e = std::make_shared<ExportOptions>();
  CLI::App* ec = gru.add_subcommand("export-c", "Write a quantized GRU as standalone C99 (NAME.h, NAME.c) for microcontrollers");
  ec->add_option("--model", e->model, "quantized .fixq")->required()->check(CLI::ExistingFile);
  ec->add_option("-o,--output", e->out, "directory for NAME.h and NAME.c (created when missing)")->required();
  ec->add_option("--name", e->name, "C prefix of every symbol and the file names (a C identifier)")->capture_default_str();
  ec->footer("Integer-only C99: no heap, no libm, only <stdint.h>, <stddef.h>, <string.h>; bit-exact with\n"
             "`fixq gru run`. API in NAME.h: NAME_state, NAME_reset, NAME_step (NAME_sequence for a bidirectional\n"
             "model), NAME_quantize_x, NAME_dequantize_h (define NAME_NO_FLOAT to drop these two).\n"
             "Example (gru.fixq as made in `fixq gru quantize --help`):\n"
             "  build/bin/fixq gru export-c --model gru.fixq -o mcu --name kws\n"
             "  gcc -std=c99 -O2 -c mcu/kws.c -o kws.o");
  ec->callback([e] { export_c_cmd(*e); });
}

}  // namespace fixq::cli
