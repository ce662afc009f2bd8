// fixq demo: the main job until the integer GRU lands. It quantizes the real tensors of
// the embedded model (a character-level GRU language model trained on Debian's license
// texts, data/charlm) and reports what each scheme and calibration method costs.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/fake_quant.h"
#include "fixq/calib.h"
#include "fixq/cpu.h"
#include "fixq/error.h"
#include "fixq/npy.h"

namespace fixq::cli {

namespace {

struct Tensor {
  std::string name;
  Shape shape;
  std::vector<float> data;
};

Tensor load(const std::string& dir, const std::string& name) {
  Tensor t{name, {}, {}};
  t.data = load_npy_f32(dir + "/" + name + ".npy", &t.shape);
  return t;
}

// Weights: SQNR of every bit width under five schemes, side by side.
void weights_table(const Tensor& w) {
  struct Column {
    const char* title;
    Granularity g;
    ScaleKind kind;
    int64_t group;
  };
  const Column cols[] = {{"tensor/float", Granularity::PerTensor, ScaleKind::Float, 0},
                         {"tensor/pow2", Granularity::PerTensor, ScaleKind::PowerOfTwo, 0},
                         {"channel/float", Granularity::PerChannel, ScaleKind::Float, 0},
                         {"channel/pow2", Granularity::PerChannel, ScaleKind::PowerOfTwo, 0},
                         {"group32/float", Granularity::PerGroup, ScaleKind::Float, 32}};
  std::printf("\n  %s %s, symmetric signed, SQNR in dB (higher is better)\n", w.name.c_str(), shape_str(w.shape).c_str());
  std::printf("  %4s", "bits");
  for (const Column& c : cols) std::printf(" %14s", c.title);
  std::printf("\n");
  for (int bits : {2, 3, 4, 5, 6, 8, 12, 16}) {
    std::printf("  %4d", bits);
    for (const Column& c : cols) {
      // Channels are output rows (axis 0); groups run along the input dimension (axis 1).
      const QuantScheme s = make_scheme(bits, true, Symmetry::Symmetric, c.kind, c.g,
                                        c.g == Granularity::PerGroup ? 1 : 0, c.group);
      const ErrorStats e = quantization_error(w.data, w.shape, params_from_tensor(w.data.data(), w.shape, s));
      std::printf(" %14s", fmt_db(e.sqnr_db()).c_str());
    }
    std::printf("\n");
  }
}

// Activations: calibrate on the first half of a sequence, one observe() per time step as
// a streaming calibrator would, and measure on the held-out second half.
void activations_table(const Tensor& h, int bits) {
  const int64_t steps = h.shape[0], width = h.shape[1];
  const int64_t calib_steps = steps / 2;
  const Shape step_shape{1, width};
  const Shape eval_shape{steps - calib_steps, width};
  const std::vector<float> eval(h.data.begin() + calib_steps * width, h.data.end());
  std::printf("\n  %s %s: calibrated on steps 0-%lld, measured on steps %lld-%lld; int%d asymmetric per-tensor\n",
              h.name.c_str(), shape_str(h.shape).c_str(), static_cast<long long>(calib_steps - 1),
              static_cast<long long>(calib_steps), static_cast<long long>(steps - 1), bits);
  std::printf("  %-11s %-6s %22s %9s %11s %9s\n", "method", "scale", "range", "SQNR dB", "maxerr", "clipped");
  for (CalibMethod m : {CalibMethod::MinMax, CalibMethod::Ema, CalibMethod::Percentile, CalibMethod::Mse}) {
    for (ScaleKind kind : {ScaleKind::Float, ScaleKind::PowerOfTwo}) {
      const QuantScheme s = make_scheme(bits, true, Symmetry::Asymmetric, kind, Granularity::PerTensor);
      ObserverConfig cfg;
      cfg.method = m;
      Observer obs(cfg);
      for (int64_t t = 0; t < calib_steps; ++t) obs.observe(h.data.data() + t * width, step_shape);
      const std::vector<Range> r = obs.ranges(s);
      const QuantParams p = params_from_ranges(s, eval_shape, r);
      const float lo = dequantize_value(s.format.qmin(), p.scale[0], p.zero_point[0]);
      const float hi = dequantize_value(s.format.qmax(), p.scale[0], p.zero_point[0]);
      int64_t clipped = 0;
      for (float v : eval) clipped += (v < lo || v > hi);
      const ErrorStats e = quantization_error(eval, eval_shape, p);
      char range[64];
      std::snprintf(range, sizeof range, "[%.4f, %.4f]", lo, hi);
      std::printf("  %-11s %-6s %22s %9s %11.6f %8.3f%%\n", to_string(m).c_str(), to_string(kind).c_str(), range,
                  fmt_db(e.sqnr_db()).c_str(), e.maxerr(), 100.0 * clipped / static_cast<double>(eval.size()));
    }
  }
}

void run(const std::string& dir) {
  std::printf("fixq demo: quantizing the real tensors of the embedded model\n");
  std::printf("  model: character-level GRU language model trained on Debian's license texts (%s)\n", dir.c_str());
  std::printf("  kernels: %s\n", to_string(active_isa()).c_str());

  std::printf("\n1. Weights: dequantize(quantize(W)) against W\n");
  const Tensor w_hh = load(dir, "gru.weight_hh_l0");
  const Tensor w_ih = load(dir, "gru.weight_ih_l0");
  weights_table(w_hh);
  weights_table(w_ih);

  std::printf("\n   The same in llama.cpp quantize-stats form, %s per-channel symmetric:\n", w_hh.name.c_str());
  for (int bits : {4, 8}) {
    const QuantScheme s = make_scheme(bits, true, Symmetry::Symmetric, ScaleKind::Float, Granularity::PerChannel);
    const ErrorStats e = quantization_error(w_hh.data, w_hh.shape, params_from_tensor(w_hh.data.data(), w_hh.shape, s));
    std::printf("  %s\n      %s\n", e.llama_line(s.format.name()).c_str(), e.summary().c_str());
  }

  std::printf("\n2. Activations: calibration methods on the GRU's hidden states over held-out text\n");
  const Tensor h = load(dir, "gru.hidden_states");
  require(h.shape.size() == 2 && h.shape[0] >= 4, h.name, " must be [steps, hidden], got ", shape_str(h.shape));
  activations_table(h, 8);
}

}  // namespace

void register_demo(CLI::App& app) {
  auto dir = std::make_shared<std::string>(std::string(FIXQ_SOURCE_DIR) + "/data/charlm");
  CLI::App* cmd = app.add_subcommand("demo", "Quantize the embedded model's real weights and activations and report the error");
  cmd->add_option("--data", *dir, "folder with the model's .npy tensors")->capture_default_str();
  cmd->footer("Example:\n  build/bin/fixq demo\n  (regenerate the model: /usr/bin/python3 tools/train_charlm.py --out data/charlm)");
  cmd->callback([dir] { run(*dir); });
}

}  // namespace fixq::cli
