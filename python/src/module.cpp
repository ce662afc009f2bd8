// python/src/module.cpp — the _fixq extension module: fixq's C++ API for Python.
//
// fixq::Error (bad input) becomes ValueError with the library's own one-line message, and
// fixq::IoError (the operating system failed to open, read or write a file) becomes
// OSError(errno, message): Python picks the subclass from errno (FileNotFoundError,
// PermissionError, IsADirectoryError, ...), as for its own open(). An old spelling the
// library still reads (fixq/error.h) becomes a DeprecationWarning. The pure-Python package
// `fixq` (python/fixq/__init__.py and its modules) re-exports everything.
#include "bindings.h"
#include "fixq/file_kind.h"
#include "fixq/version.h"

PYBIND11_MODULE(_fixq, m) {
  m.doc() = "fixq: integer-only quantized inference (C++ core). Import the `fixq` package, not this module.";
  m.attr("__version__") = std::string(fixq::version());
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const fixq::IoError& e) {
      if (e.sys_errno() != 0) {
        // Raised with the arguments (errno, message), OSError's constructor maps errno to
        // its subclass.
        const pybind11::tuple args = pybind11::make_tuple(e.sys_errno(), e.what());
        PyErr_SetObject(PyExc_OSError, args.ptr());
      } else {
        PyErr_SetString(PyExc_OSError, e.what());
      }
    } catch (const fixq::Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  fixq::set_deprecation_handler([](const std::string& note) {
    const pybind11::gil_scoped_acquire gil;
    if (PyErr_WarnEx(PyExc_DeprecationWarning, note.c_str(), 2) < 0) throw pybind11::error_already_set();  // -W error
  });
  m.def(
      "file_kind", [](const pybind11::object& path) { return fixq::to_string(fixq::file_kind(fixq::py::path_arg(path))); },
      pybind11::arg("path"),
      "What the file at path is, by its bytes: 'npy', 'safetensors', 'gru-float' (fixq's float GRU file),\n"
      "'gru-quantized' (.fixq), 'gguf', 'encoded-tensor' (a .bin of fixq.formats.save_encoded), 'onnx' or\n"
      "'unknown'. OSError when it cannot be read.");
  fixq::py::bind_quant(m);
  fixq::py::bind_gemm(m);
  fixq::py::bind_gru(m);
  fixq::py::bind_formats(m);
  fixq::py::bind_metrics(m);
  fixq::py::bind_model(m);
}
