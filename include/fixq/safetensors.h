// fixq/safetensors.h — reading and writing safetensors files.
//
// The format: 8 bytes holding N, a little-endian uint64; N bytes of UTF-8 JSON, one object
// that maps each tensor name to {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin,
// end]} and may hold "__metadata__", an object of string values; then the data section,
// where each tensor's bytes (C order, little-endian) lie at [begin, end) counted from the
// section's start. Writers pad the JSON with trailing spaces to align the data.
//
// Opening a file checks the whole layout before any tensor data is read: N against the
// file size (and the 100 MB header limit of the reference implementation), the JSON
// (well-formed, UTF-8, starting with '{', no duplicate keys), every entry (exactly the
// three fields, a known dtype, non-negative extents, begin <= end), that end - begin is
// numel(shape) * itemsize, and that the tensors tile the data section exactly: sorted by
// offset, the first starts at 0, each starts where the one before ends, and the last ends
// at the end of the file. The format forbids holes (so that a file cannot smuggle a second
// payload); overlaps and trailing bytes are refused alike. Every problem is a fixq::Error
// "safetensors: <path>: [tensor '<name>': ]<what>".
//
// Tensors are read one at a time from the open file, so a file larger than memory can be
// read tensor by tensor.
//
// Writing: compact JSON with keys sorted (byte order), "__metadata__" only when there is
// metadata, the header padded with spaces so that the data starts at a multiple of 8, and
// the tensors in the data section by item size, largest first, then by name, so that each
// one starts at a multiple of its own item size (aligned for whoever maps the file). The
// bytes go through a temporary file in the target's directory that replaces the target
// only once complete and synced (as save_npy).
//
// The host is little-endian (checked at compile time), so data bytes are copied as is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "fixq/tensor.h"

namespace fixq {

// The dtypes of the format, spelled as in the file. F8_E5M2 and F8_E4M3 can be read and
// written as raw bytes only.
enum class SafetensorsDtype { BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16, F16, BF16, I32, U32, F32, I64, U64, F64 };

// "F32", "BF16", ...
std::string to_string(SafetensorsDtype dtype);
// The inverse; throws fixq::Error naming the known dtypes for an unknown name.
SafetensorsDtype parse_safetensors_dtype(const std::string& name);
// Bytes per element: 1, 2, 4 or 8.
std::size_t safetensors_itemsize(SafetensorsDtype dtype);

struct SafetensorsTensorInfo {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::F32;
  Shape shape;         // rank 0 is a scalar; extents may be 0
  uint64_t begin = 0;  // data_offsets, relative to the start of the data section
  uint64_t end = 0;
};

// An open, fully validated safetensors file. Move-only: it holds the file open.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(SafetensorsFile&& other) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&& other) noexcept;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  // In data order (by offset; tensors of zero bytes at one offset by name).
  const std::vector<SafetensorsTensorInfo>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // The tensor's entry, or nullptr when the file has none of that name.
  const SafetensorsTensorInfo* find(const std::string& name) const;
  // The tensor's entry; throws fixq::Error naming the file and the tensor when absent.
  const SafetensorsTensorInfo& info(const std::string& name) const;

  // The tensor's bytes as stored (little-endian, C order).
  std::vector<std::byte> read_raw(const std::string& name) const;
  // The values as float32: F32 as is, F16 and BF16 exactly, F64 rounded to nearest (a
  // finite value beyond the float range is an error, not an infinity). Other dtypes are
  // refused, naming the dtype found.
  std::vector<float> read_f32(const std::string& name) const;
  // Each of these requires its exact dtype (I8, U8, I16, U16, I32, I64).
  std::vector<int8_t> read_i8(const std::string& name) const;
  std::vector<uint8_t> read_u8(const std::string& name) const;
  std::vector<int16_t> read_i16(const std::string& name) const;
  std::vector<uint16_t> read_u16(const std::string& name) const;
  std::vector<int32_t> read_i32(const std::string& name) const;
  std::vector<int64_t> read_i64(const std::string& name) const;

 private:
  void read_bytes(const SafetensorsTensorInfo& t, void* dst) const;

  std::string path_;
  int fd_ = -1;
  uint64_t data_start_ = 0;  // 8 + N
  std::vector<SafetensorsTensorInfo> tensors_;
  std::map<std::string, std::size_t> index_;  // name -> position in tensors_
  std::map<std::string, std::string> metadata_;
};

// One tensor to write; `data` is not owned and must hold numel(shape) * itemsize bytes,
// e.g. std::as_bytes(std::span(values)).
struct SafetensorsTensorView {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::F32;
  Shape shape;
  std::span<const std::byte> data;
};

// Writes the tensors and the metadata (omitted when empty) as described above. Throws,
// before touching the file system, for a duplicate name, the reserved name
// "__metadata__", a negative extent, a data size that does not match the shape, or a name
// or metadata string that is not valid UTF-8.
void save_safetensors(const std::string& path, const std::vector<SafetensorsTensorView>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace fixq
