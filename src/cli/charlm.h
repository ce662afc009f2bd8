// Private to the CLI: the embedded character-level language model (data/charlm): an
// embedding, a GRU and a linear decoder, trained on Debian's license texts. The demo runs
// its GRU in float and in fixed point and scores both on held-out text.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fixq/gru.h"

namespace fixq::cli {

struct CharLm {
  GruModel gru;
  int64_t vocab = 0, embed = 0;
  std::vector<float> embedding;  // [vocab, embed]
  std::vector<float> decoder_w;  // [vocab, H]
  std::vector<float> decoder_b;  // [vocab]
  std::vector<std::string> chars;  // id -> character (UTF-8); the unknown id is "?"

  static CharLm load(const std::string& dir);
  // x [T, 1, embed] for the ids.
  std::vector<float> embed_ids(const std::vector<uint8_t>& ids) const;
  // Bits per character of predicting ids[t + 1] from the GRU output h_t (y [T, 1, H]).
  double bits_per_char(const std::vector<float>& y, const std::vector<uint8_t>& ids) const;
  // The next character drawn from softmax(logits / temperature).
  uint8_t sample(const float* h, double temperature, std::mt19937& rng) const;
};

std::vector<uint8_t> load_ids(const std::string& path);

}  // namespace fixq::cli
