// Conversions between fixq's GRU layout (Haste gate order z, r, g; W [3H, C]) and the
// checkpoints of PyTorch (gates r, z, n; the same [3H, C] rows) and Haste (z, r, g;
// transposed kernels [C, 3H]).
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "fixq/error.h"
#include "fixq/gru.h"
#include "gru/state_dict_file.h"

namespace fixq {
namespace {

constexpr const char* kTorchKinds[] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};

// torch's name of one tensor: "weight_ih_l1_reverse".
std::string torch_name(const std::string& kind, int layer, int direction) {
  return kind + "_l" + std::to_string(layer) + (direction ? "_reverse" : "");
}

struct TorchKey {
  std::string kind;
  int layer = 0;
  int direction = 0;
  auto tie() const { return std::tie(kind, layer, direction); }
  bool operator<(const TorchKey& o) const { return tie() < o.tie(); }
};

// Splits "bias_hh_l12_reverse" into its parts; false for any other name. Layer numbers
// are plain decimals below 10000 (no sign, no leading zero), as torch writes them.
bool parse_torch_name(const std::string& name, TorchKey& key) {
  for (const char* kind : kTorchKinds) {
    const std::string prefix = std::string(kind) + "_l";
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    std::string digits = name.substr(prefix.size());
    const std::string reverse = "_reverse";
    key.direction = 0;
    if (digits.size() > reverse.size() && digits.ends_with(reverse)) {
      digits.resize(digits.size() - reverse.size());
      key.direction = 1;
    }
    if (digits.empty() || digits.size() > 4 || (digits.size() > 1 && digits[0] == '0') ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    key.kind = kind;
    key.layer = std::stoi(digits);
    return true;
  }
  return false;
}

// torch's gate blocks (r, z, n) and Haste's (z, r, g) differ by the order of the first two
// blocks of rows, so swapping them converts either way. v holds 3H rows of `cols` values.
std::vector<float> swap_r_z_blocks(const std::vector<float>& v, int64_t hidden, int64_t cols) {
  std::vector<float> out(v);
  const int64_t block = hidden * cols;
  std::copy_n(v.begin(), block, out.begin() + block);
  std::copy_n(v.begin() + block, block, out.begin());
  return out;
}

void check_values_match_shape(const char* who, const NamedTensor& t) {
  const int64_t n = numel(t.shape);
  if (static_cast<int64_t>(t.data.size()) != n)
    fail(who, ": tensor '", t.name, "' has ", t.data.size(), " values, but its shape ",
         shape_str(t.shape), " needs ", n);
}

void check_shape(const char* who, const NamedTensor& t, const Shape& want, const char* meaning) {
  if (t.shape != want)
    fail(who, ": tensor '", t.name, "' has shape ", shape_str(t.shape), ", expected ",
         shape_str(want), " (", meaning, ")");
}

}  // namespace

bool is_torch_gru_tensor_name(const std::string& name) {
  TorchKey key;
  return parse_torch_name(name, key);
}

GruModel gru_from_torch(const std::vector<NamedTensor>& state_dict) {
  constexpr const char* who = "gru_from_torch";
  std::map<TorchKey, const NamedTensor*> parts;
  int layers = 0;
  bool reverse = false;
  for (const NamedTensor& t : state_dict) {
    TorchKey key;
    if (!parse_torch_name(t.name, key))
      fail(who, ": unexpected tensor '", t.name, "': an nn.GRU state_dict holds weight_ih_l<k>, "
           "weight_hh_l<k>, bias_ih_l<k> and bias_hh_l<k>, each also with _reverse (strip a "
           "module prefix such as 'gru.' first)");
    check_values_match_shape(who, t);
    if (!parts.emplace(key, &t).second) fail(who, ": two tensors are named '", t.name, "'");
    layers = std::max(layers, key.layer + 1);
    reverse = reverse || key.direction == 1;
  }
  const auto find = [&](const char* kind, int layer, int direction) -> const NamedTensor* {
    const auto it = parts.find(TorchKey{kind, layer, direction});
    return it == parts.end() ? nullptr : it->second;
  };
  const auto require_part = [&](const char* kind, int layer, int direction) -> const NamedTensor& {
    const NamedTensor* t = find(kind, layer, direction);
    if (!t) fail(who, ": missing tensor '", torch_name(kind, layer, direction), "'");
    return *t;
  };

  // Layer 0's forward weights decide the sizes; every other tensor must agree.
  const NamedTensor& ih0 = require_part("weight_ih", 0, 0);
  const NamedTensor& hh0 = require_part("weight_hh", 0, 0);
  if (hh0.shape.size() != 2 || hh0.shape[1] < 1 || !is_product(hh0.shape[0], 3, hh0.shape[1]))
    fail(who, ": tensor '", hh0.name, "' has shape ", shape_str(hh0.shape),
         ", expected [3 * hidden_size, hidden_size]");
  if (ih0.shape.size() != 2 || ih0.shape[1] < 1)
    fail(who, ": tensor '", ih0.name, "' has shape ", shape_str(ih0.shape),
         ", expected [3 * hidden_size, input_size]");

  GruModel m;
  m.input_size = ih0.shape[1];
  m.hidden_size = hh0.shape[1];
  m.num_layers = layers;
  m.bidirectional = reverse;
  const int64_t H = m.hidden_size;
  for (int layer = 0; layer < layers; ++layer) {
    for (int d = 0; d < m.directions(); ++d) {
      GruCell c;
      c.input_size = layer == 0 ? m.input_size : m.directions() * H;
      c.hidden_size = H;
      const NamedTensor& ih = require_part("weight_ih", layer, d);
      check_shape(who, ih, {3 * H, c.input_size},
                  layer == 0 ? "3 * hidden_size, input_size" : "3 * hidden_size, directions * hidden_size");
      c.W = swap_r_z_blocks(ih.data, H, c.input_size);
      const NamedTensor& hh = require_part("weight_hh", layer, d);
      check_shape(who, hh, {3 * H, H}, "3 * hidden_size, hidden_size");
      c.R = swap_r_z_blocks(hh.data, H, H);
      // A missing bias is torch's bias=False: zero.
      for (const auto& [kind, bias] : {std::pair{"bias_ih", &c.bx}, std::pair{"bias_hh", &c.br}}) {
        const NamedTensor* b = find(kind, layer, d);
        if (b) check_shape(who, *b, {3 * H}, "3 * hidden_size");
        *bias = b ? swap_r_z_blocks(b->data, H, 1) : std::vector<float>(static_cast<std::size_t>(3 * H), 0.0f);
      }
      m.cells.push_back(std::move(c));
    }
  }
  try {
    m.validate();
  } catch (const Error& e) {
    fail(who, ": ", e.what());
  }
  return m;
}

std::vector<NamedTensor> gru_to_torch(const GruModel& model) {
  model.validate();
  // A state_dict (and so the float model file) has no place for the cell's kind: written
  // out, a reset-before model would read back as torch's reset-after nn.GRU.
  if (model.cell_kind != GruCellKind::ResetAfter)
    fail("gru_to_torch: a ", to_string(model.cell_kind), " GRU is not an nn.GRU (torch's cell is reset_after); "
         "quantize it from its ONNX file, or keep it as a QuantizedGru (.fixq)");
  const int64_t H = model.hidden_size;
  std::vector<NamedTensor> state_dict;
  for (int layer = 0; layer < model.num_layers; ++layer) {
    for (int d = 0; d < model.directions(); ++d) {
      const GruCell& c = model.cell(layer, d);
      state_dict.push_back({torch_name("weight_ih", layer, d), {3 * H, c.input_size}, swap_r_z_blocks(c.W, H, c.input_size)});
      state_dict.push_back({torch_name("weight_hh", layer, d), {3 * H, H}, swap_r_z_blocks(c.R, H, H)});
      state_dict.push_back({torch_name("bias_ih", layer, d), {3 * H}, swap_r_z_blocks(c.bx, H, 1)});
      state_dict.push_back({torch_name("bias_hh", layer, d), {3 * H}, swap_r_z_blocks(c.br, H, 1)});
    }
  }
  return state_dict;
}

GruCell gru_cell_from_haste(const NamedTensor& kernel, const NamedTensor& recurrent_kernel,
                            const NamedTensor& bias, const NamedTensor& recurrent_bias) {
  constexpr const char* who = "gru_cell_from_haste";
  for (const NamedTensor* t : {&kernel, &recurrent_kernel, &bias, &recurrent_bias}) check_values_match_shape(who, *t);
  const Shape& rk = recurrent_kernel.shape;
  if (rk.size() != 2 || rk[0] < 1 || !is_product(rk[1], 3, rk[0]))
    fail(who, ": tensor '", recurrent_kernel.name, "' has shape ", shape_str(rk),
         ", expected [hidden_size, 3 * hidden_size]");
  const int64_t H = rk[0];
  if (kernel.shape.size() != 2 || kernel.shape[0] < 1 || kernel.shape[1] != 3 * H)
    fail(who, ": tensor '", kernel.name, "' has shape ", shape_str(kernel.shape),
         ", expected [input_size, 3 * hidden_size] with hidden_size = ", H);
  check_shape(who, bias, {3 * H}, "3 * hidden_size");
  check_shape(who, recurrent_bias, {3 * H}, "3 * hidden_size");

  GruCell c;
  c.input_size = kernel.shape[0];
  c.hidden_size = H;
  // Haste multiplies x [1, C] by kernel [C, 3H]; fixq's W [3H, C] is its transpose.
  const auto transpose = [](const std::vector<float>& m, int64_t rows, int64_t cols) {
    std::vector<float> t(m.size());
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) t[static_cast<std::size_t>(j * rows + i)] = m[static_cast<std::size_t>(i * cols + j)];
    return t;
  };
  c.W = transpose(kernel.data, c.input_size, 3 * H);
  c.R = transpose(recurrent_kernel.data, H, 3 * H);
  c.bx = bias.data;
  c.br = recurrent_bias.data;
  // The cell on its own is a one-layer model: validate() checks its values.
  GruModel one{c.input_size, H, 1, false, {c}};
  try {
    one.validate();
  } catch (const Error& e) {
    fail(who, ": ", e.what());
  }
  return c;
}

}  // namespace fixq
