// fixq.formats, the registry (fixq/formats.h): every format by name, encode / decode of a
// whole array through any of them, and the .bin container (fixq/encoded_file.h) that
// `fixq formats quantize` writes.
#include <pybind11/stl.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bind_formats_util.h"
#include "fixq/encoded_file.h"
#include "fixq/formats.h"

namespace fixq::py {

namespace {

std::vector<std::byte> payload_arg(const pyb::object& obj) {
  const carray<uint8_t> a = as_byte_array(obj, "payload");
  const auto* p = reinterpret_cast<const std::byte*>(a.data());
  return {p, p + a.size()};
}

pyb::bytes payload_bytes(const EncodedTensor& t) {
  return {reinterpret_cast<const char*>(t.payload.data()), t.payload.size()};
}

EncodedTensor encode_array(const std::string& format, const pyb::object& x_obj, const std::string& overflow) {
  const carray<float> x = as_float_array(x_obj, "x");
  const Overflow o = parse_overflow(overflow);
  const Shape shape = shape_of(x);
  const float* src = x.data();
  pyb::gil_scoped_release nogil;
  return encode(format, src, shape, {o});
}

pyb::array_t<float> decode_tensor(const EncodedTensor& t) {
  std::vector<float> x;
  {
    pyb::gil_scoped_release nogil;
    x = decode(t);
  }
  return to_numpy(std::move(x), t.shape);
}

std::string tensor_repr(const EncodedTensor& t) {
  return "EncodedTensor(format='" + t.format + "', shape=" + shape_str(t.shape) + ", " +
         std::to_string(t.payload.size()) + " payload bytes)";
}

std::string format_repr(const Format& f) {
  return "Format(name='" + f.name + "', family='" + to_string(f.family) + "')";
}

}  // namespace

void bind_formats_registry(pyb::module_& m) {
  pyb::class_<Format>(m, "Format", "One format of the registry: its names, family and description.")
      .def_readonly("name", &Format::name, "The name a .bin file stores, e.g. 'q4_K', 'e4m3fn', 'int4_g32'.")
      .def_readonly("aliases", &Format::aliases, "Other names it is found by, e.g. 'float8_e4m3fn'.")
      .def_property_readonly("family", [](const Format& f) { return to_string(f.family); },
                             "'gguf', 'float', 'mx' or 'int_groups'.")
      .def_readonly("description", &Format::description, "One line.")
      .def(
          "payload_bytes", [](const Format& f, const Shape& shape) { return f.payload_bytes(shape); }, pyb::arg("shape"),
          "Bytes the values of this shape take; ValueError for a shape the format cannot hold.")
      .def("__repr__", &format_repr);

  pyb::class_<EncodedTensor>(
      m, "EncodedTensor",
      "Values of a shape encoded in a named format: what encode() returns, decode() reads and a .bin file holds.")
      .def(pyb::init([](const std::string& format, const Shape& shape, const pyb::object& payload) {
             return EncodedTensor{format, shape, payload_arg(payload)};
           }),
           pyb::arg("format"), pyb::arg("shape"), pyb::arg("payload"),
           "From its parts (payload: bytes-like or a uint8 array); decode() checks them.")
      .def_readonly("format", &EncodedTensor::format, "The format's name.")
      .def_property_readonly(
          "shape", [](const EncodedTensor& t) { return pyb::tuple(pyb::cast(t.shape)); }, "The values' shape.")
      .def_property_readonly("payload", &payload_bytes, "The encoded bytes.")
      .def("decode", &decode_tensor, "decode(self).")
      .def("__repr__", &tensor_repr);

  m.def(
      "all_formats", [] { return all_formats(); },
      "Every format of the registry: GGUF block formats, low-precision floats, OCP MX blocks, integer groups.");
  m.def(
      "find_format", [](const std::string& name) { return find_format(name); }, pyb::arg("name"),
      "The Format of a name or alias; ValueError lists the names.");
  m.def("encode", &encode_array, pyb::arg("format"), pyb::arg("x"), pyb::arg("overflow") = "default",
        "x (any shape; taken as float32) encoded in the named format (a name or alias of all_formats()), as\n"
        "`fixq formats quantize` encodes it. overflow='saturate' saturates the low-precision floats to +-max; other\n"
        "formats refuse it, except MX, which always clamps.");
  m.def("decode", &decode_tensor, pyb::arg("t"),
        "The float32 values of an EncodedTensor, of its shape; ValueError unless the payload has exactly the\n"
        "size and contents its format needs for that shape.");
  m.def(
      "save_encoded", [](const pyb::object& path, const EncodedTensor& t) { save_encoded(path_arg(path), t); },
      pyb::arg("path"), pyb::arg("t"),
      "Writes t as a .bin file (fixq's container: format name, shape, payload), which `fixq formats\n"
      "dequantize` reads; through a temporary file, so a failure leaves an existing file untouched.");
  m.def(
      "load_encoded", [](const pyb::object& path) { return load_encoded(path_arg(path)); }, pyb::arg("path"),
      "Reads a .bin file, e.g. from `fixq formats quantize`; every header field is checked (decode() checks\n"
      "the payload).");
}

}  // namespace fixq::py
