// A GRU inside a plain state_dict in safetensors: the tensors of one module are found by
// their names' last component (torch's parameter names), grouped by the module prefix
// before it, told apart from nn.LSTM / nn.RNN by the recurrent weight's rows, then handed
// to gru_from_torch with the prefix stripped.
#include <map>
#include <string>
#include <vector>

#include "fixq/error.h"
#include "gru/state_dict_file.h"

namespace fixq {
namespace {

struct Module {
  std::vector<const SafetensorsTensorInfo*> tensors;  // names of the form <prefix><torch name>
  const SafetensorsTensorInfo* weight_hh_l0 = nullptr;

  // "" for a GRU, else what the module looks like, for the messages.
  std::string not_a_gru() const {
    if (!weight_hh_l0) return "it has no weight_hh_l0";
    const Shape& s = weight_hh_l0->shape;
    if (s.size() != 2 || s[1] < 1) return "its weight_hh_l0 is " + shape_str(s) + ", not [3 * hidden, hidden]";
    // By division: a file's extent may be any int64 (with a zero one, [0, 2^62] holds no data).
    if (is_product(s[0], 3, s[1])) return "";
    if (is_product(s[0], 4, s[1])) return "its weight_hh_l0 is " + shape_str(s) + " = [4H, H]: an nn.LSTM";
    if (s[0] == s[1]) return "its weight_hh_l0 is " + shape_str(s) + " = [H, H]: an nn.RNN";
    return "its weight_hh_l0 is " + shape_str(s) + ", not [3 * hidden, hidden]";
  }
};

// Module prefix ("encoder.rnn.", or "" at the top) -> its parameter tensors.
std::map<std::string, Module> find_modules(const SafetensorsFile& file) {
  std::map<std::string, Module> modules;
  for (const SafetensorsTensorInfo& t : file.tensors()) {
    const std::size_t dot = t.name.rfind('.');
    const std::string prefix = dot == std::string::npos ? "" : t.name.substr(0, dot + 1);
    const std::string local = t.name.substr(prefix.size());
    if (!is_torch_gru_tensor_name(local)) continue;
    Module& m = modules[prefix];
    m.tensors.push_back(&t);
    if (local == "weight_hh_l0") m.weight_hh_l0 = &t;
  }
  return modules;
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out;
}

}  // namespace

GruModel gru_from_state_dict_file(const SafetensorsFile& file, const std::string& prefix) {
  const std::string& path = file.path();
  const std::map<std::string, Module> modules = find_modules(file);
  std::vector<std::string> grus;
  for (const auto& [p, m] : modules)
    if (m.not_a_gru().empty()) grus.push_back(p);
  const std::string grus_found =
      grus.empty() ? "the file holds no nn.GRU" : "GRU prefixes in the file: " + quoted_list(grus);

  std::string chosen;
  if (prefix.empty()) {
    if (grus.empty())
      fail("load_gru_float: ", path, ": no nn.GRU state_dict in this file: no tensors named [<prefix>]weight_hh_l0 "
           "of shape [3 * hidden, hidden] among its ", file.tensors().size(), " tensors",
           modules.empty() ? "" : " (modules with RNN-style names: " + [&] {
             std::vector<std::string> all;
             for (const auto& [p, m] : modules) all.push_back(p.empty() ? "<top level>" : p);
             return quoted_list(all);
           }() + ")");
    if (grus.size() > 1)
      fail("load_gru_float: ", path, ": the file holds ", grus.size(), " GRUs; pick one with --prefix (Python: prefix=): ",
           quoted_list(grus));
    chosen = grus.front();
  } else {
    // "encoder.rnn" and "encoder.rnn." both name the module encoder.rnn.
    const std::string dotted = prefix.back() == '.' ? prefix : prefix + ".";
    if (modules.contains(prefix))
      chosen = prefix;
    else if (modules.contains(dotted))
      chosen = dotted;
    else
      fail("load_gru_float: ", path, ": prefix '", prefix, "' matches no GRU tensors (no '", dotted,
           "weight_ih_l0' ...); ", grus_found);
    const std::string why = modules.at(chosen).not_a_gru();
    if (!why.empty())
      fail("load_gru_float: ", path, ": the module at prefix '", chosen, "' is not an nn.GRU: ", why, "; ", grus_found);
  }

  const Module& m = modules.at(chosen);
  std::vector<NamedTensor> state_dict;
  int biases = 0;
  for (const SafetensorsTensorInfo* t : m.tensors) {
    const std::string local = t->name.substr(chosen.size());
    biases += local.starts_with("bias_") ? 1 : 0;
    state_dict.push_back({local, t->shape, file.read_f32(t->name)});
  }
  const std::string where = chosen.empty() ? "" : "GRU at prefix '" + chosen + "': ";
  GruModel model;
  try {
    model = gru_from_torch(state_dict);
  } catch (const Error& e) {
    fail("load_gru_float: ", path, ": ", where, e.what());
  }
  // nn.GRU's bias flag gives every layer and direction both biases, or none at all.
  const int want = 2 * static_cast<int>(model.num_layers) * model.directions();
  if (biases != 0 && biases != want) {
    for (int layer = 0; layer < model.num_layers; ++layer)
      for (int d = 0; d < model.directions(); ++d)
        for (const char* kind : {"bias_ih", "bias_hh"}) {
          const std::string name = chosen + kind + "_l" + std::to_string(layer) + (d ? "_reverse" : "");
          if (!file.find(name))
            fail("load_gru_float: ", path, ": ", where, "missing tensor '", name, "' (the file has ", biases, " of the ",
                 want, " biases; an nn.GRU has all of them or, with bias=False, none)");
        }
  }
  return model;
}

}  // namespace fixq
