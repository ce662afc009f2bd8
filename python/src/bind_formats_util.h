// python/src/bind_formats_util.h — what the parts of the fixq.formats submodule share:
// the entry point of each part and the shape rules of formats that pack the last axis.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "bindings.h"

namespace fixq::py {

// Each part of fixq.formats adds its functions and classes to the submodule.
void bind_formats_gguf(pybind11::module_& m);
void bind_formats_lowp(pybind11::module_& m);
void bind_formats_mx(pybind11::module_& m);
void bind_formats_packed(pybind11::module_& m);
void bind_formats_registry(pybind11::module_& m);

// Packed bytes: a numpy uint8 array (any shape, read in C order) or a bytes-like object
// (bytes, bytearray, memoryview), taken without copying where possible.
inline carray<uint8_t> as_byte_array(const pyb::handle& obj, const char* what) {
  if (pyb::isinstance<pyb::bytes>(obj) || pyb::isinstance<pyb::bytearray>(obj) ||
      pyb::isinstance<pyb::memoryview>(obj)) {
    return as_array<uint8_t>(pyb::module_::import("numpy").attr("frombuffer")(obj, "uint8"), what);
  }
  return as_array<uint8_t>(obj, what);
}

// Formats that pack runs of `elems` values of the last axis into `bytes` bytes map
// values [..., n] to bytes [..., n / elems * bytes] and back, so a row keeps its row.
// The value shape's last extent must be a multiple of elems (a 0-d scalar never is).
inline Shape packed_shape(const Shape& values, int64_t elems, int64_t bytes, const std::string& format) {
  if (values.empty() || values.back() % elems != 0)
    fail(format, " packs the last axis in blocks of ", elems, " values; shape ", shape_str(values),
         values.empty() ? " has no axis" : "'s last dimension is not a multiple of " + std::to_string(elems));
  Shape out = values;
  out.back() = values.back() / elems * bytes;
  return out;
}

// The inverse: packed bytes [..., m] (m a multiple of bytes) hold values [..., m / bytes * elems].
inline Shape unpacked_shape(const Shape& packed, int64_t elems, int64_t bytes, const std::string& format) {
  if (packed.empty() || packed.back() % bytes != 0)
    fail(format, " blocks take ", bytes, " bytes each; the packed array of shape ", shape_str(packed),
         packed.empty() ? " has no axis" : "'s last dimension is not a whole number of blocks",
         " (pass shape= to read it as one flat buffer)");
  Shape out = packed;
  out.back() = packed.back() / bytes * elems;
  return out;
}

}  // namespace fixq::py
