// Writing .npy files byte-identical to numpy's np.save, through a temporary file that
// replaces the target only once it is complete.

#include <bit>
#include <string>

#include "io/npy_types.h"
#include "fixq/error.h"
#include "fixq/npy.h"
#include "io/atomic_file.h"

static_assert(std::endian::native == std::endian::little,
              ".npy data is copied byte for byte: fixq assumes a little-endian host");

namespace fixq {
namespace {

// Throws fixq::Error "save_npy: <path>: <what>".
template <class... Args>
[[noreturn]] void fail_file(const std::string& path, const Args&... what) {
  fail("save_npy: ", path, ": ", what...);
}

// numpy's format constants: data starts at a multiple of kArrayAlign, and the header
// leaves room for the first extent to grow to kGrowthAxisMaxDigits digits.
constexpr std::size_t kArrayAlign = 64;
constexpr std::size_t kGrowthAxisMaxDigits = 21;

// Python's repr of the shape tuple: "()", "(3,)", "(2, 3)".
std::string shape_repr(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

// Magic, version, header length and the padded header, as numpy's _write_array_header:
// keys sorted, each "'key': repr(value), ", the growth spaces, then spaces and a newline
// up to the next multiple of kArrayAlign (a whole extra kArrayAlign when already there).
// Version 1.0 unless its 16-bit header length cannot hold the header, then 2.0.
std::string npy_prefix(const std::string& path, const std::string& dtype, const Shape& shape) {
  std::string dict = "{'descr': '" + dtype + "', 'fortran_order': False, 'shape': " +
                     shape_repr(shape) + ", }";
  if (!shape.empty()) dict.append(kGrowthAxisMaxDigits - std::to_string(shape[0]).size(), ' ');
  const std::size_t text_bytes = dict.size() + 1;  // with the final newline
  for (const int version : {1, 2}) {
    const std::size_t len_bytes = version == 1 ? 2 : 4;
    const std::size_t fixed = 8 + len_bytes;  // magic, version, header length
    const std::size_t pad = kArrayAlign - (fixed + text_bytes) % kArrayAlign;
    const std::size_t header_bytes = text_bytes + pad;
    if (header_bytes > (version == 1 ? 0xffffu : 0xffffffffu)) continue;
    std::string out("\x93NUMPY", 6);
    out += static_cast<char>(version);
    out += '\0';
    for (std::size_t i = 0; i < len_bytes; ++i)
      out += static_cast<char>((header_bytes >> (8 * i)) & 0xff);
    out += dict;
    out.append(pad, ' ');
    out += '\n';
    return out;
  }
  fail_file(path, "a header of ", text_bytes, " bytes does not fit even format 2.0");
}

void write_npy(const std::string& path, const std::string& dtype, const Shape& shape,
               const void* data, std::size_t data_bytes) {
  const std::string prefix = npy_prefix(path, dtype, shape);
  write_file_atomically(path, {{prefix.data(), prefix.size()}, {data, data_bytes}}, "save_npy");
}

// Checks dtype and shape and returns the data size in bytes, before any file is touched.
std::size_t checked_data_bytes(const std::string& path, const std::string& dtype,
                               const Shape& shape) {
  try {
    return npy_data_bytes(dtype, shape);
  } catch (const Error& e) {
    fail_file(path, e.what());
  }
}

template <class T>
void save_typed(const std::string& path, const T* data, const Shape& shape,
                const char* dtype) {
  const std::size_t bytes = checked_data_bytes(path, dtype, shape);
  if (bytes > 0 && data == nullptr) fail_file(path, "null data for shape ", shape_str(shape));
  write_npy(path, dtype, shape, data, bytes);
}

}  // namespace

void save_npy(const std::string& path, const NpyArray& array) {
  const std::size_t bytes = checked_data_bytes(path, array.dtype, array.shape);
  if (array.data.size() != bytes)
    fail_file(path, "shape ", shape_str(array.shape), " of ", array.dtype, " needs ", bytes,
              " data bytes, the array holds ", array.data.size());
  write_npy(path, npy_canonical_dtype(array.dtype), array.shape, array.data.data(), bytes);
}

// The typed writers: the dtype of the C++ type.
#define FIXQ_NPY_SAVE(suffix, T, dtype) \
  void save_npy_##suffix(const std::string& path, const T* data, const Shape& shape) { save_typed(path, data, shape, dtype); }
FIXQ_NPY_SAVE(f32, float, "<f4")
FIXQ_NPY_INTEGER_TYPES(FIXQ_NPY_SAVE)
#undef FIXQ_NPY_SAVE

}  // namespace fixq
