// fixq bench: fixq against its peers, in one process and one run (bench/compare/).
#include <memory>

#include "cli/commands.h"
#include "compare/compare.h"

namespace fixq::cli {

void register_bench(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("bench", "Measure fixq against its peers (single thread, same process)");
  cmd->require_subcommand(1);
  // A build without oneDNN says so under every bench command's help.
  const std::string note = bench::have_onednn() ? "" : "\nNote: " + bench::onednn_missing_note() + ".";
  if (!note.empty()) cmd->footer(note.substr(1));
  auto o = std::make_shared<bench::GemmBenchOptions>();
  CLI::App* g = cmd->add_subcommand("gemm", "u8 x s8 -> s32 GEMM against oneDNN; CSV M,N,K,fixq_gops,onednn_gops,ratio");
  g->add_flag("--quick", o->quick, "skip the largest shapes");
  g->footer("Example:\n  build/bin/fixq bench gemm > gemm.csv" + note);
  g->callback([o] { bench::bench_gemm(*o); });

  auto go = std::make_shared<bench::GruBenchOptions>();
  CLI::App* r = cmd->add_subcommand(
      "gru", "GRU forward (1 layer, H = C) of fixq int8 / int16 / float against oneDNN lbr_gru f32 and gru u8s8; "
             "CSV H,batch,impl,us_per_step,ratio_vs_onednn_int8 (ratio > 1: faster than oneDNN int8)");
  r->add_flag("--quick", go->quick, "small shapes (H 64,128; batch 1,4; T 20) and short samples, for smoke tests");
  r->add_option("--hidden", go->hidden, "hidden (= input) sizes, comma-separated [default 256,512,1024]");
  r->add_option("--batch", go->batch, "batch sizes, comma-separated [default 1,16]");
  r->add_option("--steps", go->steps, "time steps T per forward [default 100]");
  r->footer(
      "Example:\n  build/bin/fixq bench gru > gru.csv\n  build/bin/fixq bench gru --hidden 512 --batch 1 --steps 50\n"
      "  /usr/bin/python3 tools/bench_torch_gru.py --against gru.csv > gru_torch.csv" +
      note);
  r->callback([go] { bench::bench_gru(*go); });
}

}  // namespace fixq::cli
