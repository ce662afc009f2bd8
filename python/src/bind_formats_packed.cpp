// fixq.formats, packed-weights part (fixq/weightonly.h): 2/4/8-bit group-quantized weights
// W [K, N], the weight-only matmul y = x · W, and GPTQ v1 checkpoint tensors.
#include <pybind11/stl.h>

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bind_formats_util.h"
#include "fixq/weightonly.h"

namespace fixq::py {

namespace {

PackedWeights quantize_weights(const pyb::object& w_obj, int bits, int64_t group_size, bool symmetric) {
  const carray<float> w = as_float_array(w_obj, "w");
  require_rank(w, 2, "w");
  const GroupQuantSpec spec{bits, group_size, symmetric ? Symmetry::Symmetric : Symmetry::Asymmetric};
  const float* src = w.data();
  const int64_t k = w.shape(0), n = w.shape(1);
  {
    pyb::gil_scoped_release nogil;
    return PackedWeights::quantize(src, k, n, spec);
  }
}

template <class T>
std::span<const T> span_of(const carray<T>& a) {
  return {a.data(), static_cast<std::size_t>(a.size())};
}

PackedWeights weights_from_parts(int bits, const pyb::object& q_obj, const pyb::object& scales_obj,
                                 const pyb::object& zeros_obj, const pyb::object& g_idx_obj) {
  const carray<uint8_t> q = as_array<uint8_t>(q_obj, "q");
  const carray<float> scales = as_float_array(scales_obj, "scales");
  const carray<int32_t> zeros = as_array<int32_t>(zeros_obj, "zeros");
  require_rank(q, 2, "q");
  require_rank(scales, 2, "scales");
  if (shape_of(zeros) != shape_of(scales))
    fail("zeros ", shape_str(shape_of(zeros)), " must have the shape of scales ", shape_str(shape_of(scales)));
  if (scales.shape(1) != q.shape(1))
    fail("scales ", shape_str(shape_of(scales)), " must be [G, N] for q of shape ", shape_str(shape_of(q)));
  std::optional<carray<int32_t>> g_idx;
  if (!g_idx_obj.is_none()) {
    g_idx = as_array<int32_t>(g_idx_obj, "g_idx");
    require_rank(*g_idx, 1, "g_idx");
  }
  return PackedWeights::from_parts(bits, q.shape(0), q.shape(1), span_of(q), span_of(scales), span_of(zeros),
                                   g_idx ? span_of(*g_idx) : std::span<const int32_t>());
}

pyb::array_t<uint8_t> weight_codes(const PackedWeights& w) {
  auto out = new_array<uint8_t>({w.rows(), w.cols()});
  uint8_t* dst = out.mutable_data();
  for (int64_t k = 0; k < w.rows(); ++k)
    for (int64_t n = 0; n < w.cols(); ++n) *dst++ = static_cast<uint8_t>(w.code(k, n));
  return out;
}

template <class T, class Get>
pyb::array_t<T> per_group(const PackedWeights& w, Get get) {
  auto out = new_array<T>({w.groups(), w.cols()});
  T* dst = out.mutable_data();
  for (int64_t g = 0; g < w.groups(); ++g)
    for (int64_t n = 0; n < w.cols(); ++n) *dst++ = get(g, n);
  return out;
}

pyb::array_t<int32_t> weight_g_idx(const PackedWeights& w) {
  auto out = new_array<int32_t>({w.rows()});
  int32_t* dst = out.mutable_data();
  for (int64_t k = 0; k < w.rows(); ++k) dst[k] = w.group_of_row(k);
  return out;
}

pyb::array_t<float> weight_dequantize(const PackedWeights& w) {
  auto out = new_array<float>({w.rows(), w.cols()});
  float* dst = out.mutable_data();
  {
    pyb::gil_scoped_release nogil;
    w.dequantize(dst);
  }
  return out;
}

// x [..., K] -> y [..., N]: every leading index is one row of the matmul.
pyb::array_t<float> matmul(const pyb::object& x_obj, const PackedWeights& w) {
  const carray<float> x = as_float_array(x_obj, "x");
  Shape shape = shape_of(x);
  if (shape.empty() || shape.back() != w.rows())
    fail("weight_only_matmul: x ", shape_str(shape), " must be [..., K] with K = ", w.rows(), " (W is [",
         w.rows(), ", ", w.cols(), "])");
  const int64_t m = numel(shape) / (w.rows());
  shape.back() = w.cols();
  auto out = new_array<float>(shape);
  const float* src = x.data();
  float* dst = out.mutable_data();
  {
    pyb::gil_scoped_release nogil;
    weight_only_matmul(src, m, w, dst);
  }
  return out;
}

template <class T>
pyb::array_t<T> to_array(const std::vector<T>& v, const Shape& shape) {
  auto out = new_array<T>(shape);
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

GptqTensors gptq_tensors(int bits, const pyb::object& qweight_obj, const pyb::object& qzeros_obj,
                         const pyb::object& scales_obj, const pyb::object& g_idx_obj) {
  const carray<int32_t> qweight = as_array<int32_t>(qweight_obj, "qweight");
  const carray<int32_t> qzeros = as_array<int32_t>(qzeros_obj, "qzeros");
  const carray<float> scales = as_float_array(scales_obj, "scales");
  GptqTensors t;
  t.bits = bits;
  t.qweight_shape = shape_of(qweight);
  t.qweight.assign(qweight.data(), qweight.data() + qweight.size());
  t.qzeros_shape = shape_of(qzeros);
  t.qzeros.assign(qzeros.data(), qzeros.data() + qzeros.size());
  t.scales_shape = shape_of(scales);
  t.scales.assign(scales.data(), scales.data() + scales.size());
  if (!g_idx_obj.is_none()) {
    const carray<int32_t> g_idx = as_array<int32_t>(g_idx_obj, "g_idx");
    require_rank(g_idx, 1, "g_idx");
    t.g_idx.assign(g_idx.data(), g_idx.data() + g_idx.size());
  }
  return t;
}

pyb::dict gptq_dict(const GptqTensors& t) {
  pyb::dict d;
  d["bits"] = t.bits;
  d["qweight"] = to_array(t.qweight, t.qweight_shape);
  d["qzeros"] = to_array(t.qzeros, t.qzeros_shape);
  d["scales"] = to_array(t.scales, t.scales_shape);
  d["g_idx"] = to_array(t.g_idx, {static_cast<int64_t>(t.g_idx.size())});
  return d;
}

std::string weights_repr(const PackedWeights& w) {
  return "PackedWeights(bits=" + std::to_string(w.bits()) + ", rows=" + std::to_string(w.rows()) +
         ", cols=" + std::to_string(w.cols()) + ", group_size=" + std::to_string(w.group_size()) +
         ", act_order=" + (w.act_order() ? "True" : "False") + ")";
}

}  // namespace

void bind_formats_packed(pyb::module_& m) {
  pyb::class_<PackedWeights>(
      m, "PackedWeights",
      "A float weight W [K, N] (y = x @ W) held as b-bit unsigned codes q with one (scale s, zero point z)\n"
      "per group of group_size consecutive input rows and per column: w[k, n] = float32(q - z) * s, groups\n"
      "possibly permuted (GPTQ act-order). Build one with PackedWeights.quantize, PackedWeights.from_parts,\n"
      "import_gptq or load_gptq_npy; it is immutable.")
      .def_static("quantize", &quantize_weights, pyb::arg("w"), pyb::arg("bits") = 4, pyb::arg("group_size") = 128,
                  pyb::arg("symmetric") = false,
                  "Quantizes W [K, N] per group and column with fixq's rules: unsigned bits-bit codes (2, 4 or\n"
                  "8), float scales, ranges never clipped, round half to even; symmetric uses the zero point\n"
                  "2^(bits-1). group_size must divide K and be a multiple of 32 / bits. An all-zero group gets the\n"
                  "parameters of [-1, 1]. A NaN or infinite weight raises ValueError.")
      .def_static("from_parts", &weights_from_parts, pyb::arg("bits"), pyb::arg("q"), pyb::arg("scales"),
                  pyb::arg("zeros"), pyb::arg("g_idx") = pyb::none(),
                  "Weights from explicit parts: codes q [K, N] uint8 (original row order), scales [G, N] (finite,\n"
                  "> 0), zeros [G, N] int32 and optionally g_idx [K] int32 (each row's group; None means k // (K/G)).\n"
                  "ValueError names the first bad entry or shape.")
      .def_property_readonly("bits", &PackedWeights::bits, "Code width: 2, 4 or 8.")
      .def_property_readonly("rows", &PackedWeights::rows, "K, the input dimension.")
      .def_property_readonly("cols", &PackedWeights::cols, "N, the output dimension.")
      .def_property_readonly("group_size", &PackedWeights::group_size, "Rows per group.")
      .def_property_readonly("groups", &PackedWeights::groups, "G = K / group_size.")
      .def_property_readonly("act_order", &PackedWeights::act_order,
                             "True when the row groups are permuted (g_idx is not k // group_size).")
      .def_property_readonly("packed_bytes", &PackedWeights::packed_bytes,
                             "Bytes held: codes, float32 scales and int32 zero points (panel padding included).")
      .def("codes", &weight_codes, "The codes q as uint8 [K, N], in the original row order.")
      .def("scales", [](const PackedWeights& w) { return per_group<float>(w, [&](int64_t g, int64_t n) { return w.scale(g, n); }); },
           "The scales as float32 [G, N].")
      .def("zeros", [](const PackedWeights& w) { return per_group<int32_t>(w, [&](int64_t g, int64_t n) { return w.zero(g, n); }); },
           "The zero points as int32 [G, N].")
      .def("g_idx", &weight_g_idx, "The group of each row as int32 [K].")
      .def("dequantize", &weight_dequantize, "W as float32 [K, N], each element float32(q - z) * s.")
      .def("matmul", [](const PackedWeights& w, const pyb::object& x) { return matmul(x, w); }, pyb::arg("x"),
           "weight_only_matmul(x, self).")
      .def("__repr__", &weights_repr);

  m.def("weight_only_matmul", &matmul, pyb::arg("x"), pyb::arg("w"),
        "y [..., N] = x [..., K] @ W with W dequantized inside the kernel: per group and column the sum of\n"
        "x[k] * (q - z) in float32 in row order, times the scale, added group after group. Within\n"
        "gamma(group_size + G + 1) * sum|x*w| of the exact product (gamma(j) = j u / (1 - j u), u = 2^-24).\n"
        "NaN and inf in x propagate as IEEE arithmetic does.");
  m.def(
      "import_gptq",
      [](const pyb::object& qweight, const pyb::object& qzeros, const pyb::object& scales, const pyb::object& g_idx,
         int bits) { return import_gptq(gptq_tensors(bits, qweight, qzeros, scales, g_idx)); },
      pyb::arg("qweight"), pyb::arg("qzeros"), pyb::arg("scales"), pyb::arg("g_idx") = pyb::none(),
      pyb::arg("bits") = 4,
      "PackedWeights from GPTQ v1 tensors of a linear layer (K inputs, N outputs): qweight int32 [K*bits/32, N]\n"
      "(row r packs q[r*(32/bits) + j] at bits [bits*j, bits*j + bits)), qzeros int32 [G, N*bits/32] (zero - 1\n"
      "packed the same way along columns), scales [G, N] (float16 converts exactly), g_idx int32 [K] or None.\n"
      "Every shape and value is checked; ValueError names the tensor at fault.");
  m.def(
      "export_gptq", [](const PackedWeights& w) { return gptq_dict(export_gptq(w)); }, pyb::arg("w"),
      "The GPTQ v1 tensors that import back to w, as a dict with keys 'bits', 'qweight', 'qzeros', 'scales'\n"
      "(float32) and 'g_idx' (always present).");
  m.def(
      "load_gptq_npy", [](const std::string& prefix, int bits) { return import_gptq(load_gptq_npy(prefix, bits)); },
      pyb::arg("prefix"), pyb::arg("bits"),
      "import_gptq of prefix + 'qweight.npy', 'qzeros.npy', 'scales.npy' (<f2 or <f4) and, if it exists,\n"
      "'g_idx.npy'. ValueError names the file at fault.");
  m.def(
      "save_gptq_npy", [](const std::string& prefix, const PackedWeights& w) { save_gptq_npy(prefix, export_gptq(w)); },
      pyb::arg("prefix"), pyb::arg("w"),
      "Writes export_gptq(w) as prefix + 'qweight.npy', 'qzeros.npy', 'scales.npy', 'g_idx.npy'; scales as <f2\n"
      "when every scale is exactly a float16 (as checkpoints hold them), else <f4.");
}

}  // namespace fixq::py
