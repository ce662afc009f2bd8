// The .npy element types fixq reads and writes (numeric, little-endian, fixed size) and
// the data sizes they give.
#include <cstdint>
#include <limits>
#include <string>

#include "fixq/error.h"
#include "fixq/npy.h"

namespace fixq {
namespace {

struct DtypeBody {
  const char* kind_and_size;  // descr without its byte-order character
  std::size_t itemsize;
};

constexpr DtypeBody kSupported[] = {
    {"b1", 1}, {"i1", 1}, {"u1", 1}, {"i2", 2}, {"u2", 2}, {"i4", 4},
    {"u4", 4}, {"i8", 8}, {"u8", 8}, {"f2", 2}, {"f4", 4}, {"f8", 8},
};

constexpr const char* kSupportedList = "|b1 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8 <f2 <f4 <f8";

std::size_t itemsize_of_body(const std::string& dtype) {
  for (const DtypeBody& d : kSupported)
    if (dtype.compare(1, std::string::npos, d.kind_and_size) == 0) return d.itemsize;
  fail("unsupported dtype '", dtype, "'; supported: ", kSupportedList);
}

}  // namespace

std::string npy_canonical_dtype(const std::string& dtype) {
  require(!dtype.empty(), "empty dtype; supported: ", kSupportedList);
  const char order = dtype[0];
  require(order == '<' || order == '>' || order == '|' || order == '=',
          "unsupported dtype '", dtype, "': no byte-order character; supported: ",
          kSupportedList);
  const std::size_t itemsize = itemsize_of_body(dtype);
  if (itemsize == 1) return std::string("|").append(dtype, 1);
  require(order != '>', "big-endian dtype '", dtype,
          "' is not supported; convert with a.astype('<", dtype.substr(1), "')");
  require(order == '<', "unsupported dtype '", dtype,
          "': multi-byte types must be little-endian '<'");
  return dtype;
}

std::size_t npy_itemsize(const std::string& dtype) {
  return itemsize_of_body(npy_canonical_dtype(dtype));
}

uint64_t npy_data_bytes(const std::string& dtype, const Shape& shape) {
  const uint64_t itemsize = npy_itemsize(dtype);
  constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t count = 1;
  for (std::size_t axis = 0; axis < shape.size(); ++axis) {
    // shape_str only on failure: calling it per axis would make this quadratic.
    if (shape[axis] < 0)
      fail("negative extent ", shape[axis], " at axis ", axis, " of shape ", shape_str(shape));
    const auto extent = static_cast<uint64_t>(shape[axis]);
    if (extent != 0 && count > kMax / extent)
      fail("shape ", shape_str(shape), " overflows: more elements than fit int64");
    count *= extent;
  }
  if (count > kMax / itemsize)
    fail("shape ", shape_str(shape), " of ", dtype, " overflows: more bytes than fit int64");
  return count * itemsize;
}

}  // namespace fixq
