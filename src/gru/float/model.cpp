// GruModel::validate: every shape consistent, every value finite, checked once up front so
// that the forward loops can trust the model.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fixq/error.h"
#include "fixq/gru.h"
#include "gru/float/inputs.h"

namespace fixq {
namespace {

// "layer 1 reverse" / "layer 0 forward", for messages.
std::string cell_name(int layer, int direction) {
  return "layer " + std::to_string(layer) + (direction ? " reverse" : " forward");
}

void check_tensor(const std::string& cell, const char* name, const std::vector<float>& v,
                  const Shape& shape) {
  const auto want = static_cast<std::size_t>(numel(shape));
  if (v.size() != want)
    fail("GRU model: ", cell, ": ", name, " has ", v.size(), " values, but ", shape_str(shape),
         " needs ", want);
  // A branch-free scan first (every forward pass validates its model, so this runs over
  // every weight each call); the position of a bad value is looked for only when needed.
  if (gru_float::all_finite(v.data(), static_cast<int64_t>(v.size()))) return;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i])) fail("GRU model: ", cell, ": ", name, "[", i, "] is ", v[i], ", not finite");
}

}  // namespace

void GruModel::validate() const {
  if (input_size < 1 || hidden_size < 1 || num_layers < 1)
    fail("GRU model: input_size ", input_size, ", hidden_size ", hidden_size, " and num_layers ",
         num_layers, " must all be at least 1");
  // numel() refuses sizes whose element counts overflow int64 (D * H among them).
  numel(Shape{3, hidden_size, input_size});
  numel(Shape{3, hidden_size, directions(), hidden_size});
  const auto want_cells = static_cast<std::size_t>(numel(Shape{num_layers, directions()}));
  if (cells.size() != want_cells)
    fail("GRU model: ", cells.size(), " cells, but ", num_layers, " layers x ", directions(),
         " directions need ", want_cells);
  for (int layer = 0; layer < num_layers; ++layer) {
    for (int d = 0; d < directions(); ++d) {
      const GruCell& c = cell(layer, d);
      const std::string name = cell_name(layer, d);
      const int64_t in = layer == 0 ? input_size : directions() * hidden_size;
      if (c.input_size != in || c.hidden_size != hidden_size)
        fail("GRU model: ", name, ": cell has input_size ", c.input_size, " and hidden_size ",
             c.hidden_size, ", but the model needs ", in, " and ", hidden_size);
      check_tensor(name, "W", c.W, {3 * hidden_size, in});
      check_tensor(name, "R", c.R, {3 * hidden_size, hidden_size});
      check_tensor(name, "bx", c.bx, {3 * hidden_size});
      check_tensor(name, "br", c.br, {3 * hidden_size});
    }
  }
}

}  // namespace fixq
