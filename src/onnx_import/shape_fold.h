// Private to load_model_onnx: the small constant tensors of an ONNX graph that compute
// shapes (torch writes Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains, and
// Pad's pads through ConstantOfShape / Slice / Transpose), folded at import. A dimension
// may be symbolic, the batch or time size of the model's data, which is not known until
// it runs; such a dimension is carried by name and never computed with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "fixq/tensor.h"

namespace fixq::onnx_import {

// One integer element: a known value (sym < 0) or symbolic dimension `sym` (a data axis id).
struct Dim {
  int64_t v = 0;
  int sym = -1;
  bool known() const { return sym < 0; }
  bool operator==(const Dim&) const = default;
};

// A constant tensor: integers (Dim) or floats, row-major over dims.
struct Folded {
  Shape dims;
  bool is_float = false;
  std::vector<Dim> ints;
  std::vector<float> floats;

  int64_t size() const { return is_float ? static_cast<int64_t>(floats.size()) : static_cast<int64_t>(ints.size()); }
  // The known integers; throws (naming `what`) for a symbolic one or a float tensor.
  std::vector<int64_t> known_ints(const std::string& what) const;
};

Folded folded_from_proto(const onnx::TensorProto& t, const std::string& what);
Folded folded_ints(const std::vector<Dim>& v, bool scalar = false);

// ONNX operators on constants; each throws fixq::Error with a message (no prefix) for
// operands it cannot fold. Axes are already normalized to [0, rank).
Folded fold_transpose(const Folded& x, const std::vector<int64_t>& perm);
Folded fold_reshape(const Folded& x, const Shape& dims);
Folded fold_slice(const Folded& x, int64_t axis, int64_t start, int64_t end, int64_t step);  // normalized
Folded fold_concat(const std::vector<const Folded*>& xs, int64_t axis);
Folded fold_gather(const Folded& x, const Folded& indices, int64_t axis);
Folded fold_cast(const Folded& x, bool to_float);
// Add, Sub, Mul, Div of two tensors of one shape, or one of them a single element.
Folded fold_arith(const std::string& op, const Folded& a, const Folded& b);
// Equal of two integer tensors as fold_arith pairs them: 1 where equal, else 0. A symbolic
// size equals itself only (torch's `if T == 1` around a squeeze of y[:, -1:]).
Folded fold_equal(const Folded& a, const Folded& b);

// Slice's start and end for an axis of `extent` (ONNX's clamping rules), into start / end.
void normalize_slice(int64_t extent, int64_t step, int64_t& start, int64_t& end);

}  // namespace fixq::onnx_import
