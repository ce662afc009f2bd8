// fixq bench: fixq against its peers, in one process and one run.
#include <memory>

#include "cli/bench.h"
#include "cli/commands.h"

namespace fixq::cli {

void register_bench(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("bench", "Measure fixq against its peers (single thread, same process)");
  cmd->require_subcommand(1);
  auto o = std::make_shared<BenchOptions>();
  CLI::App* g = cmd->add_subcommand("gemm", "u8 x s8 -> s32 GEMM against oneDNN; CSV M,N,K,fixq_gops,onednn_gops,ratio");
  g->add_flag("--quick", o->quick, "skip the largest shapes");
  g->footer("Example:\n  build/bin/fixq bench gemm > gemm.csv");
  g->callback([o] { bench_gemm(*o); });
}

}  // namespace fixq::cli
