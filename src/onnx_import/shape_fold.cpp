// Folding of the shape-computing constants of an ONNX graph (shape_fold.h).
#include "onnx_import/shape_fold.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "fixq/error.h"
#include "onnx_import/tensor.h"

namespace fixq::onnx_import {
namespace {

// The folded tensors are shape operands, a few elements; a larger one is no shape chain.
constexpr int64_t kMaxFolded = int64_t{1} << 24;

Shape strides_of(const Shape& dims) {
  Shape s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
    s[static_cast<std::size_t>(i)] = s[static_cast<std::size_t>(i) + 1] * dims[static_cast<std::size_t>(i) + 1];
  return s;
}

// out[j] = x[index(j)] for every element j of out_dims, on whichever vector x holds.
template <class Index>
Folded remap(const Folded& x, const Shape& out_dims, Index index) {
  Folded out;
  out.dims = out_dims;
  out.is_float = x.is_float;
  const int64_t n = numel(out_dims);
  if (n > kMaxFolded) fail("a constant of ", n, " elements is too large to fold");
  const Shape os = strides_of(out_dims);
  std::vector<int64_t> coord(out_dims.size());
  for (int64_t j = 0; j < n; ++j) {
    int64_t r = j;
    for (std::size_t a = 0; a < out_dims.size(); ++a) {
      coord[a] = r / os[a];
      r %= os[a];
    }
    const int64_t src = index(coord);
    if (x.is_float)
      out.floats.push_back(x.floats[static_cast<std::size_t>(src)]);
    else
      out.ints.push_back(x.ints[static_cast<std::size_t>(src)]);
  }
  return out;
}

}  // namespace

std::vector<int64_t> Folded::known_ints(const std::string& what) const {
  if (is_float) fail(what, " is a float tensor, not integers");
  std::vector<int64_t> out;
  for (const Dim& d : ints) {
    if (!d.known()) fail(what, " depends on the batch or time size of the data, which fixq needs as a constant here");
    out.push_back(d.v);
  }
  return out;
}

Folded folded_from_proto(const onnx::TensorProto& t, const std::string& what) {
  Folded f;
  f.dims = tensor_shape(t, what);
  if (t.data_type() == onnx::TensorProto::INT64 || t.data_type() == onnx::TensorProto::INT32) {
    for (const int64_t v : tensor_ints(t, what)) f.ints.push_back(Dim{v});
  } else {
    f.is_float = true;
    f.floats = tensor_floats(t, what);
  }
  return f;
}

Folded folded_ints(const std::vector<Dim>& v, bool scalar) {
  Folded f;
  if (!scalar) f.dims = {static_cast<int64_t>(v.size())};
  f.ints = v;
  return f;
}

Folded fold_transpose(const Folded& x, const std::vector<int64_t>& perm) {
  if (perm.size() != x.dims.size()) fail("perm has ", perm.size(), " axes for a tensor of ", x.dims.size());
  Shape out(perm.size());
  for (std::size_t a = 0; a < perm.size(); ++a) out[a] = x.dims[static_cast<std::size_t>(perm[a])];
  const Shape is = strides_of(x.dims);
  return remap(x, out, [&](const std::vector<int64_t>& c) {
    int64_t src = 0;
    for (std::size_t a = 0; a < c.size(); ++a) src += c[a] * is[static_cast<std::size_t>(perm[a])];
    return src;
  });
}

Folded fold_reshape(const Folded& x, const Shape& dims) {
  if (numel(dims) != x.size()) fail("cannot reshape ", shape_str(x.dims), " to ", shape_str(dims));
  Folded out = x;
  out.dims = dims;
  return out;
}

void normalize_slice(int64_t extent, int64_t step, int64_t& start, int64_t& end) {
  if (step == 0) fail("a Slice step of 0");
  const auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v = v < -extent ? -extent - 1 : v + extent;  // stays below lo when it was
    return std::clamp(v, lo, hi);
  };
  if (step > 0) {
    start = clamp(start, 0, extent);
    end = clamp(end, 0, extent);
  } else {
    start = clamp(start, 0, extent - 1);
    end = clamp(end, -1, extent - 1);
  }
}

Folded fold_slice(const Folded& x, int64_t axis, int64_t start, int64_t end, int64_t step) {
  const auto a = static_cast<std::size_t>(axis);
  Shape out = x.dims;
  // start and end are normalized (within [-1, extent]); step is any nonzero int64.
  const int64_t span = step > 0 ? end - start : start - end;
  const int64_t mag = step > 0 ? step : step == INT64_MIN ? INT64_MAX : -step;
  out[a] = span <= 0 ? 0 : 1 + (span - 1) / mag;
  const Shape is = strides_of(x.dims);
  return remap(x, out, [&](const std::vector<int64_t>& c) {
    int64_t src = 0;
    for (std::size_t k = 0; k < c.size(); ++k) src += (k == a ? start + c[k] * step : c[k]) * is[k];
    return src;
  });
}

Folded fold_concat(const std::vector<const Folded*>& xs, int64_t axis) {
  const Folded& first = *xs.front();
  const auto a = static_cast<std::size_t>(axis);
  Shape out = first.dims;
  if (a >= out.size()) fail("Concat axis ", axis, " of a tensor of rank ", out.size());
  out[a] = 0;
  for (const Folded* x : xs) {
    if (x->is_float != first.is_float) fail("Concat of integers and floats");
    Shape d = x->dims;
    if (d.size() != out.size()) fail("Concat of tensors of ranks ", out.size(), " and ", d.size());
    if (__builtin_add_overflow(out[a], d[a], &out[a])) fail("Concat of more than int64 elements");
    d[a] = 0;
    Shape o = out;
    o[a] = 0;
    if (d != o) fail("Concat of shapes ", shape_str(first.dims), " and ", shape_str(x->dims));
  }
  Folded f;
  f.dims = out;
  f.is_float = first.is_float;
  // Row-major: the outer index runs over the axes before `axis`, each input adds its block.
  int64_t outer = 1;
  for (std::size_t k = 0; k < a; ++k) outer *= out[k];
  for (int64_t o = 0; o < outer; ++o)
    for (const Folded* x : xs) {
      const int64_t block = outer == 0 ? 0 : x->size() / outer;
      for (int64_t k = 0; k < block; ++k) {
        if (f.is_float)
          f.floats.push_back(x->floats[static_cast<std::size_t>(o * block + k)]);
        else
          f.ints.push_back(x->ints[static_cast<std::size_t>(o * block + k)]);
      }
    }
  return f;
}

Folded fold_gather(const Folded& x, const Folded& indices, int64_t axis) {
  const auto a = static_cast<std::size_t>(axis);
  if (a >= x.dims.size()) fail("Gather axis ", axis, " of a tensor of rank ", x.dims.size());
  std::vector<int64_t> idx = indices.known_ints("Gather's indices");
  for (int64_t& i : idx) {
    if (i < -x.dims[a] || i >= x.dims[a]) fail("Gather index ", i, " outside an axis of ", x.dims[a]);
    if (i < 0) i += x.dims[a];
  }
  Shape out(x.dims.begin(), x.dims.begin() + static_cast<std::ptrdiff_t>(a));
  out.insert(out.end(), indices.dims.begin(), indices.dims.end());
  out.insert(out.end(), x.dims.begin() + static_cast<std::ptrdiff_t>(a) + 1, x.dims.end());
  const Shape is = strides_of(x.dims);
  const Shape ids = strides_of(indices.dims);
  const std::size_t r = indices.dims.size();
  return remap(x, out, [&](const std::vector<int64_t>& c) {
    int64_t src = 0, flat = 0;
    for (std::size_t k = 0; k < a; ++k) src += c[k] * is[k];
    for (std::size_t k = 0; k < r; ++k) flat += c[a + k] * ids[k];
    src += idx[static_cast<std::size_t>(flat)] * is[a];
    for (std::size_t k = a + 1; k < x.dims.size(); ++k) src += c[k + r - 1] * is[k];
    return src;
  });
}

Folded fold_cast(const Folded& x, bool to_float) {
  if (x.is_float == to_float) return x;
  Folded out;
  out.dims = x.dims;
  out.is_float = to_float;
  if (to_float) {
    for (const int64_t v : x.known_ints("the Cast operand")) out.floats.push_back(static_cast<float>(v));
  } else {
    for (const float v : x.floats) {
      if (!std::isfinite(v) || std::fabs(v) > 9.0e18f) fail("Cast of ", v, " to an integer");
      out.ints.push_back(Dim{static_cast<int64_t>(v)});
    }
  }
  return out;
}

Folded fold_equal(const Folded& a, const Folded& b) {
  if (a.is_float || b.is_float) fail("Equal of float constants (fixq folds integer shape comparisons only)");
  if (a.size() != b.size() && a.size() != 1 && b.size() != 1)
    fail("Equal of shapes ", shape_str(a.dims), " and ", shape_str(b.dims));
  Folded out = a.size() >= b.size() ? a : b;
  for (std::size_t i = 0; i < out.ints.size(); ++i) {
    const Dim x = a.ints[a.size() == 1 ? 0 : i], y = b.ints[b.size() == 1 ? 0 : i];
    if (x.known() != y.known() || (!x.known() && x.sym != y.sym))
      fail("Equal compares the batch or time size of the data, which fixq does not know until it runs");
    out.ints[i] = Dim{x == y ? 1 : 0};
  }
  return out;
}

Folded fold_arith(const std::string& op, const Folded& a, const Folded& b) {
  if (a.is_float || b.is_float) fail(op, " of float constants (fixq folds integer shape arithmetic only)");
  if (a.size() != b.size() && a.size() != 1 && b.size() != 1)
    fail(op, " of shapes ", shape_str(a.dims), " and ", shape_str(b.dims));
  Folded out = a.size() >= b.size() ? a : b;
  for (std::size_t i = 0; i < out.ints.size(); ++i) {
    const Dim x = a.ints[a.size() == 1 ? 0 : i], y = b.ints[b.size() == 1 ? 0 : i];
    // x * 1, x + 0, x / 1, x - 0 keep a symbolic size; anything else needs its value.
    const bool unit = (op == "Mul" || op == "Div") ? y == Dim{1} : y == Dim{0};
    if (!x.known() && y.known() && unit) {
      out.ints[i] = x;
      continue;
    }
    if (!x.known() || !y.known()) fail(op, " computes with the batch or time size of the data");
    int64_t r = 0;
    bool overflow = false;
    if (op == "Add")
      overflow = __builtin_add_overflow(x.v, y.v, &r);
    else if (op == "Sub")
      overflow = __builtin_sub_overflow(x.v, y.v, &r);
    else if (op == "Mul")
      overflow = __builtin_mul_overflow(x.v, y.v, &r);
    else if (y.v == 0)
      fail("Div by zero");
    else if (y.v == -1 && x.v == INT64_MIN)
      overflow = true;
    else
      r = x.v / y.v;  // ONNX integer Div truncates toward zero, as C++ does
    if (overflow) fail(op, " of ", x.v, " and ", y.v, " overflows int64");
    out.ints[i] = Dim{r};
  }
  return out;
}

}  // namespace fixq::onnx_import
