// Private to the CLI: each subcommand registers itself on the application.
#pragma once

#include <CLI/CLI.hpp>

namespace fixq::cli {

void register_info(CLI::App& app);
void register_quant_error(CLI::App& app);
void register_demo(CLI::App& app);
void register_formats(CLI::App& app);
void register_quantize_stats(CLI::App& app);
void register_bench(CLI::App& app);
void register_gru(CLI::App& app);
void register_gguf(CLI::App& app);
// `fixq model quantize | run | eval | info`: whole models (model_cmd.cpp).
void register_model(CLI::App& app);
// `fixq gru tables` and `fixq gru export-c`, added to the gru command.
void register_gru_export(CLI::App& gru);

}  // namespace fixq::cli
