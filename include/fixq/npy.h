// fixq/npy.h — reading and writing NumPy .npy files.
//
// Reads format versions 1.0, 2.0 and 3.0: the magic "\x93NUMPY", a version, a header
// length, then a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': ...}
// (any key order, any whitespace), then the raw C-order data. Supported element types are
// the little-endian numeric descrs
//   |b1 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8 <f2 <f4 <f8
// (one-byte types take any byte-order character). Everything else is refused
// with a fixq::Error naming the file and the problem: bad magic, unknown version,
// malformed header, big-endian or other unsupported dtype, fortran_order True, negative
// or overflowing shape, data shorter (truncated) or longer (trailing bytes) than
// shape * itemsize. A file is never read beyond its end and nothing is allocated before
// its size has been checked against the header.
//
// Writes files byte-identical to np.save (numpy 1.24): version 1.0, or 2.0 when the
// header would not fit 1.0; keys in sorted order, room for the first extent to grow to 21
// digits, then spaces and a newline so that the data starts at a multiple of 64.
// The bytes go to a new temporary file in the target's directory, which is renamed over
// the target only after a complete, flushed and synced write: a failed save leaves an
// existing file untouched and removes the temporary. The file written gets mode
// 0666 & ~umask, as np.save gives; a replaced file's own mode is not kept.
//
// The host is little-endian (checked at compile time), so data bytes are copied as is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fixq/tensor.h"

namespace fixq {

struct NpyArray {
  std::string dtype;            // numpy descr, canonical: "<f4", "|u1", "|b1", ...
  Shape shape;                  // rank 0 is a scalar; extents may be 0
  std::vector<std::byte> data;  // numel(shape) * itemsize bytes, C order, little-endian
};

// The canonical spelling of a supported descr: '|' for one-byte types (whose byte-order
// character means nothing, so any is accepted), '<' otherwise; "<i1" -> "|i1". Throws
// fixq::Error naming the descr for an unsupported one, big-endian ('>') included.
std::string npy_canonical_dtype(const std::string& dtype);

// Bytes per element of a supported descr; throws as npy_canonical_dtype.
std::size_t npy_itemsize(const std::string& dtype);

// numel(shape) * npy_itemsize(dtype): the size of the data part of a file. Throws
// fixq::Error for an unsupported dtype, a negative extent, or a count of elements or
// bytes beyond int64 ("overflows"). Linear in the rank, even for thousands of axes.
uint64_t npy_data_bytes(const std::string& dtype, const Shape& shape);

NpyArray load_npy(const std::string& path);

// Throws, before touching the file system, unless dtype is supported (as for reading;
// written in canonical form) and data.size() == numel(shape) * itemsize.
void save_npy(const std::string& path, const NpyArray& array);

// Typed loads: the values in C order, and the shape in *shape when it is not null.
// load_npy_f32 accepts <f4, and <f8 rounded to nearest float (a finite value beyond the
// float range is an error, not an infinity). Every other loader requires its exact dtype
// and names the one found otherwise.
std::vector<float> load_npy_f32(const std::string& path, Shape* shape = nullptr);
std::vector<int8_t> load_npy_i8(const std::string& path, Shape* shape = nullptr);
std::vector<uint8_t> load_npy_u8(const std::string& path, Shape* shape = nullptr);
std::vector<int16_t> load_npy_i16(const std::string& path, Shape* shape = nullptr);
std::vector<uint16_t> load_npy_u16(const std::string& path, Shape* shape = nullptr);
std::vector<int32_t> load_npy_i32(const std::string& path, Shape* shape = nullptr);
std::vector<int64_t> load_npy_i64(const std::string& path, Shape* shape = nullptr);

// Typed saves of numel(shape) values from data (which may be null only when that is 0).
void save_npy_f32(const std::string& path, const float* data, const Shape& shape);
void save_npy_i8(const std::string& path, const int8_t* data, const Shape& shape);
void save_npy_u8(const std::string& path, const uint8_t* data, const Shape& shape);
void save_npy_i16(const std::string& path, const int16_t* data, const Shape& shape);
void save_npy_u16(const std::string& path, const uint16_t* data, const Shape& shape);
void save_npy_i32(const std::string& path, const int32_t* data, const Shape& shape);
void save_npy_i64(const std::string& path, const int64_t* data, const Shape& shape);

}  // namespace fixq
