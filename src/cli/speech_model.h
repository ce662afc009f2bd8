// Private to the CLI: the embedded speech-enhancement model (data/speech, made by
// tools/train_speech.py): log band energies of a noisy mixture -> a unidirectional GRU ->
// a linear head -> sigmoid band gains, scored on held-out mixtures by the segmental SNR
// improvement of the masked bands and by the gains' MSE against the ideal ratio mask.
// The scores are tools/speech_task.py's, which its docstring defines; the tests hold the
// two equal. The same model whole, features to gains, is data/speech/model.onnx
// (tools/export_speech_onnx.py), which the demo runs through fixq/model.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fixq/gru.h"
#include "fixq/model.h"

namespace fixq::cli {

struct SpeechScores {
  double snr_gain_db = 0;  // mean over speech frames of segmental SNR out - in
  double snr_in_db = 0;    // the mean segmental SNR of the mixtures themselves, same frames
  double mask_mse = 0;     // mean of (gain - IRM)^2 over every frame and band
};

struct SpeechModel {
  GruModel gru;
  int64_t bands = 0;
  double frame_ms = 0;  // hop / sample rate
  std::vector<float> head_w;  // [bands, H]
  std::vector<float> head_b;  // [bands]
  std::vector<float> calib;   // calibration features [T, B, bands]
  Shape calib_shape;
  // Held-out mixtures, [T, B, bands] each: the GRU's input, and per band the energies of
  // speech (Es) and noise (En) and their cross term D = sum Re(S conj N).
  std::vector<float> features, speech_energy, noise_energy, cross;
  Shape shape;
  std::vector<std::string> heldout_labels;  // per segment: "babble at 5 dB, en-gb+f4"
  // The whole model, model.onnx as load_model_onnx imports it: one input [B, T, bands]
  // (batch first) to one output, the gains [B, T, bands]. Empty (no nodes) in a fixq built
  // without ONNX, and whole_missing then says so.
  Model whole;
  std::string whole_missing;

  static SpeechModel load(const std::string& dir);
  // Band gains sigmoid(head h + b) of one GRU output row h [H], in double.
  void gains(const float* h, double* out) const;
  // Scores of the GRU's output y over held-out segments [b0, b1) of `shape`; y holds the
  // rows of those segments only, [T, b1 - b0, H].
  SpeechScores score(const std::vector<float>& y, int64_t b0, int64_t b1) const;
  SpeechScores score(const std::vector<float>& y) const { return score(y, 0, shape[1]); }
  // The same scores of band gains g [b1 - b0, T, bands] (batch first: the whole model's
  // output) over held-out segments [b0, b1).
  SpeechScores score_gains(const std::vector<float>& g, int64_t b0, int64_t b1) const;
  SpeechScores score_gains(const std::vector<float>& g) const { return score_gains(g, 0, shape[1]); }
  // The held-out features batch first, [B, T, bands]: the whole model's input.
  ModelArray features_btc() const;
  // The calibration features batch first, [B, T, bands].
  ModelArray calib_btc() const;
  // The features of held-out segment b, [T, 1, bands].
  std::vector<float> segment(int64_t b) const;
};

}  // namespace fixq::cli
