// fixq demo, second model: the embedded speech-enhancement GRU (data/speech). Quantizes it
// with `fixq gru quantize`'s defaults, scores float, fixed point and PyTorch's dynamic int8
// on held-out noisy speech in segmental SNR improvement (dB) and mask MSE, and denoises one
// held-out mixture frame by frame through the streaming API. Then the same model whole
// (data/speech/model.onnx: features to gains, GRU, linear head and sigmoid in integers)
// through fixq/model.h's QuantizedModel, scored the same way, and streamed.
#include "cli/demo_speech.h"

#include <nlohmann/json.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/demo_data.h"
#include "cli/speech_model.h"
#include "compare/timing.h"
#include "fixq/gru_ptq.h"
#include "fixq/metrics.h"
#include "fixq/model.h"
#include "fixq/qgru.h"

namespace fixq::cli {

namespace {

struct Row {
  std::string name, scales, ranges;
  SpeechScores s;
  double cosine;
};

void print_row(const Row& r, double float_db) {
  std::printf("  %-12s %-11s %-10s %9.4f %+9.4f %10.6f %10.6f\n", r.name.c_str(), r.scales.c_str(), r.ranges.c_str(),
              r.s.snr_gain_db, r.s.snr_gain_db - float_db, r.s.mask_mse, r.cosine);
}

// torch's float GRU and its dynamic int8 quantization on both engines, from the Python
// package's fixq.baselines.speech with the same task definitions (fixq.baselines._speech_task,
// which this file's scores follow); left out with a one-line note where torch is missing.
void torch_rows(const std::string& dir, double float_db) {
  print_torch_rows("speech", dir, 12, [&](const nlohmann::json& r, const std::string& engine) {
    print_row({engine == "-" ? "torch f32" : "torch int8", engine, engine == "-" ? "-" : "dynamic",
               {r.at("snr_gain_db").get<double>(), 0.0, r.at("mask_mse").get<double>()}, r.at("cosine").get<double>()},
              float_db);
  });
}

// The held-out mixture the streaming part denoises: the first in babble at 5 dB SNR.
int64_t streamed_segment(const SpeechModel& m) {
  for (size_t b = 0; b < m.heldout_labels.size(); ++b)
    if (m.heldout_labels[b].rfind("babble at 5 dB", 0) == 0) return static_cast<int64_t>(b);
  return 0;
}

// The whole model, features -> gains, integer-only: model.onnx through QuantizedModel with
// `fixq model quantize`'s defaults (the GRU its PTQ+, the linear's weights GPTQ with bias
// correction, the features' and the linear's ranges by the gains' error on the calibration
// mixtures), scored as the GRU rows. split_gains: the float
// GRU + head's gains [B, T, bands], which the whole float model must equal within 1e-4.
void whole_model_rows(const SpeechModel& m, const std::vector<float>& split_gains, double float_db) {
  if (!m.whole_missing.empty()) {
    std::printf("\n  (whole-model rows left out: %s)\n", m.whole_missing.c_str());
    return;
  }
  const int64_t T = m.shape[0], F = m.bands;
  const ModelArray x = m.features_btc();
  const std::vector<float> wf = model_forward(m.whole, {x}).at(0).data;
  double max_diff = 0;
  for (size_t i = 0; i < wf.size(); ++i)
    max_diff = std::max(max_diff, std::fabs(double{wf[i]} - double{split_gains[i]}));
  std::printf("\n  The same model whole, integer-only from features to gains (model.onnx through QuantizedModel with\n"
              "  `fixq model quantize`'s defaults: the GRU's PTQ+, the linear's weights GPTQ with bias correction, the\n"
              "  features' and the linear's ranges by the gains' error on the calibration mixtures, the sigmoid's [0, 1];\n"
              "  cosine of the gains against whole f32's, whole f32's against the float GRU + head's):\n");
  print_row({"whole f32", "-", "-", m.score_gains(wf), cosine(split_gains.data(), wf.data(), wf.size())}, float_db);
  const std::vector<ModelArray> calib = {m.calib_btc()};
  std::optional<QuantizedModel> int8;
  std::vector<float> int8_gains;
  for (const char* preset : {"int16", "int8"})
    for (const ScaleKind kind : {ScaleKind::PowerOfTwo, ScaleKind::Multiplier}) {
      ModelQuantConfig cfg;
      cfg.preset = preset;
      cfg.scales = kind;
      QuantizedModel q = QuantizedModel::quantize(m.whole, {calib}, cfg);
      std::vector<float> g = q.forward({x}).at(0).data;
      print_row({std::string("whole ") + preset, to_string(kind), "PTQ+", m.score_gains(g), cosine(wf.data(), g.data(), g.size())},
                float_db);
      if (!int8 && std::string(preset) == "int8") int8.emplace(std::move(q)), int8_gains = std::move(g);
    }
  std::printf("  whole f32 against the float GRU + head above: max |gain difference| %.2e (bound 1e-04)\n", max_diff);

  // The whole int8 model streamed: one frame per step through QuantizedModelStream, every
  // GRU state integer between frames; its gains must be the whole-sequence forward's bits.
  const int64_t seg = streamed_segment(m);
  const std::vector<float> seq = m.segment(seg);  // [T, 1, F]: frame t is row t
  std::vector<float> g(static_cast<size_t>(T * F));
  auto denoise = [&] {
    QuantizedModelStream stream(*int8, 1);
    for (int64_t t = 0; t < T; ++t) {
      const std::vector<float> out = stream.step({ModelArray{{1, F}, {seq.begin() + t * F, seq.begin() + (t + 1) * F}}})
                                         .at(0).data;
      std::copy(out.begin(), out.end(), g.begin() + t * F);
    }
  };
  const double us = 1e6 * bench::median_seconds_per_call(denoise, 5) / static_cast<double>(T);
  const bool same = std::equal(g.begin(), g.end(), int8_gains.begin() + seg * T * F);
  const SpeechScores ss = m.score_gains(g, seg, seg + 1);
  std::printf("  Streaming the whole int8 model (pow2) through QuantizedModelStream, mixture %lld: %.2f dB -> %.2f dB\n"
              "  (%+.2f dB); its gains %s the whole-sequence forward's bit for bit; %.2f us per frame, features to gains.\n",
              static_cast<long long>(seg), ss.snr_in_db, ss.snr_in_db + ss.snr_gain_db, ss.snr_gain_db,
              same ? "equal" : "DIFFER FROM", us);
}

void speech_demo(const std::string& dir, const SpeechModel& m) {
  const int64_t T = m.shape[0], B = m.shape[1], H = m.gru.hidden_size;
  std::printf("\nfixq demo, second model: a speech-enhancement GRU (%s)\n", dir.c_str());
  std::printf("  model: %lld log band energies -> GRU %lld x %d layers -> linear %lld -> sigmoid band gains, trained on\n"
              "         espeak-ng speech in white, pink and babble noise (tools/train_speech.py)\n",
              static_cast<long long>(m.bands), static_cast<long long>(H), static_cast<int>(m.gru.num_layers), static_cast<long long>(m.bands));
  std::printf("  task:  %lld held-out mixtures of %lld frames (text and babble unseen, -5..20 dB SNR): segmental SNR\n"
              "         improvement of the masked bands in dB (higher is better) and MSE of the gains against the ideal\n"
              "         ratio mask; calibration on %lld other mixtures; fixq rows use `fixq gru quantize`'s defaults\n\n",
              static_cast<long long>(B), static_cast<long long>(T), static_cast<long long>(m.calib_shape[1]));

  const GruOutput f = gru_forward(m.gru, m.features.data(), m.shape);
  const SpeechScores fs = m.score(f.y);
  std::printf("  %-12s %-11s %-10s %9s %9s %10s %10s\n", "model", "scales", "ranges", "SNR+ dB", "vs float", "mask MSE",
              "cosine");
  print_row({"float32", "-", "-", fs, 1.0}, fs.snr_gain_db);

  GruPtq ptq(m.gru);
  ptq.observe(m.calib.data(), m.calib_shape);
  std::vector<QuantizedGru> int8;
  for (const bool sixteen : {true, false})
    for (const ScaleKind kind : {ScaleKind::PowerOfTwo, ScaleKind::Multiplier}) {
      const GruPtqResult r = ptq.quantize(sixteen ? GruQuantConfig::int16(kind) : GruQuantConfig::int8(kind));
      QuantizedGru q(r.model, r.params);
      const GruOutput out = q.forward(m.features.data(), m.shape);
      print_row({sixteen ? "fixq int16" : "fixq int8", to_string(kind), "PTQ+", m.score(out.y),
                 cosine(f.y.data(), out.y.data(), f.y.size())},
                fs.snr_gain_db);
      if (!sixteen) int8.push_back(std::move(q));
    }
  torch_rows(dir, fs.snr_gain_db);
  std::printf("\n  SNR+ dB: mean over speech frames of the per-frame SNR after masking minus before (each clamped to\n"
              "  [-10, 35] dB); the mixtures average %.2f dB before. PTQ+: GPTQ rounding, bias correction and every\n"
              "  operator's range chosen by the output error on the calibration mixtures.\n",
              fs.snr_in_db);

  // Streaming: one held-out mixture through the int8 model, frame by frame, the state
  // staying integer between frames; the band gains computed from each frame's output.
  const int64_t seg = streamed_segment(m);
  const std::vector<float> x = m.segment(seg);
  std::vector<float> y(static_cast<size_t>(T * H));
  std::vector<double> g(static_cast<size_t>(m.bands));
  auto denoise = [&] {
    QuantizedGruStream stream(int8.front(), 1);
    for (int64_t t = 0; t < T; ++t) {
      const std::vector<float> h = stream.step(&x[static_cast<size_t>(t * m.bands)]);
      m.gains(h.data(), g.data());
      std::copy(h.begin(), h.end(), y.begin() + t * H);
    }
  };
  const double us = 1e6 * bench::median_seconds_per_call(denoise, 5) / static_cast<double>(T);
  const SpeechScores ss = m.score(y, seg, seg + 1);
  std::printf("\n  Streaming: the int8 model (pow2 scales, PTQ+) denoises held-out mixture %lld (%s) one\n"
              "  frame at a time through QuantizedGruStream: segmental SNR %.2f dB -> %.2f dB (%+.2f dB) over its %lld frames;\n"
              "  %.2f us per %.1f ms frame for the GRU step and the head (1 thread, median of 5).\n",
              static_cast<long long>(seg), m.heldout_labels[static_cast<size_t>(seg)].c_str(), ss.snr_in_db,
              ss.snr_in_db + ss.snr_gain_db, ss.snr_gain_db, static_cast<long long>(T), us, m.frame_ms);

  {  // the float GRU + head's gains, batch first, against which the whole float model is held
    std::vector<float> split(static_cast<size_t>(B * T * m.bands));
    std::vector<double> gd(static_cast<size_t>(m.bands));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t b = 0; b < B; ++b) {
        m.gains(&f.y[static_cast<size_t>((t * B + b) * H)], gd.data());
        std::copy(gd.begin(), gd.end(), split.begin() + (b * T + t) * m.bands);
      }
    whole_model_rows(m, split, fs.snr_gain_db);
  }
}

}  // namespace

std::function<void()> prepare_speech_demo(const std::string& dir) {
  auto m = std::make_shared<const SpeechModel>(SpeechModel::load(dir));
  return [dir, m] { speech_demo(dir, *m); };
}

}  // namespace fixq::cli
