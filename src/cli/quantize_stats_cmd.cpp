// fixq quantize-stats: llama.cpp's quantize-stats over the float tensors of a .safetensors,
// .gguf or .npy file; the work is the library's (fixq/quantize_stats.h). The report is
// llama.cpp's: per type one "rmse, maxerr, 95pct, median" line over all tensors (preceded,
// with --per-tensor, by a line per tensor named type::tensor), then nmse and SQNR.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/progress.h"
#include "fixq/quantize_stats.h"

namespace fixq::cli {

namespace {

// The weight formats (bf16: fixq/bf16.h, round to nearest even, where the seed's list has
// it); q8_1 and q8_K are the activation side of the dot products.
const char* const kDefaultTypes =
    "q4_0,q4_1,q5_0,q5_1,q8_0,q2_K,q3_K,q4_K,q5_K,q6_K,iq4_nl,iq4_xs,bf16,tq1_0,tq2_0,mxfp4,nvfp4";

struct Options {
  std::string path;
  std::vector<std::string> types;
  bool per_tensor = false;
};

void run(const Options& o) {
  for (const std::string& t : o.types)  // an unknown type before any output
    if (t != "bf16") gguf::traits(t);
  const QuantizeStatsInput file(o.path);
  std::printf("%s: float tensors %zu, values %lld", o.path.c_str(), file.float_tensors(),
              static_cast<long long>(file.float_values()));
  const auto list = [](const char* what, const std::vector<std::string>& names) {
    if (names.empty()) return;
    std::printf("; %s %zu (", what, names.size());
    for (std::size_t i = 0; i < names.size(); ++i) std::printf("%s%s", i ? ", " : "", names[i].c_str());
    std::printf(")");
  };
  list("tensors of other dtypes skipped", file.skipped());
  list("already quantized, not measured", file.quantized());
  std::printf("\n");
  std::fflush(stdout);

  // A bar only for work that takes a while (the scalar K-quant searches run at ~50 MB/s).
  std::optional<Progress> progress;
  QuantizeStatsOptions qo;
  qo.types = o.types;
  qo.per_tensor = o.per_tensor;
  int64_t shown = 0;
  qo.progress = [&](int64_t done, int64_t total) {
    if (!progress && total >= (int64_t{1} << 24)) progress.emplace("quantize-stats", total);
    if (progress) progress->advance(done - shown);
    shown = done;
  };
  const std::vector<QuantizeStatsType> reports = file.run(qo);
  progress.reset();  // ends the bar's line before the report

  for (const QuantizeStatsType& r : reports) {
    const std::string& type = r.name;
    for (const auto& [tensor, stats] : r.tensors) std::printf("%s\n", stats.llama_line(type + "::" + tensor).c_str());
    if (r.total.count() > 0)
      std::printf("%s\n    %s\n", r.total.llama_line(type).c_str(), r.total.summary().c_str());
    else
      std::printf("%-50s: no tensor can be packed\n", type.c_str());
    if (r.skipped_tensors > 0)
      std::printf("    skipped %lld tensors (%lld values): last dimension not a multiple of %lld\n",
                  static_cast<long long>(r.skipped_tensors), static_cast<long long>(r.skipped_values),
                  static_cast<long long>(r.block_elems));
  }
}

}  // namespace

void register_quantize_stats(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "quantize-stats", "llama.cpp's quantize-stats: error of GGUF types (and bf16) over the float tensors of a file");
  cmd->add_option("file", o->path,
                  ".safetensors (F32, F16, BF16, F64 tensors), .gguf (f32, f16, bf16, f64 tensors) or .npy (float32 / "
                  "float64)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--types", o->types, "GGUF types or bf16, comma-separated (default: " + std::string(kDefaultTypes) + ")")
      ->delimiter(',');
  cmd->add_flag("--per-tensor", o->per_tensor, "also print a line per tensor, named type::tensor");
  cmd->footer(
      "Lines are llama.cpp's: rmse, maxerr, 95pct< and median< from its 150-bucket histogram of |error|\n"
      "over [0, 0.03); then n, nmse, mae, cosine and SQNR. Tensors whose last dimension is not a multiple\n"
      "of a type's block are skipped for that type. A progress bar shows on a terminal for large files.\n"
      "Example (from the repository root; gru.safetensors as made in `fixq gru quantize --help`):\n"
      "  build/bin/fixq quantize-stats --types q4_0,q8_0,iq4_nl data/charlm/gru.weight_hh_l0.npy\n"
      "  build/bin/fixq quantize-stats --types q4_0,q4_K,q6_K --per-tensor gru.safetensors\n"
      "  build/bin/fixq formats quantize --type f16 gru.safetensors -o gru_f16.gguf\n"
      "  build/bin/fixq quantize-stats --types q4_0,q8_0 gru_f16.gguf");
  cmd->callback([o] {
    if (o->types.empty()) o->types = CLI::detail::split(kDefaultTypes, ',');
    run(*o);
  });
}

}  // namespace fixq::cli
