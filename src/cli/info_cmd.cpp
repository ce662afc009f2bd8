// fixq info: what this build and this CPU can do.
#include <cstdio>

#include "cli/commands.h"
#include "cli/gpu.h"
#include "fixq/cpu.h"
#include "fixq/kernels.h"

namespace fixq::cli {

void register_info(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("info", "Show the CPU's instruction sets, the GPUs, and the kernels fixq uses");
  cmd->footer("Example:\n  build/bin/fixq info\n  FIXQ_ISA=scalar build/bin/fixq info   # force the scalar reference");
  cmd->callback([] {
    for (Isa isa : kAllIsas)
      std::printf("%-12s %s\n", to_string(isa).c_str(), cpu_supports(isa) ? "supported" : "not supported");
    const std::optional<Isa> forced = forced_isa();
    std::printf("%-12s %s\n", "forced", forced ? to_string(*forced).c_str() : "no (FIXQ_ISA unset)");
    std::printf("\nkernels in use:\n");
    for (const KernelChoice& k : active_kernels()) std::printf("  %-28s %s\n", k.operation.c_str(), k.kernel.c_str());
    std::printf("\n");
    print_cuda_info();
  });
}

}  // namespace fixq::cli
