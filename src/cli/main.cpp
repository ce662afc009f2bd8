// build/bin/fixq: the command-line tool. Every failure is one line on stderr,
//   fixq: error: <what is wrong>; <what to do>
// and a non-zero exit code: CLI11's own for a bad command line, 1 for bad input
// (fixq::Error), 2 for anything else (a bug or out of memory).
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "fixq/error.h"
#include "fixq/version.h"

namespace {

// The innermost command the command line selected (`gru eval` in `fixq gru eval ...`).
const CLI::App& innermost(const CLI::App& app) {
  const CLI::App* a = &app;
  while (!a->get_subcommands().empty()) a = a->get_subcommands().front();
  return *a;
}

// "fixq gru eval": the command whose callback or options failed, for the help hint.
std::string command_path(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* a = &app; !a->get_subcommands().empty();) {
    a = a->get_subcommands().front();
    path += " " + a->get_name();
  }
  return path;
}

// CLI11 says "A subcommand is required" both for no command and for a misspelt one;
// name the command that was not understood, or list the choices.
std::string missing_command(const CLI::App& app) {
  const CLI::App& cmd = innermost(app);
  const std::vector<std::string> rest = cmd.remaining();
  if (!rest.empty()) return "unknown command '" + rest.front() + "'";
  std::string names;
  for (const CLI::App* sub : cmd.get_subcommands({})) names += (names.empty() ? "" : ", ") + sub->get_name();
  return "'" + command_path(app) + "' needs a command: one of " + names;
}

// One line, whatever the message holds.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

int report(const std::string& what, const std::string& todo, int code) {
  std::fprintf(stderr, "fixq: error: %s; %s\n", one_line(what).c_str(), todo.c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fixq: integer-only quantized inference (fixed-point GRU, integer GEMM, formats)", "fixq"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "fixq " + std::string(fixq::version()), "Print fixq's version and exit");
  app.footer("Run 'fixq <command> --help' for a command's options and a worked example.\n"
             "Example:\n  build/bin/fixq info\n  build/bin/fixq gru --help");
  fixq::cli::register_info(app);
  fixq::cli::register_quant_error(app);
  fixq::cli::register_demo(app);
  fixq::cli::register_formats(app);
  fixq::cli::register_quantize_stats(app);
  fixq::cli::register_bench(app);
  fixq::cli::register_gguf(app);
  fixq::cli::register_gru(app);
  fixq::cli::register_model(app);
  const auto help_hint = [&app] { return "run '" + command_path(app) + " --help' for usage"; };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help: CLI11 prints it
    const bool no_command = e.get_name() == "RequiredError" && std::string(e.what()).find("subcommand") != std::string::npos;
    return report(no_command ? missing_command(app) : e.what(), help_hint(), e.get_exit_code());
  } catch (const fixq::Error& e) {
    return report(e.what(), "see '" + command_path(app) + " --help'", 1);
  } catch (const std::bad_alloc&) {
    return report("out of memory", "try smaller inputs (fewer or shorter sequences per file)", 2);
  } catch (const std::exception& e) {
    return report(std::string("internal error: ") + e.what(), "please report it with the command line that caused it", 2);
  }
  return 0;
}
