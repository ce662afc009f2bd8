// fixq demo, second model: the embedded speech-enhancement GRU (data/speech). Quantizes it
// with `fixq gru quantize`'s defaults, scores float, fixed point and PyTorch's dynamic int8
// on held-out noisy speech in segmental SNR improvement (dB) and mask MSE, and denoises one
// held-out mixture frame by frame through the streaming API.
#include "cli/demo_speech.h"

#include <nlohmann/json.hpp>
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
  std::string why;
  const std::optional<nlohmann::json> j = torch_baseline("speech", dir, 3, &why);
  if (!j) {
    std::printf("  (PyTorch rows left out: %s)\n", why.c_str());
    return;
  }
  try {
    for (const auto& r : j->at("rows")) {
      const std::string engine = r.at("engine").is_null() ? "-" : r.at("engine").get<std::string>();
      const std::string name = engine == "-" ? "torch f32" : "torch int8";
      if (r.contains("error")) {
        std::printf("  %-12s %-11s %s\n", name.c_str(), engine.c_str(), r.at("error").get<std::string>().c_str());
        continue;
      }
      print_row({name, engine, engine == "-" ? "-" : "dynamic",
                 {r.at("snr_gain_db").get<double>(), 0.0, r.at("mask_mse").get<double>()}, r.at("cosine").get<double>()},
                float_db);
    }
  } catch (const nlohmann::json::exception& e) {
    std::printf("  (PyTorch rows left out: the baseline's JSON lacks a field: %s)\n", e.what());
  }
}

// The held-out mixture the streaming part denoises: the first in babble at 5 dB SNR.
int64_t streamed_segment(const SpeechModel& m) {
  for (size_t b = 0; b < m.heldout_labels.size(); ++b)
    if (m.heldout_labels[b].rfind("babble at 5 dB", 0) == 0) return static_cast<int64_t>(b);
  return 0;
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
}

}  // namespace

std::function<void()> prepare_speech_demo(const std::string& dir) {
  auto m = std::make_shared<const SpeechModel>(SpeechModel::load(dir));
  return [dir, m] { speech_demo(dir, *m); };
}

}  // namespace fixq::cli
