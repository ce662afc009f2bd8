// fixq.formats, OCP MX part (fixq/lowp.h, Part 4): blocks of 32 values along the last
// axis sharing one e8m0 scale, either as fixq's packed block bytes or split into the
// scale codes and one element code per value.
#include <pybind11/stl.h>

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bind_formats_util.h"
#include "fixq/lowp.h"

namespace fixq::py {

namespace {

pyb::array_t<uint8_t> mx_quantize_array(const std::string& type, const pyb::object& x_obj) {
  const MxType t = parse_mx_type(type);
  const MxInfo& info = mx_info(t);
  const carray<float> x = as_float_array(x_obj, "x");
  auto out = new_array<uint8_t>(packed_shape(shape_of(x), kMxBlockSize, info.block_bytes, std::string(info.name)));
  const float* src = x.data();
  uint8_t* dst = out.mutable_data();
  const auto n = static_cast<int64_t>(x.size());
  {
    pyb::gil_scoped_release nogil;
    mx_quantize(t, src, n, dst);
  }
  return out;
}

pyb::array_t<float> mx_dequantize_array(const std::string& type, const pyb::object& blocks_obj,
                                        const std::optional<Shape>& shape) {
  const MxType t = parse_mx_type(type);
  const MxInfo& info = mx_info(t);
  const carray<uint8_t> blocks = as_byte_array(blocks_obj, "blocks");
  Shape out_shape;
  if (shape) {
    const Shape want = packed_shape(*shape, kMxBlockSize, info.block_bytes, std::string(info.name));
    if (blocks.size() != numel(want))
      fail(info.name, " data of shape ", shape_str(*shape), " must be ", numel(want), " bytes; got ", blocks.size());
    out_shape = *shape;
  } else {
    out_shape = unpacked_shape(shape_of(blocks), kMxBlockSize, info.block_bytes, std::string(info.name));
  }
  auto out = new_array<float>(out_shape);
  const uint8_t* src = blocks.data();
  float* dst = out.mutable_data();
  const int64_t n = numel(out_shape);
  {
    pyb::gil_scoped_release nogil;
    mx_dequantize(t, src, n, dst);
  }
  return out;
}

// Element codes are uint8, except MXINT8's two's complement int8.
pyb::array new_elements(MxType t, const Shape& shape) {
  if (t == MxType::Int8) return new_array<int8_t>(shape);
  return new_array<uint8_t>(shape);
}

std::tuple<pyb::array_t<uint8_t>, pyb::array> mx_encode_array(const std::string& type, const pyb::object& x_obj) {
  const MxType t = parse_mx_type(type);
  const MxInfo& info = mx_info(t);
  const carray<float> x = as_float_array(x_obj, "x");
  const Shape shape = shape_of(x);
  auto scales = new_array<uint8_t>(packed_shape(shape, kMxBlockSize, 1, std::string(info.name)));
  pyb::array elements = new_elements(t, shape);
  const float* src = x.data();
  uint8_t* s = scales.mutable_data();
  auto* e = static_cast<uint8_t*>(elements.mutable_data());
  const auto n = static_cast<int64_t>(x.size());
  {
    pyb::gil_scoped_release nogil;
    mx_encode(t, src, n, s, e);
  }
  return {scales, elements};
}

pyb::array_t<float> mx_decode_array(const std::string& type, const pyb::object& scales_obj,
                                    const pyb::object& elements_obj) {
  const MxType t = parse_mx_type(type);
  const MxInfo& info = mx_info(t);
  const carray<uint8_t> scales = as_array<uint8_t>(scales_obj, "scales");
  // MXINT8 elements are int8 values; the bytes are the codes the block stores.
  pyb::array elements;
  if (t == MxType::Int8) {
    elements = as_array<int8_t>(elements_obj, "elements (mxint8 elements are int8)");
  } else {
    elements = as_array<uint8_t>(elements_obj, "elements (MX float element codes are uint8)");
  }
  const Shape ss = shape_of(scales), es = shape_of(elements);
  if (es.empty() || ss.size() != es.size() || !std::equal(ss.begin(), ss.end() - 1, es.begin()) ||
      es.back() != ss.back() * kMxBlockSize)
    fail(info.name, ": elements ", shape_str(es), " must be [..., 32 * nb] for scales [..., nb], got scales ",
         shape_str(ss));
  auto out = new_array<float>(es);
  const uint8_t* s = scales.data();
  const auto* e = static_cast<const uint8_t*>(elements.data());
  float* dst = out.mutable_data();
  const auto n = static_cast<int64_t>(elements.size());
  {
    pyb::gil_scoped_release nogil;
    mx_decode(t, s, e, n, dst);
  }
  return out;
}

std::string info_repr(const MxInfo& i) {
  return "MxTypeInfo(name='" + std::string(i.name) + "', element_bits=" + std::to_string(i.element_bits) +
         ", emax=" + std::to_string(i.emax) + ", block_bytes=" + std::to_string(i.block_bytes) + ")";
}

}  // namespace

void bind_formats_mx(pyb::module_& m) {
  m.attr("MX_BLOCK_SIZE") = kMxBlockSize;
  pyb::class_<MxInfo>(m, "MxTypeInfo", "Parameters of one OCP MX (microscaling) format.")
      .def_property_readonly("name", [](const MxInfo& i) { return std::string(i.name); },
                             "'mxfp8_e4m3', 'mxfp8_e5m2', 'mxfp6_e2m3', 'mxfp6_e3m2', 'mxfp4' or 'mxint8'.")
      .def_readonly("element_bits", &MxInfo::element_bits, "Bits per element: 8, 6 or 4.")
      .def_readonly("emax", &MxInfo::emax, "Exponent of the element type's largest normal (e4m3 8, ..., int8 0).")
      .def_readonly("block_bytes", &MxInfo::block_bytes, "1 scale byte + 32 * element_bits / 8.")
      .def("__repr__", &info_repr);

  m.def(
      "mx_types",
      [] {
        std::vector<MxInfo> v;
        for (int t = 0; t < kMxTypeCount; ++t) v.push_back(mx_info(static_cast<MxType>(t)));
        return v;
      },
      "Every OCP MX format.");
  m.def(
      "mx_type_info", [](const std::string& name) { return mx_info(parse_mx_type(name)); }, pyb::arg("type"),
      "The MxTypeInfo of a format by name ('ocp_mxfp4', its name among all formats, is accepted for 'mxfp4');\n"
      "ValueError lists the names.");
  m.def(
      "mx_shared_exponent", [](const std::string& type, float amax) { return mx_shared_exponent(parse_mx_type(type), amax); },
      pyb::arg("type"), pyb::arg("amax"),
      "The shared exponent s of a block whose largest magnitude is amax (finite, >= 0):\n"
      "clamp(floor(log2(amax)) - emax, -127, 127), -127 for amax = 0. The block's scale is 2^s, stored as the\n"
      "e8m0 code s + 127.");
  m.def("mx_quantize", &mx_quantize_array, pyb::arg("type"), pyb::arg("x"),
        "Quantizes float32 x [..., n] (n a multiple of 32) to MX blocks [..., n / 32 * block_bytes] (uint8):\n"
        "per block the e8m0 scale byte, then the 32 element codes densely packed (4-bit: element 2j in the\n"
        "low nibble of byte j). Elements round to nearest even and clamp to +-max normal. A block holding NaN\n"
        "or inf gets the NaN scale 0xFF and zero elements. This is fixq's layout, not ggml's mxfp4.");
  m.def("mx_dequantize", &mx_dequantize_array, pyb::arg("type"), pyb::arg("blocks"), pyb::arg("shape") = pyb::none(),
        "Dequantizes MX blocks to float32: element value times 2^s, one float32 rounding; all NaN for a\n"
        "block with scale 0xFF. Without shape, the last axis of blocks holds whole blocks and the result is\n"
        "[..., m / block_bytes * 32]; with shape, blocks is one C-order buffer of exactly the bytes that\n"
        "shape packs into.");
  m.def("mx_encode", &mx_encode_array, pyb::arg("type"), pyb::arg("x"),
        "Like mx_quantize, but returns (scales, elements) unpacked: scales uint8 [..., n / 32] (the e8m0\n"
        "codes s + 127, 0xFF for a NaN block) and elements [..., n], one code per value (uint8 element codes\n"
        "of the float types, int8 values P of mxint8, worth P / 64).");
  m.def("mx_decode", &mx_decode_array, pyb::arg("type"), pyb::arg("scales"), pyb::arg("elements"),
        "The inverse of mx_encode: float32 [..., n] from scales [..., n / 32] and elements [..., n]. An\n"
        "element code that does not fit the element width raises ValueError.");
}

}  // namespace fixq::py
