#include "cli/speech_model.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fixq/error.h"
#include "fixq/npy.h"

namespace fixq::cli {

namespace {

// python/fixq/baselines/_speech_task.py: segmental SNR clamped per frame, speech frames within 40 dB of
// their segment's loudest.
constexpr double kSnrMinDb = -10.0, kSnrMaxDb = 35.0, kActiveDb = 40.0;

std::vector<float> load(const std::string& dir, const std::string& name, Shape* shape) {
  return load_npy_f32(dir + "/" + name + ".npy", shape);
}

double clamp_db(double ratio) {
  return std::clamp(10.0 * std::log10(std::max(ratio, 1e-300)), kSnrMinDb, kSnrMaxDb);
}

// [T, B, C] -> [B, T, C].
ModelArray batch_first(const std::vector<float>& x, const Shape& s) {
  const int64_t T = s[0], B = s[1], C = s[2];
  ModelArray a{{B, T, C}, std::vector<float>(x.size())};
  for (int64_t t = 0; t < T; ++t)
    for (int64_t b = 0; b < B; ++b)
      std::copy_n(x.begin() + (t * B + b) * C, C, a.data.begin() + (b * T + t) * C);
  return a;
}

}  // namespace

SpeechModel SpeechModel::load(const std::string& dir) {
  SpeechModel m;
  std::ifstream in(dir + "/task.json");
  if (!in) fail("cannot read ", dir, "/task.json");
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json task;
  try {
    task = nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::exception& e) {
    fail(dir, "/task.json is not valid JSON: ", e.what());
  }
  const int64_t layers = task.value("layers", int64_t{0});
  require(layers >= 1 && layers <= 8, dir, "/task.json: 'layers' must be 1..8");
  std::vector<NamedTensor> sd;
  for (int64_t k = 0; k < layers; ++k)
    for (const char* w : {"weight_ih", "weight_hh", "bias_ih", "bias_hh"}) {
      NamedTensor t{std::string(w) + "_l" + std::to_string(k), {}, {}};
      t.data = cli::load(dir, "gru." + t.name, &t.shape);
      sd.push_back(std::move(t));
    }
  m.gru = gru_from_torch(sd);
  Shape hw, hb, es, en, d;
  m.head_w = cli::load(dir, "head.weight", &hw);
  m.head_b = cli::load(dir, "head.bias", &hb);
  m.calib = cli::load(dir, "calib.features", &m.calib_shape);
  m.features = cli::load(dir, "heldout.features", &m.shape);
  m.speech_energy = cli::load(dir, "heldout.speech_energy", &es);
  m.noise_energy = cli::load(dir, "heldout.noise_energy", &en);
  m.cross = cli::load(dir, "heldout.cross", &d);
  m.bands = m.gru.input_size;
  require(m.gru.directions() == 1, dir, ": the speech model's GRU must be unidirectional (it streams)");
  require(hw == Shape{m.bands, m.gru.hidden_size} && hb == Shape{m.bands} && m.shape.size() == 3 &&
              m.shape[0] > 0 && m.shape[1] > 0 && m.shape[2] == m.bands && es == m.shape && en == m.shape &&
              d == m.shape && m.calib_shape.size() == 3 && m.calib_shape[2] == m.bands,
          dir, ": GRU, head, features and held-out band sums do not fit together");
  for (size_t i = 0; i < m.speech_energy.size(); ++i)
    require(m.speech_energy[i] >= 0.0f && m.noise_energy[i] >= 0.0f, dir, ": a band energy is negative");
  const double hop = task.value("hop", 0.0), rate = task.value("sample_rate", 0.0);
  require(hop > 0 && rate > 0, dir, "/task.json: 'hop' and 'sample_rate' must be positive");
  m.frame_ms = 1e3 * hop / rate;
  const nlohmann::json held = task.value("heldout", nlohmann::json::array());
  for (const auto& h : held)
    m.heldout_labels.push_back(h.value("noise", std::string("?")) + " at " +
                               std::to_string(static_cast<int>(std::lround(h.value("snr_db", 0.0)))) + " dB SNR, voice " +
                               h.value("voice", std::string("?")));
  m.heldout_labels.resize(static_cast<size_t>(m.shape[1]), "?");
  if (!onnx_supported()) {
    m.whole_missing = "this fixq was built without ONNX support (-DFIXQ_ONNX=OFF)";
    return m;
  }
  m.whole = load_model_onnx(dir + "/model.onnx");
  const Model& w = m.whole;
  require(w.inputs.size() == 1 && w.outputs.size() == 1 &&
              w.values[static_cast<size_t>(w.inputs[0])].kind == ValueKind::Sequence &&
              w.values[static_cast<size_t>(w.inputs[0])].layout.axes == "BTC" &&
              w.values[static_cast<size_t>(w.inputs[0])].features == m.bands &&
              w.values[static_cast<size_t>(w.outputs[0])].layout.axes == "BTC" &&
              w.values[static_cast<size_t>(w.outputs[0])].features == m.bands,
          dir, "/model.onnx: the whole model must take features [B, T, ", m.bands, "] to gains [B, T, ", m.bands,
          "] (tools/export_speech_onnx.py writes it)");
  return m;
}

void SpeechModel::gains(const float* h, double* out) const {
  const int64_t H = gru.hidden_size;
  for (int64_t f = 0; f < bands; ++f) {
    double s = head_b[static_cast<size_t>(f)];
    for (int64_t j = 0; j < H; ++j) s += double{head_w[static_cast<size_t>(f * H + j)]} * h[j];
    out[f] = 1.0 / (1.0 + std::exp(-s));
  }
}

namespace {

// The scores of segments [b0, b1), the gains of frame t of segment b written by gains_of(t, b, out).
template <class GainsOf>
SpeechScores score_with(const SpeechModel& m, int64_t b0, int64_t b1, GainsOf gains_of) {
  const int64_t T = m.shape[0], B = m.shape[1], F = m.bands, n = b1 - b0;
  std::vector<double> g(static_cast<size_t>(F)), s(static_cast<size_t>(T)), noise(s), err(s);
  double gain_sum = 0, in_sum = 0, sq_sum = 0;
  int64_t active = 0;
  for (int64_t b = b0; b < b1; ++b) {
    double loudest = 0;
    for (int64_t t = 0; t < T; ++t) {
      gains_of(t, b, g.data());
      double st = 0, nt = 0, et = 0;
      for (int64_t f = 0; f < F; ++f) {
        const size_t i = static_cast<size_t>((t * B + b) * F + f);
        const double es = m.speech_energy[i], en = m.noise_energy[i], d = m.cross[i], gf = g[static_cast<size_t>(f)];
        st += es;
        nt += en;
        et += (1 - gf) * (1 - gf) * es + gf * gf * en - 2 * gf * (1 - gf) * d;
        const double irm = std::sqrt(es / std::max(es + en, 1e-30));
        sq_sum += (gf - irm) * (gf - irm);
      }
      s[static_cast<size_t>(t)] = st, noise[static_cast<size_t>(t)] = nt, err[static_cast<size_t>(t)] = et;
      loudest = std::max(loudest, st);
    }
    const double floor = loudest * std::pow(10.0, -kActiveDb / 10.0);
    for (int64_t t = 0; t < T; ++t) {
      const size_t i = static_cast<size_t>(t);
      if (!(s[i] > floor)) continue;
      const double in_db = clamp_db(s[i] / std::max(noise[i], 1e-30));
      gain_sum += clamp_db(s[i] / std::max(err[i], 1e-30)) - in_db;
      in_sum += in_db;
      ++active;
    }
  }
  require(active > 0, "speech scores: no held-out frame has speech");
  return {gain_sum / static_cast<double>(active), in_sum / static_cast<double>(active),
          sq_sum / static_cast<double>(T * n * F)};
}

}  // namespace

SpeechScores SpeechModel::score(const std::vector<float>& y, int64_t b0, int64_t b1) const {
  const int64_t T = shape[0], B = shape[1], H = gru.hidden_size, n = b1 - b0;
  require(0 <= b0 && b0 < b1 && b1 <= B, "speech segments [", b0, ", ", b1, ") are outside the ", B, " held out");
  require(static_cast<int64_t>(y.size()) == T * n * H, "speech scores: the GRU output has ", y.size(),
          " values, expected ", T * n * H);
  return score_with(*this, b0, b1, [&](int64_t t, int64_t b, double* g) {
    gains(&y[static_cast<size_t>((t * n + b - b0) * H)], g);
  });
}

SpeechScores SpeechModel::score_gains(const std::vector<float>& g, int64_t b0, int64_t b1) const {
  const int64_t T = shape[0], B = shape[1], F = bands, n = b1 - b0;
  require(0 <= b0 && b0 < b1 && b1 <= B, "speech segments [", b0, ", ", b1, ") are outside the ", B, " held out");
  require(static_cast<int64_t>(g.size()) == n * T * F, "speech scores: the gains have ", g.size(), " values, expected ",
          n * T * F);
  return score_with(*this, b0, b1, [&](int64_t t, int64_t b, double* out) {
    const float* row = &g[static_cast<size_t>(((b - b0) * T + t) * F)];
    for (int64_t f = 0; f < F; ++f) out[f] = row[f];
  });
}

ModelArray SpeechModel::features_btc() const { return batch_first(features, shape); }
ModelArray SpeechModel::calib_btc() const { return batch_first(calib, calib_shape); }

std::vector<float> SpeechModel::segment(int64_t b) const {
  const int64_t T = shape[0], B = shape[1];
  require(0 <= b && b < B, "speech segment ", b, " is outside the ", B, " held out");
  std::vector<float> x(static_cast<size_t>(T * bands));
  for (int64_t t = 0; t < T; ++t)
    std::copy_n(features.begin() + (t * B + b) * bands, bands, x.begin() + t * bands);
  return x;
}

}  // namespace fixq::cli
