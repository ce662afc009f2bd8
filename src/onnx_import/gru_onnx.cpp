// load_gru_onnx: the GRU nodes of an ONNX model as one fixq GruModel (fixq/gru.h); the
// nodes are read and converted in gru_chain.cpp, shared with load_model_onnx.
#include <string>
#include <vector>

#include "fixq/error.h"
#include "fixq/gru.h"
#include "onnx_import/gru_chain.h"
#include "onnx_import/tensor.h"

namespace fixq {
namespace {

using onnx_import::Chain;
using onnx_import::Where;

std::string list(const std::vector<Chain>& chains) {
  std::string out;
  for (const Chain& c : chains) out += (out.empty() ? "" : ", ") + c.describe();
  return out;
}

const Chain& choose(const Where& where, const std::vector<Chain>& chains, const std::string& prefix) {
  if (chains.empty()) where.fail("the model has no GRU node (fixq imports ONNX GRU operators)");
  if (prefix.empty()) {
    if (chains.size() > 1)
      where.fail("the model holds ", chains.size(), " separate GRUs; pick one with --prefix (Python: prefix=): ",
                list(chains));
    return chains.front();
  }
  const std::string dotted = prefix.back() == '.' ? prefix : prefix + ".";
  std::vector<const Chain*> hits;
  for (const Chain& c : chains)
    if (c.module == prefix || c.module == dotted || c.layers.front().node->name().starts_with(prefix)) hits.push_back(&c);
  if (hits.empty()) where.fail("prefix '", prefix, "' matches no GRU; the GRUs of the model: ", list(chains));
  if (hits.size() > 1) {
    std::vector<Chain> many;
    for (const Chain* c : hits) many.push_back(*c);
    where.fail("prefix '", prefix, "' matches ", hits.size(), " GRUs: ", list(many), "; give a longer one");
  }
  return *hits.front();
}

}  // namespace

bool onnx_supported() { return true; }

GruModel load_gru_onnx(const std::string& path, const std::string& prefix) {
  const Where where{"load_gru_onnx", path};
  const onnx::ModelProto model = onnx_import::read_onnx_model(where);
  const onnx_import::Constants constants = onnx_import::graph_constants(model.graph());
  const std::vector<Chain> chains = onnx_import::find_chains(where, model.graph(), constants, false);
  return onnx_import::chain_model(where, choose(where, chains, prefix), constants);
}

}  // namespace fixq
