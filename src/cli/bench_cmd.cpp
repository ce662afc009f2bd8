// fixq bench: fixq against its peers, in one process and one run (bench/compare/).
#include <memory>

#include "cli/commands.h"
#include "cli/gpu.h"
#include "compare/compare.h"

namespace fixq::cli {

void register_bench(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("bench", "Measure fixq against its peers (single thread unless told, same process)");
  cmd->require_subcommand(1);
  // A build without oneDNN says so under every bench command's help.
  const std::string note = bench::have_onednn() ? "" : "\nNote: " + bench::onednn_missing_note() + ".";
  // Its own footer (a subcommand without one shows the top level's): an example, and the note.
  cmd->footer("Example:\n  build/bin/fixq bench gemm > gemm.csv\n  build/bin/fixq bench gru > gru.csv" + note);
  auto o = std::make_shared<bench::GemmBenchOptions>();
  CLI::App* g = cmd->add_subcommand("gemm", "u8 x s8 -> s32 GEMM against oneDNN; CSV M,N,K,fixq_gops,onednn_gops,ratio");
  g->add_flag("--quick", o->quick, "skip the largest shapes");
  auto gemm_device = std::make_shared<std::string>("cpu");
  g->add_option("--device", *gemm_device, "cpu, or cuda: GPU 0's tensor-core GEMM and epilogues (CSV "
                                          "M,N,K,impl,epilogue,us,tops,fraction_of_mma_peak)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  g->footer("Example:\n  build/bin/fixq bench gemm > gemm.csv\nWith an NVIDIA GPU: --device cuda (scripts/gpu_check.sh runs it "
            "beside its peers)." + note);
  g->callback([o, gemm_device] {
    if (*gemm_device == "cuda") bench_gemm_cuda(o->quick);
    else bench::bench_gemm(*o);
  });

  CLI::App* bf = cmd->add_subcommand(
      "bf16", "bf16 x bf16 -> f32 GEMM against oneDNN's bf16 matmul; CSV M,N,K,fixq_gflops,onednn_gflops,ratio, "
              "then vdpbf16ps_peak_gflops");
  auto bo = std::make_shared<bench::Bf16BenchOptions>();
  bf->add_flag("--quick", bo->quick, "skip the largest shapes");
  bf->footer("Example:\n  FIXQ_BENCH_CLOCK=thread build/bin/fixq bench bf16 > bf16.csv" + note);
  bf->callback([bo] { bench::bench_bf16(*bo); });
  CLI::App* gg = cmd->add_subcommand(
      "gguf", "GGUF dot (GEMV of 128x4096 weights against one q8 row) and dequantize (128x4096 to f32) of every "
              "type; CSV op,type,kernel,gb_per_s (packed weight bytes)");
  auto ggo = std::make_shared<bench::GgufBenchOptions>();
  gg->add_flag("--quick", ggo->quick, "short samples (smoke tests)");
  gg->footer("Example:\n  FIXQ_BENCH_CLOCK=thread build/bin/fixq bench gguf > gguf.csv\n  FIXQ_ISA=avx2 build/bin/fixq bench gguf");
  gg->callback([ggo] { bench::bench_gguf(*ggo); });

  auto go = std::make_shared<bench::GruBenchOptions>();
  CLI::App* r = cmd->add_subcommand(
      "gru", "GRU forward (1 layer, H = C) of fixq int8 / int16 / float against oneDNN lbr_gru f32 and gru u8s8, "
             "and one frame per call (fixq_int8_stream, fixq_int8_forward_T1, fixq_float_stream, onednn_gru_u8s8_stream, "
             "onednn_lbr_gru_f32_stream); "
             "CSV H,batch,impl,us_per_step,ratio_vs_onednn_int8 (ratio > 1: faster than oneDNN int8)");
  r->add_flag("--quick", go->quick, "small shapes (H 64,128; batch 1,4; T 20) and short samples, for smoke tests");
  r->add_option("--hidden", go->hidden, "hidden (= input) sizes, comma-separated [default 256,512,1024]");
  r->add_option("--batch", go->batch,
                "batch sizes, comma-separated; batch 1 adds the rows of one frame per call and the step's bound "
                "[default 1,16,64]");
  r->add_option("--steps", go->steps, "time steps T per forward [default 100]");
  r->add_option("--threads", go->threads,
                "threads of fixq (batch slices from batch 16) and of oneDNN (OpenMP); with N > 1, a ratio_vs_1_thread "
                "line per shape of batch >= 16 and H >= 512 [default 1]");
  auto gru_device = std::make_shared<std::string>("cpu");
  r->add_option("--device", *gru_device, "cpu, or cuda: the integer GRU on GPU 0 (CSV H,batch,impl,us_per_step; "
                                         "batch default 1,16,64)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  r->footer(
      "Example:\n  build/bin/fixq bench gru > gru.csv\n  build/bin/fixq bench gru --hidden 512 --batch 1 --steps 50\n"
      "  build/bin/fixq bench gru --threads 2 --hidden 512 --batch 16 --steps 20\n"
      "  /usr/bin/python3 tools/bench_torch_gru.py --against gru.csv > gru_torch.csv" +
      note);
  auto mo = std::make_shared<bench::ModelBenchOptions>();
  CLI::App* m = cmd->add_subcommand(
      "model", "A whole model (ONNX) in fixq float / int16 / int8 (pow2 scales), one frame per call (the streaming "
               "step) and T frames per call, against torch float, torch dynamic int8 and onnxruntime float where "
               "found; CSV batch,frames_per_call,impl,us_per_frame");
  m->add_option("--model", mo->model, "the ONNX file")->required();
  m->add_option("--batch", mo->batch, "batch sizes, comma-separated [default 1,16]");
  m->add_option("--frames", mo->frames, "frames per call, comma-separated; 1 = the streaming step [default 1,100]");
  m->add_option("--samples", mo->samples, "samples per row, the median reported [default 5]");
  m->add_flag("--quick", mo->quick, "short samples (smoke tests)");
  m->add_flag("--no-peers", mo->no_peers, "time fixq alone");
  m->footer("Example:\n  /usr/bin/python3 tools/example_model_onnx.py --out m.onnx\n"
            "  build/bin/fixq bench model --model m.onnx > model.csv\n"
            "onnxruntime: scripts/install_ort_peer.sh; torch: Debian's python3-torch.");
  m->callback([mo] { bench::bench_model(*mo); });

  r->callback([go, gru_device] {
    if (*gru_device == "cuda") bench_gru_cuda(go->quick, go->hidden, go->batch, go->steps);
    else bench::bench_gru(*go);
  });
}

}  // namespace fixq::cli
