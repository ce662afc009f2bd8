#include "cli/charlm.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fixq/error.h"
#include "fixq/npy.h"

namespace fixq::cli {

namespace {

std::vector<float> load(const std::string& dir, const std::string& name, Shape* shape) {
  return load_npy_f32(dir + "/" + name + ".npy", shape);
}

}  // namespace

CharLm CharLm::load(const std::string& dir) {
  CharLm m;
  std::vector<NamedTensor> sd;
  for (const char* name : {"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"}) {
    NamedTensor t{name, {}, {}};
    t.data = cli::load(dir, std::string("gru.") + name, &t.shape);
    sd.push_back(std::move(t));
  }
  m.gru = gru_from_torch(sd);
  Shape es, ds, bs;
  m.embedding = cli::load(dir, "embedding", &es);
  m.decoder_w = cli::load(dir, "decoder.weight", &ds);
  m.decoder_b = cli::load(dir, "decoder.bias", &bs);
  require(es.size() == 2 && ds.size() == 2 && bs.size() == 1 && es[0] == ds[0] && ds[0] == bs[0] &&
              es[1] == m.gru.input_size && ds[1] == m.gru.hidden_size,
          dir, ": embedding, decoder and GRU shapes do not fit together");
  m.vocab = es[0];
  m.embed = es[1];
  std::ifstream in(dir + "/vocab.json");
  if (!in) fail("cannot read ", dir, "/vocab.json");
  std::stringstream ss;
  ss << in.rdbuf();
  const nlohmann::json v = nlohmann::json::parse(ss.str());
  m.chars = v.at("chars").get<std::vector<std::string>>();
  m.chars.push_back("?");
  require(static_cast<int64_t>(m.chars.size()) == m.vocab, dir, "/vocab.json does not match the embedding");
  return m;
}

std::vector<float> CharLm::embed_ids(const std::vector<uint8_t>& ids) const {
  std::vector<float> x;
  x.reserve(ids.size() * static_cast<size_t>(embed));
  for (uint8_t id : ids) {
    require(id < vocab, "token id ", int{id}, " is outside the vocabulary of ", vocab);
    x.insert(x.end(), embedding.begin() + id * embed, embedding.begin() + (id + 1) * embed);
  }
  return x;
}

double CharLm::bits_per_char(const std::vector<float>& y, const std::vector<uint8_t>& ids) const {
  const int64_t H = gru.hidden_size, T = static_cast<int64_t>(ids.size());
  double nats = 0;
  std::vector<double> logits(static_cast<size_t>(vocab));
  for (int64_t t = 0; t + 1 < T; ++t) {
    const float* h = y.data() + t * H;
    double mx = -INFINITY;
    for (int64_t v = 0; v < vocab; ++v) {
      double s = decoder_b[v];
      for (int64_t j = 0; j < H; ++j) s += double{decoder_w[v * H + j]} * h[j];
      logits[v] = s;
      mx = std::max(mx, s);
    }
    double sum = 0;
    for (double l : logits) sum += std::exp(l - mx);
    nats += mx + std::log(sum) - logits[ids[static_cast<size_t>(t + 1)]];
  }
  return nats / static_cast<double>(T - 1) / std::log(2.0);
}

uint8_t CharLm::sample(const float* h, double temperature, std::mt19937& rng) const {
  const int64_t H = gru.hidden_size;
  std::vector<double> w(static_cast<size_t>(vocab));
  double mx = -INFINITY;
  for (int64_t v = 0; v < vocab; ++v) {
    double s = decoder_b[v];
    for (int64_t j = 0; j < H; ++j) s += double{decoder_w[v * H + j]} * h[j];
    w[v] = s / temperature;
    mx = std::max(mx, w[v]);
  }
  for (double& x : w) x = std::exp(x - mx);
  w[static_cast<size_t>(vocab - 1)] = 0;  // never emit the unknown token
  std::discrete_distribution<int> d(w.begin(), w.end());
  return static_cast<uint8_t>(d(rng));
}

std::vector<uint8_t> load_ids(const std::string& path) { return load_npy_u8(path); }

}  // namespace fixq::cli
