// python/src/bindings.h — the pieces of the _fixq extension and the helpers they share.
//
// Each bind_*.cpp adds one part of the library to the module; module.cpp calls them all.
// The helpers here turn numpy arrays into fixq's (pointer, Shape) pairs without copying
// when the array is already C-contiguous with the right dtype.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "fixq/error.h"
#include "fixq/tensor.h"

namespace fixq::py {

namespace pyb = pybind11;

void bind_gru(pybind11::module_& m);
void bind_gemm(pybind11::module_& m);
void bind_quant(pybind11::module_& m);
void bind_formats(pybind11::module_& m);
void bind_metrics(pybind11::module_& m);
// Whole models (model.h): the ONNX import and the float forward.
void bind_model(pybind11::module_& m);
// Called by bind_quant: fixed-point arithmetic (arith.h) and calibration observers (calib.h).
void bind_arith(pybind11::module_& m);
void bind_calib(pybind11::module_& m);
// Called by bind_gru: the integer GRU (qgru.h).
void bind_qgru(pybind11::module_& m);
// Called by bind_qgru: post-training quantization and auto bits (gru_ptq.h).
void bind_ptq(pybind11::module_& m);

// A C-contiguous array of T; forcecast converts other dtypes / layouts (copying only then).
template <class T>
using carray = pyb::array_t<T, pyb::array::c_style | pyb::array::forcecast>;

// The shape of a numpy array as a fixq::Shape.
inline Shape shape_of(const pyb::array& a) {
  Shape s(static_cast<size_t>(a.ndim()));
  for (pyb::ssize_t i = 0; i < a.ndim(); ++i) s[static_cast<size_t>(i)] = static_cast<int64_t>(a.shape(i));
  return s;
}

// A new C-contiguous numpy array of T with the given shape (uninitialized).
template <class T>
pyb::array_t<T> new_array(const Shape& shape) {
  std::vector<pyb::ssize_t> dims(shape.begin(), shape.end());
  return pyb::array_t<T>(dims);
}

// "int8", "float32", ... for error messages.
inline std::string dtype_name(const pyb::dtype& dt) { return pyb::str(dt.attr("name")).cast<std::string>(); }
template <class T>
std::string dtype_name() {
  return dtype_name(pyb::dtype::of<T>());
}

// Hands a vector to numpy without copying: the array owns the vector's buffer.
template <class T>
pyb::array_t<T> to_numpy(std::vector<T>&& v, const Shape& shape) {
  if (static_cast<int64_t>(v.size()) != numel(shape)) fail("internal: ", v.size(), " values for shape ", shape_str(shape));
  auto heap = std::make_unique<std::vector<T>>(std::move(v));
  T* data = heap->data();
  pyb::capsule owner(heap.get(), [](void* p) { delete static_cast<std::vector<T>*>(p); });
  heap.release();
  std::vector<pyb::ssize_t> dims(shape.begin(), shape.end());
  return pyb::array_t<T>(dims, data, owner);
}

// Takes `obj` as a C-contiguous array of T without copying when it already is one, and
// converts it (one copy) otherwise. `what` names the argument in the error message.
// Refuses silently lossy conversions: a float array for an integer T, or an integer
// array of a wider / differently signed type, raises ValueError instead of wrapping.
template <class T>
carray<T> as_array(const pyb::handle& obj, const char* what) {
  pyb::array a = pyb::array::ensure(obj);
  if (!a) fail(what, ": expected an array-like of ", dtype_name<T>());
  if constexpr (std::is_integral_v<T>) {
    const pyb::dtype dt = a.dtype();
    const char kind = dt.kind();
    const bool same = dt.is(pyb::dtype::of<T>()) || (kind == (std::is_signed_v<T> ? 'i' : 'u') &&
                                                   dt.itemsize() == static_cast<pyb::ssize_t>(sizeof(T)));
    if (!same) {
      fail(what, ": expected dtype ", dtype_name<T>(), ", got ",
           dtype_name(dt), " (convert explicitly, e.g. with .astype, to choose how to round or clip)");
    }
  }
  return carray<T>::ensure(a);
}

// Float data: any real numeric dtype converts (ints exactly, float64 rounds to nearest).
inline carray<float> as_float_array(const pyb::handle& obj, const char* what) {
  pyb::array a = pyb::array::ensure(obj);
  if (!a) fail(what, ": expected an array-like of float32");
  const char kind = a.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b') {
    fail(what, ": expected a real numeric array, got dtype ", dtype_name(a.dtype()));
  }
  return carray<float>::ensure(a);
}

// Any integer array-like as int32: int32 is taken as is; other integer dtypes are converted
// after checking that every value fits (no silent wrap); floats are refused.
inline carray<int32_t> as_int32_array(const pyb::handle& obj, const char* what) {
  pyb::array a = pyb::array::ensure(obj);
  if (!a) fail(what, ": expected an array-like of integers");
  const pyb::dtype dt = a.dtype();
  if (dt.kind() != 'i' && dt.kind() != 'u' && !(dt.kind() == 'b')) {
    if (a.size() == 0) return carray<int32_t>::ensure(a);  // [] parses as float64
    fail(what, ": expected integers, got dtype ", dtype_name(dt));
  }
  if (dt.itemsize() >= 4 && !(dt.kind() == 'i' && dt.itemsize() == 4)) {
    // Compare in numpy's own arithmetic, which is exact for every integer dtype.
    if (a.size() > 0) {
      const pyb::object lo = a.attr("min")(), hi = a.attr("max")();
      if (lo < pyb::int_(INT32_MIN) || hi > pyb::int_(INT32_MAX))
        fail(what, ": values must fit in int32, got range [", pyb::str(lo).cast<std::string>(), ", ",
             pyb::str(hi).cast<std::string>(), "]");
    }
  }
  return carray<int32_t>::ensure(a);
}

// A file path from str, bytes or os.PathLike (pathlib.Path), as open() takes it.
inline std::string path_arg(const pyb::handle& obj) {
  const pyb::object p = pyb::module_::import("os").attr("fsdecode")(obj);
  return p.cast<std::string>();
}

// Requires a given rank, naming the argument and the shape it got.
inline void require_rank(const pyb::array& a, int rank, const char* what) {
  if (a.ndim() != rank) fail(what, ": expected a ", rank, "-D array, got shape ", shape_str(shape_of(a)));
}

}  // namespace fixq::py
