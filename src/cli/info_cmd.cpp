// fixq info: what this build and this CPU can do.
#include <cstdio>

#include "cli/commands.h"
#include "fixq/cpu.h"

namespace fixq::cli {

void register_info(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("info", "Show the CPU's instruction sets and the kernels fixq uses");
  cmd->footer("Example:\n  build/bin/fixq info\n  FIXQ_ISA=scalar build/bin/fixq info   # force the scalar reference");
  cmd->callback([] {
    for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512})
      std::printf("%-8s %s\n", to_string(isa).c_str(), cpu_supports(isa) ? "supported" : "not supported");
    std::printf("active   %s\n", to_string(active_isa()).c_str());
  });
}

}  // namespace fixq::cli
