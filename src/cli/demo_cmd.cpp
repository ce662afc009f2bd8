// fixq demo: the main job. Quantizes the embedded real model (a character-level GRU
// language model trained on Debian's license texts, data/charlm, installed with fixq:
// cli/demo_data.h) to integer-only GRUs, scores float and fixed point on held-out text in
// bits per character, times them, lets the int8 model write, and shows what each weight
// scheme costs.
#include <nlohmann/json.hpp>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cli/charlm.h"
#include "cli/commands.h"
#include "cli/demo_data.h"
#include "cli/demo_speech.h"
#include "compare/timing.h"
#include "fixq/cpu.h"
#include "fixq/kernels.h"
#include "fixq/error.h"
#include "fixq/gemm.h"
#include "fixq/gru_ptq.h"
#include "fixq/metrics.h"
#include "fixq/qgru.h"
#include "fixq/report.h"

namespace fixq::cli {

namespace {

// Calibration data: the calibration text cut into `kCalibBatch` parallel sequences [T, B, E].
constexpr int64_t kCalibBatch = 8;

std::vector<float> calibration_batch(const CharLm& lm, const std::vector<uint8_t>& ids) {
  const int64_t T = static_cast<int64_t>(ids.size()) / kCalibBatch;
  const std::vector<float> e = lm.embed_ids(ids);  // the text's first kCalibBatch * T ids: [B, T, E]
  return time_major_items(e.data(), Shape{kCalibBatch, T, lm.embed}, true, 0, kCalibBatch);
}

Shape calibration_shape(const CharLm& lm, const std::vector<uint8_t>& ids) {
  return {static_cast<int64_t>(ids.size()) / kCalibBatch, kCalibBatch, lm.embed};
}

GruQuantParams calibrate(const CharLm& lm, const std::vector<uint8_t>& ids, const GruQuantConfig& cfg, CalibMethod m) {
  ObserverConfig oc;
  oc.method = m;
  GruCalibrator cal(lm.gru, cfg, oc);
  cal.observe(calibration_batch(lm, ids).data(), calibration_shape(lm, ids));
  return cal.finalize();
}

struct Row {
  std::string name, scales, method;
  double bpc, cosine, us_per_step;
};

void print_row(const Row& r, double float_bpc) {
  std::printf("  %-12s %-11s %-11s %8.4f %+9.2f%% %10.6f %9.2f\n", r.name.c_str(), r.scales.c_str(), r.method.c_str(), r.bpc,
              100.0 * (r.bpc - float_bpc) / float_bpc, r.cosine, r.us_per_step);
}

// What a PyTorch user would otherwise pick: torch's own float GRU and its dynamic int8
// quantization, scored by the Python package's baseline (python/fixq/baselines/charlm.py)
// with the same protocol (it checks that its float bpc matches ours). Left out with a note
// where Python, the fixq package or torch is not there.
void torch_rows(const std::string& dir, double float_bpc) {
  print_torch_rows("charlm", dir, 21, [&](const nlohmann::json& r, const std::string& engine) {
    std::string name = r.at("name").get<std::string>();
    if (name == "torch dynamic int8") name = "torch int8";  // dynamic: weights int8, activations float
    print_row({name, engine == "-" ? "-" : "dynamic", engine, r.at("bpc").get<double>(), r.at("cosine").get<double>(),
               r.at("us_per_step").get<double>()},
              float_bpc);
  });
}

void weights_table(const std::string& name, const std::vector<float>& w, const Shape& shape) {
  struct Column {
    const char* granularity;
    Granularity g;
    ScaleKind kind;
    int64_t group;
  };
  const Column cols[] = {{"tensor", Granularity::PerTensor, ScaleKind::Multiplier, 0},
                         {"tensor", Granularity::PerTensor, ScaleKind::PowerOfTwo, 0},
                         {"channel", Granularity::PerChannel, ScaleKind::Multiplier, 0},
                         {"channel", Granularity::PerChannel, ScaleKind::PowerOfTwo, 0},
                         {"group32", Granularity::PerGroup, ScaleKind::Multiplier, 32}};
  std::printf("\n  %s %s, symmetric signed, SQNR in dB (higher is better)\n  %4s", name.c_str(), shape_str(shape).c_str(), "bits");
  for (const Column& c : cols) std::printf(" %18s", (c.granularity + ("/" + to_string(c.kind))).c_str());
  std::printf("\n");
  for (int bits : {2, 4, 8, 16}) {
    std::printf("  %4d", bits);
    for (const Column& c : cols) {
      const QuantScheme s =
          QuantScheme::make(bits, true, Symmetry::Symmetric, c.kind, c.g, c.g == Granularity::PerGroup ? 1 : 0, c.group);
      std::printf(" %18s", fmt_db(quantization_error(w, shape, params_from_tensor(w.data(), shape, s)).sqnr_db()).c_str());
    }
    std::printf("\n");
  }
}

void run(const std::string& data) {
  const std::string dir = demo_data_dir("charlm", data);
  set_gemm_threads(1);  // the table compares single-thread speeds
  const CharLm lm = CharLm::load(dir);
  const std::vector<uint8_t> calib = load_ids(dir + "/calib_ids.npy");
  const std::vector<uint8_t> held = load_ids(dir + "/heldout_ids.npy");
  const int64_t T = static_cast<int64_t>(held.size()), H = lm.gru.hidden_size;
  std::printf("fixq demo: an integer-only GRU on a real trained model\n");
  std::printf("  model: character-level language model, embedding %lld -> GRU %lld -> decoder %lld,\n"
              "         trained on Debian's license texts (%s)\n",
              static_cast<long long>(lm.embed), static_cast<long long>(H), static_cast<long long>(lm.vocab), dir.c_str());
  std::printf("  task:  next-character prediction on %lld held-out characters, bits per character (lower is better);\n"
              "         calibration on %zu other characters; cosine of the GRU output against float32\n",
              static_cast<long long>(T), calib.size());
  // The recurrent product has one row per step; the input projection all of the sequence's
  // rows, which may take another kernel (AMX from 8 rows).
  const std::string gemm = active_kernel("gemm s8 x s8"), many = active_kernel("gemm s8 x s8, 8+ rows");
  std::printf("  kernels: gru step %s;\n           gemm s8 x s8 %s%s%s;\n"
              "           1 thread; us/step = one GRU step over the held-out sequence (batch 1, median of 3)\n\n",
              active_kernel("gru step").c_str(), gemm.c_str(), many == gemm ? "" : " (the recurrent product), ",
              many == gemm ? "" : (many + " (the input projection, 8+ rows)").c_str());

  const std::vector<float> x = lm.embed_ids(held);
  const Shape xs{T, 1, lm.embed};
  // Prepared once, as the integer models are: validated and packed outside the timing.
  const FloatGru float_gru(lm.gru);
  GruOutput f;
  const double float_us = 1e6 * bench::median_seconds_per_call([&] { float_gru.forward(x.data(), xs, f); }, 3) / static_cast<double>(T);
  const double float_bpc = lm.bits_per_char(f.y, held);
  std::printf("  %-12s %-11s %-11s %8s %10s %10s %9s\n", "model", "scales", "calibration", "bpc", "vs float", "cosine", "us/step");
  print_row({"float32", "-", "-", float_bpc, 1.0, float_us}, float_bpc);

  struct Config {
    const char* name;
    bool sixteen;
    ScaleKind kind;
    CalibMethod method;
  };
  const Config configs[] = {{"fixq int16", true, ScaleKind::PowerOfTwo, CalibMethod::MinMax},
                            {"fixq int16", true, ScaleKind::Multiplier, CalibMethod::MinMax},
                            {"fixq int8", false, ScaleKind::PowerOfTwo, CalibMethod::MinMax},
                            {"fixq int8", false, ScaleKind::PowerOfTwo, CalibMethod::Ema},
                            {"fixq int8", false, ScaleKind::PowerOfTwo, CalibMethod::Percentile},
                            {"fixq int8", false, ScaleKind::PowerOfTwo, CalibMethod::Mse},
                            {"fixq int8", false, ScaleKind::Multiplier, CalibMethod::MinMax},
                            {"fixq int8", false, ScaleKind::Multiplier, CalibMethod::Mse}};
  auto score = [&](const char* name, const char* scales, const std::string& method, const QuantizedGru& model) {
    GruOutput q;
    const double us = 1e6 * bench::median_seconds_per_call([&] { q = model.forward(x.data(), xs); }, 3) / static_cast<double>(T);
    print_row({name, scales, method, lm.bits_per_char(q.y, held), cosine(f.y.data(), q.y.data(), f.y.size()), us}, float_bpc);
  };
  for (const Config& c : configs) {
    const GruQuantConfig cfg = c.sixteen ? GruQuantConfig::int16(c.kind) : GruQuantConfig::int8(c.kind);
    score(c.name, to_string(c.kind).c_str(), to_string(c.method),
          QuantizedGru(lm.gru, calibrate(lm, calib, cfg, c.method)));
  }
  // PTQ+: every post-training step of fixq/gru_ptq.h, the default of `fixq gru quantize`:
  // GPTQ weight rounding, bias correction, each operator's range chosen by output error.
  GruPtq ptq(lm.gru);
  ptq.observe(calibration_batch(lm, calib).data(), calibration_shape(lm, calib));
  std::vector<QuantizedGru> ptq_models;
  for (ScaleKind kind : {ScaleKind::PowerOfTwo, ScaleKind::Multiplier}) {
    const GruPtqResult r = ptq.quantize(GruQuantConfig::int8(kind));
    ptq_models.emplace_back(r.model, r.params);
    score("fixq int8", to_string(kind).c_str(), "PTQ+", ptq_models.back());
  }
  const QuantizedGru* sampler = &ptq_models.front();
  // Mixed precision: the fewest 16-bit operators for an output cosine of 0.9999 on the
  // calibration text (pow2 scales, PTQ+).
  GruAutoBitsOptions ab;
  ab.target_cosine = 0.9999;
  const GruAutoBitsResult mixed = ptq.auto_bits(GruQuantConfig::int8(ScaleKind::PowerOfTwo), ab);
  score("fixq mixed", "pow2", "auto-bits", QuantizedGru(mixed.result.model, mixed.result.params));
  torch_rows(dir, float_bpc);
  std::string wide;
  for (const std::string& op : mixed.promoted) wide += (wide.empty() ? "" : ", ") + op;
  std::printf("\n  PTQ+: GPTQ weight rounding, bias correction and every operator's range chosen by the output error\n"
              "        on the calibration text (the default of `fixq gru quantize`).\n"
              "  auto-bits: %s at 16 bits (%zu of %d operators) for cosine %.6f >= %.4f on the calibration text%s;\n"
              "        per-step work %.2fx int8's, weight bytes %lld (int8: %lld).\n"
              "  QAT: tools/qat_charlm.py fine-tunes this GRU through fixq.torch.FakeQuantGRU (minutes, not run here).\n",
              wide.empty() ? "nothing" : wide.c_str(), mixed.promoted.size(), kGruOpCount, mixed.result.calib_cosine,
              ab.target_cosine, mixed.target_met ? "" : " (NOT met)",
              static_cast<double>(mixed.cost.work()) / static_cast<double>(mixed.base_cost.work()),
              static_cast<long long>(mixed.cost.weight_bytes), static_cast<long long>(mixed.base_cost.weight_bytes));

  // The int8 model writes: the prompt, then one character at a time through the
  // streaming API, the state staying integer between characters.
  const std::string prompt = "This License";
  QuantizedGruStream stream(*sampler, 1);
  std::vector<float> h;
  for (char ch : prompt) {
    uint8_t id = static_cast<uint8_t>(lm.vocab - 1);
    for (int64_t v = 0; v < lm.vocab; ++v)
      if (lm.chars[static_cast<size_t>(v)] == std::string(1, ch)) id = static_cast<uint8_t>(v);
    h = stream.step(lm.embed_ids({id}).data());
  }
  std::mt19937 rng(7);
  std::string text = prompt;
  for (int i = 0; i < 240; ++i) {
    const uint8_t next = lm.sample(h.data(), 0.6, rng);
    text += lm.chars[next];
    h = stream.step(lm.embed_ids({next}).data());
  }
  std::printf("\n  The int8 model (pow2 scales, PTQ+) continues \"%s\" (temperature 0.6):\n\n", prompt.c_str());
  std::printf("    %s\n", text.c_str());

  std::printf("\n  Weights: what each scheme costs on the model's recurrent and input weights\n");
  const GruCell& cell = lm.gru.cells[0];
  weights_table("W_hh (z, r, g)", cell.R, Shape{3 * H, H});
  weights_table("W_ih (z, r, g)", cell.W, Shape{3 * H, cell.input_size});
}

}  // namespace

void register_demo(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto speech = std::make_shared<std::string>();
  auto model = std::make_shared<std::string>("both");
  CLI::App* cmd = app.add_subcommand("demo", "Quantize the embedded real GRU models and compare them with float");
  cmd->add_option("--data", *dir, "folder of the language model's files (default: the one installed with fixq, share/fixq/charlm)");
  cmd->add_option("--speech-data", *speech,
                  "folder of the speech-enhancement model's files (default: the installed one, share/fixq/speech)");
  cmd->add_option("--model", *model, "which model's part to run: charlm, speech or both [default both]")
      ->check(CLI::IsMember({"charlm", "speech", "both"}));
  cmd->footer("Example:\n  build/bin/fixq demo\n(regenerate the model: /usr/bin/python3 tools/train_charlm.py --out data/charlm;\n"
              " its text ids: /usr/bin/python3 tools/charlm_text.py --data data/charlm)");
  cmd->callback([dir, speech, model] {
    // The speech model's files are read and checked first, so that a broken folder is an
    // error before any table.
    std::function<void()> speech_part;
    if (*model != "charlm") speech_part = prepare_speech_demo(demo_data_dir("speech", *speech));
    if (*model != "speech") run(*dir);
    if (speech_part) speech_part();
  });
}

}  // namespace fixq::cli
