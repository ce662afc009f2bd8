// load_model_onnx's layout and shape operators: on the data they only move, add or drop
// axes (model_graph.h's Data), on constants they fold (shape_fold.h).
#include <algorithm>
#include <numeric>

#include "fixq/error.h"
#include "fixq/gguf_file.h"  // printable()
#include "onnx_import/model_importer.h"

namespace fixq::onnx_import {

void ModelImporter::transpose(const onnx::NodeProto& n) {
  Tensor t = input(n, 0);
  const std::size_t rank = t.kind == Tensor::DataView ? t.data.axes.size()
                           : t.kind == Tensor::Const  ? t.constant.dims.size()
                           : t.kind == Tensor::Zeros  ? static_cast<std::size_t>(t.constant.size())
                                                      : 0;
  std::vector<int64_t> perm;
  if (const onnx::AttributeProto* a = attribute(n, "perm"))
    perm.assign(a->ints().begin(), a->ints().end());
  else
    for (std::size_t i = 0; i < rank; ++i) perm.insert(perm.begin(), static_cast<int64_t>(i));
  if (t.kind == Tensor::Inner) {
    set_output(n, 0, std::move(t));
    return;
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(rank);
  std::iota(iota.begin(), iota.end(), 0);
  if (sorted != iota) fail_node(n, "perm is not a permutation of the ", rank, " axes");
  if (t.kind == Tensor::Const) {
    t.constant = fold_transpose(t.constant, perm);
  } else if (t.kind == Tensor::Zeros) {
    const Folded dims = t.constant;
    for (std::size_t i = 0; i < rank; ++i) t.constant.ints[i] = dims.ints[static_cast<std::size_t>(perm[i])];
  } else {
    const std::vector<int> axes = t.data.axes;
    for (std::size_t i = 0; i < rank; ++i) t.data.axes[i] = axes[static_cast<std::size_t>(perm[i])];
  }
  set_output(n, 0, std::move(t));
}

void ModelImporter::reshape(const onnx::NodeProto& n) {
  Tensor t = input(n, 0);
  const Folded& target = const_input(n, 1, "shape");
  if (target.is_float || target.dims.size() != 1) fail_node(n, "its shape is not a 1-D integer tensor");
  const bool allowzero = int_attribute(n, "allowzero", 0) != 0;
  if (t.kind == Tensor::Inner) {
    set_output(n, 0, std::move(t));
    return;
  }
  if (t.kind == Tensor::Const) {
    Shape dims;
    int wildcard = -1;
    for (std::size_t i = 0; i < target.ints.size(); ++i) {
      const Dim& d = target.ints[i];
      if (!d.known()) fail_node(n, "reshapes a constant to a shape of the data");
      if (d.v == 0 && !allowzero) {
        if (i >= t.constant.dims.size()) fail_node(n, "copies axis ", i, " of a tensor of rank ", t.constant.dims.size());
        dims.push_back(t.constant.dims[i]);
      } else if (d.v == -1) {
        if (wildcard >= 0) fail_node(n, "has two -1 extents");
        wildcard = static_cast<int>(i);
        dims.push_back(1);
      } else {
        if (d.v < 0) fail_node(n, "has extent ", d.v);
        dims.push_back(d.v);
      }
    }
    if (wildcard >= 0) {
      const int64_t rest = numel(dims);
      if (rest == 0 || t.constant.size() % rest != 0) fail_node(n, "cannot infer its -1 extent");
      dims[static_cast<std::size_t>(wildcard)] = t.constant.size() / rest;
    }
    t.constant = fold_reshape(t.constant, dims);
    set_output(n, 0, std::move(t));
    return;
  }
  if (t.kind != Tensor::DataView) fail_node(n, "reshapes zeros of the data's shape; fixq supports that only as a GRU's initial state");
  const Data& in = t.data;
  const ModelValue& v = model_.values[static_cast<std::size_t>(in.value)];
  // The extent of an input axis: known, or the data's batch / time (its role).
  const auto extent = [&](int axis) -> Dim {
    switch (role(axis)) {
      case kC: return Dim{v.kind == ValueKind::State ? v.features : v.features};
      case kH: return Dim{v.features / 2};
      case kD: return Dim{2};
      case kU: return Dim{1};
      case kS: return Dim{in.row1 - in.row0};
      default: return Dim{0, role(axis)};
    }
  };
  std::vector<int> nonunit;  // positions of the input's axes other than unit ones
  for (std::size_t i = 0; i < in.axes.size(); ++i)
    if (role(in.axes[i]) != kU) nonunit.push_back(static_cast<int>(i));
  // How many of the target's entries take input axes (all but the 1s and the copies of unit axes).
  const auto takes = [&](std::size_t i) {
    const Dim& d = target.ints[i];
    if (d == Dim{1}) return false;
    if (d == Dim{0} && !allowzero) return !(i < in.axes.size() && role(in.axes[i]) == kU);
    return true;
  };
  const auto fail_reshape = [&]() {
    std::string s;
    for (const Dim& d : target.ints) s += (s.empty() ? "" : ", ") + (d.known() ? std::to_string(d.v) : std::string("<data size>"));
    fail_node(n, "reshapes ", axes_str(in), " to [", s, "]; fixq supports reshapes that keep the batch, time and "
              "feature axes apart (adding or removing axes of 1, or joining a bidirectional GRU's directions)");
  };
  Data out = in;
  out.axes.clear();
  std::size_t p = 0;
  for (std::size_t i = 0; i < target.ints.size(); ++i) {
    const Dim& d = target.ints[i];
    if (!takes(i)) {
      out.axes.push_back(kU);
      continue;
    }
    if (d == Dim{0} && !allowzero) {
      if (p >= nonunit.size() || nonunit[p] != static_cast<int>(i)) fail_reshape();
      out.axes.push_back(in.axes[static_cast<std::size_t>(nonunit[p++])]);
      continue;
    }
    // The input axes this entry takes: one, or a bidirectional GRU's (directions, hidden).
    std::size_t count = 1;
    if (d == Dim{-1}) {
      std::size_t after = 0;
      for (std::size_t j = i + 1; j < target.ints.size(); ++j) after += takes(j) ? 1 : 0;
      if (nonunit.size() < p + after) fail_reshape();
      count = nonunit.size() - p - after;
      if (count == 0) {
        out.axes.push_back(kU);
        continue;
      }
    } else if (p + 1 < nonunit.size() && role(in.axes[static_cast<std::size_t>(nonunit[p])]) == kD &&
               d == Dim{2 * (v.features / 2)}) {
      count = 2;
    }
    if (p + count > nonunit.size()) fail_reshape();
    const int first = in.axes[static_cast<std::size_t>(nonunit[p])];
    if (count == 2) {
      if (role(first) != kD || role(in.axes[static_cast<std::size_t>(nonunit[p + 1])]) != kH) fail_reshape();
      out.axes.push_back(kC);
    } else if (count == 1) {
      const Dim e = extent(first);
      const bool same = d == Dim{-1} || (e.known() ? d == e : !d.known() && role(d.sym) == e.sym);
      if (!same) fail_reshape();
      out.axes.push_back(first);
    } else {
      fail_reshape();
    }
    p += count;
  }
  if (p != nonunit.size()) fail_reshape();
  set_data(n, 0, out);
}

void ModelImporter::squeeze(const onnx::NodeProto& n, bool unsqueeze) {
  Tensor t = input(n, 0);
  bool found = false;
  std::vector<int64_t> axes = ints_of(n, "axes", 1, found);
  if (t.kind == Tensor::Inner) {
    set_output(n, 0, std::move(t));
    return;
  }
  // The tensor's extents, as Dims, whatever it is.
  std::vector<Dim> dims;
  if (t.kind == Tensor::Const)
    for (const int64_t e : t.constant.dims) dims.push_back(Dim{e});
  else if (t.kind == Tensor::Zeros)
    dims = t.constant.ints;
  const std::size_t rank = t.kind == Tensor::DataView ? t.data.axes.size() : dims.size();
  if (unsqueeze) {
    if (!found) fail_node(n, "has no axes");
    const auto out_rank = static_cast<int64_t>(rank + axes.size());
    for (int64_t& a : axes) a = axis_of(n, a, out_rank);
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) fail_node(n, "repeats an axis");
    for (const int64_t a : axes) {
      if (t.kind == Tensor::DataView)
        t.data.axes.insert(t.data.axes.begin() + a, kU);
      else
        dims.insert(dims.begin() + a, Dim{1});
    }
  } else {
    std::vector<int> drop(rank, 0);
    if (found) {
      for (const int64_t a : axes) drop[static_cast<std::size_t>(axis_of(n, a, static_cast<int64_t>(rank)))] = 1;
    } else {
      for (std::size_t a = 0; a < rank; ++a)
        drop[a] = t.kind == Tensor::DataView ? role(t.data.axes[a]) == kU : dims[a] == Dim{1};
    }
    if (t.kind == Tensor::DataView) {
      Data d = t.data;
      for (std::size_t a = 0; a < rank; ++a) {
        if (!drop[a]) continue;
        const int r = role(t.data.axes[a]);
        // h_n.squeeze(0) of a one-row state: the last frame of the GRU's output.
        if (r == kS && d.row1 - d.row0 == 1) {
          set_data(n, 0, state_row_as_frame(n, t.data, d.row0));
          return;
        }
        if (r != kU) fail_node(n, "removes axis ", a, " of ", axes_str(t.data), ", which is not of extent 1");
      }
      t.data.axes.clear();
      for (std::size_t a = 0; a < rank; ++a)
        if (!drop[a]) t.data.axes.push_back(d.axes[a]);
    } else {
      std::vector<Dim> kept;
      for (std::size_t a = 0; a < rank; ++a) {
        if (drop[a] && !(dims[a] == Dim{1})) fail_node(n, "removes an axis of extent other than 1");
        if (!drop[a]) kept.push_back(dims[a]);
      }
      dims = kept;
    }
  }
  if (t.kind == Tensor::Const) {
    Shape s;
    for (const Dim& d : dims) s.push_back(d.v);
    t.constant = fold_reshape(t.constant, s);
  } else if (t.kind == Tensor::Zeros) {
    t.constant = folded_ints(dims);
  }
  set_output(n, 0, std::move(t));
}

Data ModelImporter::state_row_as_frame(const onnx::NodeProto& n, const Data& d, int64_t row) {
  for (const ModelNode& m : model_.nodes) {
    if (m.op != ModelOp::Gru || m.outputs.size() < 2 || m.outputs[1] != d.value) continue;
    // The top layer's forward state after the last step is its output's last frame.
    if (m.gru->bidirectional || row != m.gru->num_layers - 1 || d.axes.size() != 3 || role(d.axes[0]) != kS)
      break;
    Data f;
    f.value = m.outputs[0];
    f.axes = {d.axes[1], d.axes[2]};
    f.last_frame = true;
    return f;
  }
  fail_node(n, "reads row ", row, " of a GRU's final state; fixq reads a final state as a graph output, or as h_n[-1] "
            "of a unidirectional GRU (its top layer's last frame)");
}

void ModelImporter::shape(const onnx::NodeProto& n) {
  const Tensor& t = input(n, 0);
  std::vector<Dim> dims;
  if (t.kind == Tensor::Const) {
    for (const int64_t e : t.constant.dims) dims.push_back(Dim{e});
  } else if (t.kind == Tensor::Zeros) {
    dims = t.constant.ints;
  } else if (t.kind == Tensor::DataView) {
    const Data& d = t.data;
    if (d.pad_left != 0 || d.trail != 0) (void)data_input(n, 0);
    const ModelValue& v = model_.values[static_cast<std::size_t>(d.value)];
    for (const int a : d.axes) {
      switch (role(a)) {
        case kC: dims.push_back(Dim{v.features}); break;
        case kH: dims.push_back(Dim{v.features / 2}); break;
        case kD: dims.push_back(Dim{2}); break;
        case kU: dims.push_back(Dim{1}); break;
        case kS: dims.push_back(Dim{d.row1 - d.row0}); break;
        default: dims.push_back(Dim{0, a});
      }
    }
  } else {
    fail_node(n, "reads an inner layer's output of a multi-layer GRU");
  }
  // opset 15: start and end pick a range of the axes.
  int64_t s = int_attribute(n, "start", 0), e = int_attribute(n, "end", static_cast<int64_t>(dims.size()));
  normalize_slice(static_cast<int64_t>(dims.size()), 1, s, e);
  Tensor out;
  out.constant = folded_ints(e > s ? std::vector<Dim>(dims.begin() + s, dims.begin() + e) : std::vector<Dim>{});
  set_output(n, 0, std::move(out));
}

void ModelImporter::gather(const onnx::NodeProto& n) {
  const Tensor& t = input(n, 0);
  const Folded& idx = const_input(n, 1, "indices");
  const int64_t axis = int_attribute(n, "axis", 0);
  if (t.kind == Tensor::Const) {
    Tensor out;
    out.constant = fold_gather(t.constant, idx, axis_of(n, axis, static_cast<int64_t>(t.constant.dims.size())));
    set_output(n, 0, std::move(out));
    return;
  }
  if (t.kind == Tensor::DataView && model_.values[static_cast<std::size_t>(t.data.value)].kind == ValueKind::State &&
      idx.dims.empty()) {
    const Data& d = t.data;
    const int64_t a = axis_of(n, axis, static_cast<int64_t>(d.axes.size()));
    int64_t row = idx.known_ints("Gather's index")[0];
    const int64_t rows = d.row1 - d.row0;
    if (role(d.axes[static_cast<std::size_t>(a)]) != kS || row < -rows || row >= rows)
      fail_node(n, "gathers index ", row, " of axis ", a, " of a GRU state ", axes_str(d));
    if (row < 0) row += rows;
    set_data(n, 0, state_row_as_frame(n, d, d.row0 + row));
    return;
  }
  if (t.kind == Tensor::DataView && model_.values[static_cast<std::size_t>(t.data.value)].kind == ValueKind::Sequence &&
      idx.dims.empty() && !idx.is_float) {
    // y[:, -1]: a sequence's last frame (index -1 only: T is the data's).
    Data d = t.data;
    const int64_t a = axis_of(n, axis, static_cast<int64_t>(d.axes.size()));
    const int64_t index = idx.known_ints("Gather's index")[0];
    if (role(d.axes[static_cast<std::size_t>(a)]) == kU && (index == 0 || index == -1)) {
      // y[:, -1:][:, 0]: the one element of an axis of extent 1 drops that axis.
      d.axes.erase(d.axes.begin() + a);
      set_data(n, 0, d);
      return;
    }
    if (role(d.axes[static_cast<std::size_t>(a)]) != kT || index != -1 || d.pad_left != 0 || d.trail != 0 || d.last_frame)
      fail_node(n, "gathers index ", index, " of axis ", a, " of ", axes_str(d),
                "; fixq supports Gather of a sequence's last frame only (index -1 of its time axis)");
    d.axes.erase(d.axes.begin() + a);
    d.last_frame = true;
    set_data(n, 0, d);
    return;
  }
  fail_node(n, "gathers from the data; fixq supports Gather of constants and shapes, h_n[-1] of a GRU and y[:, -1] of a "
            "sequence");
}

void ModelImporter::cast(const onnx::NodeProto& n) {
  Tensor t = input(n, 0);
  const int64_t to = int_attribute(n, "to", 0);
  const bool to_float = to == onnx::TensorProto::FLOAT || to == onnx::TensorProto::DOUBLE ||
                        to == onnx::TensorProto::FLOAT16 || to == onnx::TensorProto::BFLOAT16;
  const bool to_int = to == onnx::TensorProto::INT64 || to == onnx::TensorProto::INT32;
  if (t.kind == Tensor::Const) {
    if (!to_float && !to_int) fail_node(n, "casts a constant to type ", to, "; fixq folds casts to float or int");
    t.constant = fold_cast(t.constant, to_float);
  } else if (t.kind == Tensor::DataView && to != onnx::TensorProto::FLOAT) {
    fail_node(n, "casts the data to type ", to, "; fixq's models compute in float32");
  }
  set_output(n, 0, std::move(t));
}

void ModelImporter::constant_of_shape(const onnx::NodeProto& n) {
  const Folded& shape = const_input(n, 0, "shape");
  float value = 0.0f;
  int64_t int_value = 0;
  bool is_float = true;
  if (const onnx::AttributeProto* a = attribute(n, "value"); a && a->has_t()) {
    const Folded v = folded_from_proto(a->t(), "ConstantOfShape '" + label(n) + "' value");
    if (v.size() != 1) fail_node(n, "its value has ", v.size(), " elements, not 1");
    is_float = v.is_float;
    if (is_float)
      value = v.floats[0];
    else
      int_value = v.ints[0].v, value = int_value == 0 ? 0.0f : 1.0f;  // only zero or not matters below
  }
  if (shape.is_float || shape.dims.size() > 1) fail_node(n, "its shape is not a 1-D integer tensor");
  Tensor t;
  if (std::all_of(shape.ints.begin(), shape.ints.end(), [](const Dim& d) { return d.known(); })) {
    Shape dims;
    for (const Dim& d : shape.ints) dims.push_back(d.v);
    const int64_t count = numel(dims);
    if (count > (int64_t{1} << 24)) fail_node(n, "makes a constant of ", count, " elements");
    t.constant.dims = dims;
    t.constant.is_float = is_float;
    if (is_float)
      t.constant.floats.assign(static_cast<std::size_t>(count), value);
    else
      t.constant.ints.assign(static_cast<std::size_t>(count), Dim{int_value});
  } else {
    if (value != 0.0f) fail_node(n, "fills a tensor of the data's shape with other values than 0; fixq supports zeros there");
    t.kind = Tensor::Zeros;
    t.constant = shape;
  }
  set_output(n, 0, std::move(t));
}

void ModelImporter::pad(const onnx::NodeProto& n) {
  if (const onnx::AttributeProto* m = attribute(n, "mode"); m && m->s() != "constant")
    fail_node(n, "mode '", gguf::printable(m->s()), "' is not supported; fixq supports zero padding (constant)");
  const Tensor& t = input(n, 0);
  if (t.kind != Tensor::DataView) (void)data_input(n, 0);
  Data d = t.data;
  if (d.trail != 0) (void)data_input(n, 0);
  bool found = false;
  // opset >= 11: pads (and constant_value, axes) are inputs; before, attributes.
  std::vector<int64_t> pads = ints_of(n, opset_ < 11 ? "pads" : nullptr, opset_ < 11 ? -1 : 1, found);
  if (!found) fail_node(n, "has no pads");
  float value = 0.0f;
  if (const onnx::AttributeProto* a = attribute(n, "value")) value = a->f();
  if (has_input(n, 2)) {
    const Folded& c = const_input(n, 2, "constant_value");
    if (c.size() != 1 || !c.is_float) fail_node(n, "its constant_value is not one float");
    value = c.floats[0];
  }
  if (value != 0.0f) fail_node(n, "pads with ", value, "; fixq's Conv1d pads with zeros");
  const auto rank = static_cast<int64_t>(d.axes.size());
  std::vector<int64_t> axes = ints_of(n, nullptr, 3, found);
  if (!found) {
    axes.resize(static_cast<std::size_t>(rank));
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (pads.size() != 2 * axes.size()) fail_node(n, "has ", pads.size(), " pads for ", axes.size(), " axes");
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axis_of(n, axes[i], rank);
    const int64_t begin = pads[i], end = pads[axes.size() + i];
    if (begin == 0 && end == 0) continue;
    if (role(d.axes[static_cast<std::size_t>(a)]) >= kFirstOpen) bind(n, d.axes[static_cast<std::size_t>(a)], kT);
    if (role(d.axes[static_cast<std::size_t>(a)]) != kT || end != 0 || begin < 0)
      fail_node(n, "pads axis ", a, " of ", axes_str(d), " by ", begin, " and ", end,
                "; fixq supports a Pad of the time axis on its left only (a causal Conv1d)");
    if (__builtin_add_overflow(d.pad_left, begin, &d.pad_left)) fail_node(n, "pads by more than int64 frames");
    d.pad_node = label(n);
  }
  set_data(n, 0, d);
}

void ModelImporter::flatten(const onnx::NodeProto& n) {
  Tensor t = input(n, 0);
  if (t.kind == Tensor::Inner) {
    set_output(n, 0, std::move(t));
    return;
  }
  if (t.kind == Tensor::Zeros) fail_node(n, "flattens zeros of the data's shape; fixq supports that only as a GRU's initial state");
  const auto rank = static_cast<int64_t>(t.kind == Tensor::Const ? t.constant.dims.size() : t.data.axes.size());
  // axis may equal rank (ONNX: [numel, 1]), so it is normalized against rank + 1.
  int64_t axis = int_attribute(n, "axis", 1);
  if (axis < -rank || axis > rank) fail_node(n, "axis ", axis, " is out of range for rank ", rank);
  if (axis < 0) axis += rank;
  if (t.kind == Tensor::Const) {
    const Shape& dims = t.constant.dims;
    const int64_t outer = numel(Shape(dims.begin(), dims.begin() + axis));
    const int64_t inner = numel(Shape(dims.begin() + axis, dims.end()));
    t.constant = fold_reshape(t.constant, {outer, inner});
    set_output(n, 0, std::move(t));
    return;
  }
  // On the data: each half keeps at most one axis other than 1 (a bidirectional GRU's
  // directions and hidden axes join to its features), as Reshape does.
  Data out = t.data;
  out.axes.clear();
  for (const auto& [first, last] : {std::pair<int64_t, int64_t>{0, axis}, {axis, rank}}) {
    std::vector<int> kept;
    for (int64_t a = first; a < last; ++a)
      if (role(t.data.axes[static_cast<std::size_t>(a)]) != kU) kept.push_back(t.data.axes[static_cast<std::size_t>(a)]);
    if (kept.size() == 2 && role(kept[0]) == kD && role(kept[1]) == kH) kept = {kC};
    if (kept.size() > 1)
      fail_node(n, "flattens ", axes_str(t.data), " at axis ", axis, "; fixq supports a Flatten that keeps the batch, time "
                "and feature axes apart (each half holding one of them, besides axes of 1)");
    out.axes.push_back(kept.empty() ? kU : kept[0]);
  }
  set_data(n, 0, out);
}

void ModelImporter::equal(const onnx::NodeProto& n) {
  Tensor t;
  t.constant = fold_equal(const_input(n, 0, "first operand"), const_input(n, 1, "second operand"));
  set_output(n, 0, std::move(t));
}

void ModelImporter::if_branch(const onnx::NodeProto& n) {
  const Folded& c = const_input(n, 0, "condition");
  if (c.size() != 1) fail_node(n, "its condition has ", c.size(), " elements, not 1");
  const bool taken = c.is_float ? c.floats[0] != 0.0f : c.known_ints("its condition")[0] != 0;
  const char* which = taken ? "then_branch" : "else_branch";
  const onnx::AttributeProto* a = attribute(n, which);
  if (a == nullptr || !a->has_g()) fail_node(n, "has no ", which, " graph");
  const onnx::GraphProto& g = a->g();
  if (g.output_size() != n.output_size())
    fail_node(n, "its ", which, " has ", g.output_size(), " outputs for the node's ", n.output_size());
  for (const onnx::TensorProto& init : g.initializer()) {
    Tensor k;
    k.constant = folded_from_proto(init, "tensor '" + gguf::printable(init.name()) + "'");
    if (!tensors_.emplace(init.name(), std::move(k)).second)
      fail_node(n, "its ", which, " redefines '", gguf::printable(init.name()), "'");
  }
  // The branch's nodes read the outer graph's tensors by name, as the outer nodes do.
  for (int i = 0; i < g.node_size(); ++i) visit(g.node(i), i);
  for (int i = 0; i < n.output_size(); ++i) {
    const auto it = tensors_.find(g.output(i).name());
    if (it == tensors_.end())
      fail_node(n, "its ", which, " output '", gguf::printable(g.output(i).name()), "' is computed by no node");
    Tensor out = it->second;
    set_output(n, i, std::move(out));
  }
}

}  // namespace fixq::onnx_import
