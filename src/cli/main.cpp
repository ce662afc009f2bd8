// build/bin/fixq: the command-line tool. Errors are one line on stderr and exit code 1.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "fixq/error.h"

int main(int argc, char** argv) {
  CLI::App app{"fixq: integer-only quantized inference (fixed-point GRU, integer GEMM, formats)"};
  app.require_subcommand(1);
  fixq::cli::register_info(app);
  fixq::cli::register_quant_error(app);
  fixq::cli::register_demo(app);
  fixq::cli::register_formats(app);
  fixq::cli::register_quantize_stats(app);
  fixq::cli::register_bench(app);
  fixq::cli::register_gru(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const fixq::Error& e) {
    std::fprintf(stderr, "fixq: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fixq: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
