// fixq.formats, GGUF part: ggml's block formats (fixq/gguf.h) on numpy arrays.
// Values [..., n] pack row by row into bytes [..., n / block_elems * block_bytes], the
// bytes of ggml's quantize_row_<type>_ref; the library's NaN/Inf rules apply unchanged
// (non-finite inputs are refused, scales beyond fp16 are stored as ggml stores them and
// reported by gguf_first_invalid_block).
#include <pybind11/stl.h>

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bind_formats_util.h"
#include "fixq/gguf.h"

namespace fixq::py {

namespace {

std::span<const std::byte> bytes_of(const carray<uint8_t>& a) {
  return {reinterpret_cast<const std::byte*>(a.data()), static_cast<std::size_t>(a.size())};
}

pyb::array_t<uint8_t> gguf_quantize(const std::string& type, const pyb::object& x_obj) {
  const gguf::TypeTraits& t = gguf::traits(type);
  const carray<float> x = as_float_array(x_obj, "x");
  const Shape shape = shape_of(x);
  auto out = new_array<uint8_t>(
      packed_shape(shape, t.block_elems, static_cast<int64_t>(t.block_bytes), std::string(t.name)));
  const float* src = x.data();
  auto* dst = reinterpret_cast<std::byte*>(out.mutable_data());
  const int64_t n = numel(shape);
  {
    pyb::gil_scoped_release nogil;
    gguf::quantize(t.type, src, n, dst);
  }
  return out;
}

pyb::array_t<float> gguf_dequantize(const std::string& type, const pyb::object& data_obj,
                                    const std::optional<Shape>& shape) {
  const gguf::TypeTraits& t = gguf::traits(type);
  const carray<uint8_t> data = as_byte_array(data_obj, "data");
  Shape out_shape;
  if (shape) {
    const std::size_t want = gguf::packed_size(t.type, *shape);
    if (static_cast<std::size_t>(data.size()) != want)
      fail(t.name, " data of shape ", shape_str(*shape), " must be ", want, " bytes; got ", data.size(),
           static_cast<std::size_t>(data.size()) < want ? " (truncated)" : " (oversized)");
    out_shape = *shape;
  } else {
    out_shape = unpacked_shape(shape_of(data), t.block_elems, static_cast<int64_t>(t.block_bytes), std::string(t.name));
  }
  auto out = new_array<float>(out_shape);
  const std::span<const std::byte> packed = bytes_of(data);
  float* dst = out.mutable_data();
  {
    pyb::gil_scoped_release nogil;
    gguf::dequantize(t.type, packed, dst);
  }
  return out;
}

// One dot per row: x [..., bx] and y [..., by] with the same leading shape.
pyb::object gguf_dot(const std::string& type, const pyb::object& x_obj, const pyb::object& y_obj) {
  const gguf::TypeTraits& t = gguf::traits(type);
  const carray<uint8_t> x = as_byte_array(x_obj, "x"), y = as_byte_array(y_obj, "y");
  const Shape sx = shape_of(x), sy = shape_of(y);
  if (sx.empty() || sy.empty() || sx.size() != sy.size() || !std::equal(sx.begin(), sx.end() - 1, sy.begin()))
    fail("gguf_dot: x ", shape_str(sx), " and y ", shape_str(sy),
         " must be byte rows with the same leading shape ([bytes] or [..., bytes])");
  if (sx.size() == 1) {
    float d;
    {
      pyb::gil_scoped_release nogil;
      d = gguf::dot(t.type, bytes_of(x), bytes_of(y));
    }
    return pyb::float_(d);
  }
  const Shape rows_shape(sx.begin(), sx.end() - 1);
  auto out = new_array<float>(rows_shape);
  const auto rows = static_cast<std::size_t>(numel(rows_shape));
  const auto bx = static_cast<std::size_t>(sx.back()), by = static_cast<std::size_t>(sy.back());
  const auto* px = reinterpret_cast<const std::byte*>(x.data());
  const auto* py_ = reinterpret_cast<const std::byte*>(y.data());
  float* dst = out.mutable_data();
  {
    pyb::gil_scoped_release nogil;
    for (std::size_t r = 0; r < rows; ++r) dst[r] = gguf::dot(t.type, {px + r * bx, bx}, {py_ + r * by, by});
  }
  return out;
}

int64_t gguf_first_invalid_block(const std::string& type, const pyb::object& data_obj) {
  const gguf::TypeTraits& t = gguf::traits(type);
  const carray<uint8_t> data = as_byte_array(data_obj, "data");
  return gguf::first_invalid_block(t.type, bytes_of(data));
}

std::string traits_repr(const gguf::TypeTraits& t) {
  return "GgufTypeInfo(name='" + std::string(t.name) + "', ggml_type=" + std::to_string(t.ggml_type) +
         ", block_elems=" + std::to_string(t.block_elems) + ", block_bytes=" + std::to_string(t.block_bytes) +
         ", dot_type=" + (t.dot_type ? "'" + std::string(gguf::traits(*t.dot_type).name) + "'" : "None") + ")";
}

}  // namespace

void bind_formats_gguf(pyb::module_& m) {
  pyb::class_<gguf::TypeTraits>(m, "GgufTypeInfo",
                                "One GGUF block format: its ggml name and id, block geometry and dot-product partner.")
      .def_property_readonly("name", [](const gguf::TypeTraits& t) { return std::string(t.name); },
                             "ggml's name, e.g. 'q4_0', 'q4_K', 'iq4_nl', 'mxfp4'.")
      .def_readonly("ggml_type", &gguf::TypeTraits::ggml_type, "ggml's enum ggml_type value (the GGUF tensor type id).")
      .def_readonly("block_elems", &gguf::TypeTraits::block_elems, "Values per block: 32, or 256 for the K-quants.")
      .def_readonly("block_bytes", &gguf::TypeTraits::block_bytes, "Bytes per block.")
      .def_property_readonly(
          "dot_type",
          [](const gguf::TypeTraits& t) -> std::optional<std::string> {
            if (!t.dot_type) return std::nullopt;
            return std::string(gguf::traits(*t.dot_type).name);
          },
          "Name of the format gguf_dot pairs this one with (the activation side), or None (q8_1, q8_K).")
      .def_readonly("ggml_dequantize", &gguf::TypeTraits::ggml_dequantize,
                    "False for q8_1, which ggml cannot dequantize (fixq's is d * q, like q8_0).")
      .def("__repr__", &traits_repr);

  m.def(
      "gguf_types", [] { return std::vector<gguf::TypeTraits>(gguf::all_types().begin(), gguf::all_types().end()); },
      "Every GGUF block format fixq implements, in ggml type-id order.");
  m.def(
      "gguf_type_info", [](const std::string& name) { return gguf::traits(name); }, pyb::arg("type"),
      "The GgufTypeInfo of a format named as ggml names it ('q4_0', 'q4_K', ...); ValueError lists the known names.");
  m.def(
      "gguf_packed_size", [](const std::string& type, const Shape& shape) { return gguf::packed_size(gguf::traits(type).type, shape); },
      pyb::arg("type"), pyb::arg("shape"),
      "Bytes a float array of this shape packs into (row by row along the last axis, whose extent must be a\n"
      "multiple of the block).");
  m.def(
      "gguf_packed_size", [](const std::string& type, int64_t n) { return gguf::packed_size(gguf::traits(type).type, n); },
      pyb::arg("type"), pyb::arg("n"), "Bytes n values pack into; n must be a multiple of the block.");

  m.def("gguf_quantize", &gguf_quantize, pyb::arg("type"), pyb::arg("x"),
        "Packs float32 values x [..., n] into bytes [..., n / block_elems * block_bytes] (uint8), exactly the\n"
        "bytes of ggml's quantize_row_<type>_ref applied to each row.\n\n"
        "n must be a multiple of the block size. Other real dtypes are converted to float32 first (float64\n"
        "rounds to nearest). NaN or infinity raises ValueError naming the element (ggml's formats hold finite\n"
        "values only). A block whose scale overflows fp16 (e.g. q4_0 of |x| > 8 * 65504) is stored as ggml\n"
        "stores it, as an infinite scale: check gguf_first_invalid_block() if that can happen.");
  m.def("gguf_dequantize", &gguf_dequantize, pyb::arg("type"), pyb::arg("data"), pyb::arg("shape") = pyb::none(),
        "Unpacks GGUF blocks to float32, bit for bit ggml's dequantize_row_<type>.\n\n"
        "data is a uint8 array or a bytes-like object. Without shape, its last axis holds whole blocks and\n"
        "the result is [..., m / block_bytes * block_elems]; with shape, data is read as one C-order buffer\n"
        "that must hold exactly gguf_packed_size(type, shape) bytes, and the result has that shape.\n"
        "Blocks with a NaN or infinite scale give NaN/inf values, as in ggml.");
  m.def("gguf_dot", &gguf_dot, pyb::arg("type"), pyb::arg("x"), pyb::arg("y"),
        "The dot product of packed x (of `type`) and packed y (of gguf_type_info(type).dot_type) as ggml's\n"
        "generic vec_dot computes it, bit for bit.\n\n"
        "1-D byte arrays give one float; [..., bytes] arrays with the same leading shape give one float32 per\n"
        "row. Each row pair must hold whole blocks of the same number of values.");
  m.def("gguf_first_invalid_block", &gguf_first_invalid_block, pyb::arg("type"), pyb::arg("data"),
        "Index of the first block (counting over the whole buffer in C order) whose scale fields are NaN or\n"
        "infinite, or -1: the check of ggml_validate_row_data.");
}

}  // namespace fixq::py
