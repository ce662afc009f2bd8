// fixq.formats, low-precision float part: float8/6/4, bfloat16 and float16 codes
// (fixq/lowp.h) on numpy arrays, element for element in the input's shape, and the dense
// packing of 4- and 6-bit codes. Rounding, overflow, NaN and -0 follow the header exactly.
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bind_formats_util.h"
#include "fixq/lowp.h"

namespace fixq::py {

namespace {

template <class Code>
pyb::array encode_as(LowpType t, const carray<float>& x, Overflow overflow) {
  auto out = new_array<Code>(shape_of(x));
  const float* src = x.data();
  Code* dst = out.mutable_data();
  const auto n = static_cast<int64_t>(x.size());
  {
    pyb::gil_scoped_release nogil;
    lowp_encode(t, src, n, dst, overflow);
  }
  return out;
}

pyb::array lowp_encode_array(const std::string& type, const pyb::object& x_obj, const std::string& overflow) {
  const LowpType t = parse_lowp_type(type);
  const Overflow o = parse_overflow(overflow);
  const carray<float> x = as_float_array(x_obj, "x");
  return lowp_info(t).bits == 16 ? encode_as<uint16_t>(t, x, o) : encode_as<uint8_t>(t, x, o);
}

template <class Code>
pyb::array_t<float> decode_as(LowpType t, const pyb::object& codes_obj) {
  const std::string what = "codes (" + std::string(lowp_info(t).name) + " codes are " +
                           (sizeof(Code) == 2 ? "uint16" : "uint8") + ")";
  const carray<Code> codes = as_array<Code>(codes_obj, what.c_str());
  auto out = new_array<float>(shape_of(codes));
  const Code* src = codes.data();
  float* dst = out.mutable_data();
  const auto n = static_cast<int64_t>(codes.size());
  {
    pyb::gil_scoped_release nogil;
    lowp_decode(t, src, n, dst);
  }
  return out;
}

pyb::array_t<float> lowp_decode_array(const std::string& type, const pyb::object& codes_obj) {
  const LowpType t = parse_lowp_type(type);
  return lowp_info(t).bits == 16 ? decode_as<uint16_t>(t, codes_obj) : decode_as<uint8_t>(t, codes_obj);
}

pyb::array_t<uint8_t> pack_codes_array(int bits, const pyb::object& codes_obj) {
  const carray<uint8_t> codes = as_array<uint8_t>(codes_obj, "codes");
  const auto n = static_cast<int64_t>(codes.size());
  auto out = new_array<uint8_t>({packed_code_bytes(bits, n)});
  const uint8_t* src = codes.data();
  uint8_t* dst = out.mutable_data();
  {
    pyb::gil_scoped_release nogil;
    pack_codes(bits, src, n, dst);
  }
  return out;
}

pyb::array_t<uint8_t> unpack_codes_array(int bits, const pyb::object& packed_obj, int64_t n) {
  const carray<uint8_t> packed = as_byte_array(packed_obj, "packed");
  const int64_t want = packed_code_bytes(bits, n);
  if (packed.size() != want)
    fail(n, " codes of ", bits, " bits take ", want, " packed bytes; got ", packed.size());
  auto out = new_array<uint8_t>({n});
  const uint8_t* src = packed.data();
  uint8_t* dst = out.mutable_data();
  {
    pyb::gil_scoped_release nogil;
    unpack_codes(bits, src, n, dst);
  }
  return out;
}

std::string info_repr(const LowpInfo& i) {
  return "LowpTypeInfo(name='" + std::string(i.name) + "', bits=" + std::to_string(i.bits) +
         ", exponent_bits=" + std::to_string(i.exponent_bits) + ", mantissa_bits=" + std::to_string(i.mantissa_bits) +
         ", bias=" + std::to_string(i.bias) + ", max=" + pyb::repr(pyb::float_(i.max)).cast<std::string>() + ")";
}

}  // namespace

void bind_formats_lowp(pyb::module_& m) {
  pyb::class_<LowpInfo>(m, "LowpTypeInfo", "Parameters of one low-precision float type.")
      .def_property_readonly("name", [](const LowpInfo& i) { return std::string(i.name); },
                             "'e4m3fn', 'e4m3fnuz', 'e5m2', 'e5m2fnuz', 'e8m0fnu', 'e4m3b11fnuz', 'e2m3fn', 'e3m2fn',\n"
                             "'e2m1fn', 'bf16' or 'fp16'.")
      .def_readonly("bits", &LowpInfo::bits, "Code width: 8, 6, 4 or 16.")
      .def_readonly("exponent_bits", &LowpInfo::exponent_bits, "Exponent field width.")
      .def_readonly("mantissa_bits", &LowpInfo::mantissa_bits, "Mantissa field width.")
      .def_readonly("bias", &LowpInfo::bias, "Exponent bias: a normal code is worth 2^(e - bias) * 1.m.")
      .def_readonly("is_signed", &LowpInfo::is_signed, "False only for e8m0fnu.")
      .def_readonly("has_inf", &LowpInfo::has_inf, "Whether the type has infinities (e5m2, bf16, fp16).")
      .def_readonly("has_nan", &LowpInfo::has_nan, "Whether the type has NaN (not the float6/float4 types).")
      .def_readonly("has_negative_zero", &LowpInfo::has_negative_zero, "Whether -0 has its own code (not fnuz, e8m0).")
      .def_readonly("max", &LowpInfo::max, "Largest finite value.")
      .def_readonly("min_positive", &LowpInfo::min_positive,
                    "Smallest positive value (a subnormal where the type has them).")
      .def("__repr__", &info_repr);

  m.def(
      "lowp_types",
      [] {
        std::vector<LowpInfo> v;
        for (int t = 0; t < kLowpTypeCount; ++t) v.push_back(lowp_info(static_cast<LowpType>(t)));
        return v;
      },
      "Every low-precision float type, float8 first, then float6, float4, bf16, fp16.");
  m.def(
      "lowp_type_info", [](const std::string& name) { return lowp_info(parse_lowp_type(name)); }, pyb::arg("type"),
      "The LowpTypeInfo of a type by name; ValueError lists the known names.");

  m.def("lowp_encode", &lowp_encode_array, pyb::arg("type"), pyb::arg("x"), pyb::arg("overflow") = "default",
        "Encodes float32 values to codes of the same shape: uint16 for bf16/fp16, else uint8 (float6/float4\n"
        "codes in the low 6/4 bits, sign at bit 5/3).\n\n"
        "Rounds to the nearest value, ties to the even code (e8m0 rounds ties up). Beyond the largest finite\n"
        "value and for +-inf: overflow='default' gives +-inf where the type has one (e5m2, bf16, fp16), else\n"
        "NaN, else +-max (float6/float4); overflow='saturate' gives +-max, infinities included. NaN gives the\n"
        "type's canonical NaN with its sign kept where the type has signed NaNs; NaN into float6/float4\n"
        "(no NaN) raises ValueError naming the element. e8m0: zero and negatives give NaN (default) or 0x00\n"
        "(saturate). Other real dtypes are converted to float32 first.");
  m.def("lowp_decode", &lowp_decode_array, pyb::arg("type"), pyb::arg("codes"),
        "Decodes codes (uint8 for the 8/6/4-bit types, uint16 for bf16/fp16) to float32 of the same shape,\n"
        "exactly. NaN codes give the quiet NaN with the code's sign (bf16/fp16 keep their payload); a uint8\n"
        "code with bits above the type's width raises ValueError naming its index.");
  m.def(
      "packed_code_bytes", [](int bits, int64_t n) { return packed_code_bytes(bits, n); }, pyb::arg("bits"),
      pyb::arg("n"), "Bytes that n codes of 2, 4, 6 or 8 bits take densely packed: ceil(n * bits / 8).");
  m.def("pack_codes", &pack_codes_array, pyb::arg("bits"), pyb::arg("codes"),
        "Packs uint8 codes (any shape, read in C order) of 2, 4, 6 or 8 bits densely into a 1-D uint8 array:\n"
        "code i occupies bits [bits*i, bits*i + bits) of a little-endian bit string (4 bits: low nibble\n"
        "first); unused bits of the last byte are zero. A code >= 2^bits raises ValueError.");
  m.def("unpack_codes", &unpack_codes_array, pyb::arg("bits"), pyb::arg("packed"), pyb::arg("n"),
        "Unpacks n codes of 2, 4, 6 or 8 bits from exactly packed_code_bytes(bits, n) bytes into a 1-D uint8\n"
        "array; nonzero unused bits in the last byte raise ValueError.");
}

}  // namespace fixq::py
