// fixq/gguf_file.h — reading and writing GGUF files (versions 2 and 3), the container
// llama.cpp and ggml keep models in.
//
// Layout (all little-endian):
//   "GGUF", uint32 version, uint64 tensor_count, uint64 kv_count;
//   kv_count pairs: key (string), uint32 value type, value;
//   tensor_count infos: name (string), uint32 n_dims (1..4), uint64 ne[n_dims] (innermost
//   dimension first), uint32 ggml type id, uint64 offset (from the data section's start);
//   padding to `general.alignment` (a uint32 power of two, default 32); the data section.
// A string is a uint64 byte count and the bytes (UTF-8, no terminator). A value is one of
// uint8 int8 uint16 int16 uint32 int32 float32 bool string uint64 int64 float64, or an
// array: uint32 element type, uint64 count, the elements (arrays of arrays included).
//
// Shapes: fixq reports C order (row-major, last axis fastest), i.e. ne reversed, as numpy
// and gguf-py do; `ne()` gives the file's order. A tensor of a block type packs each row
// (ne[0] elements, which must be a multiple of the block) into whole blocks.
//
// Opening checks everything before any tensor data is read: magic and version, every
// count against the bytes that remain (nothing is allocated on a corrupt count), value
// types, bools of 0 or 1, duplicate keys and tensor names, the alignment's type and value,
// n_dims, extents (non-negative, numel within int64, ne[0] a whole number of blocks),
// known type ids, offsets (aligned, inside the file, no two tensors overlapping). Every
// problem is a fixq::Error "gguf: <path>: <what>" (truncated files say so).
//
// Tensor types: the plain ones (f32 f16 bf16 f64 i8 i16 i32 i64), every block format of
// fixq/gguf.h (all_types(), decodable), and ggml's other block formats, whose sizes are
// known so that their files open and list, but which fixq cannot decode. An id ggml has
// never assigned is an error.
//
// Writing lays tensors out in the order given, each at the next multiple of the alignment,
// which is the layout ggml's own loader requires; names must be shorter than 64 bytes
// (ggml's GGML_MAX_NAME). The bytes go through a temporary file that replaces the target
// only once complete.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "fixq/gguf.h"
#include "fixq/tensor.h"

namespace fixq::gguf {

// ---------------------------------------------------------------- metadata values

enum class ValueType : uint32_t { U8, I8, U16, I16, U32, I32, F32, Bool, String, Array, U64, I64, F64 };

// "uint8", "int8", ..., "float64", "bool", "string", "array" (the spec's names).
std::string_view to_string(ValueType type);

// One metadata value. Integers are held widened (their type says how they are stored),
// floats as double (exact for float32), arrays as their element type and elements.
class Value {
 public:
  struct Array {
    ValueType element = ValueType::U8;
    std::vector<Value> items;
  };

  Value() = default;
  static Value u8(uint8_t v) { return {ValueType::U8, uint64_t{v}}; }
  static Value i8(int8_t v) { return {ValueType::I8, int64_t{v}}; }
  static Value u16(uint16_t v) { return {ValueType::U16, uint64_t{v}}; }
  static Value i16(int16_t v) { return {ValueType::I16, int64_t{v}}; }
  static Value u32(uint32_t v) { return {ValueType::U32, uint64_t{v}}; }
  static Value i32(int32_t v) { return {ValueType::I32, int64_t{v}}; }
  static Value u64(uint64_t v) { return {ValueType::U64, v}; }
  static Value i64(int64_t v) { return {ValueType::I64, v}; }
  static Value f32(float v) { return {ValueType::F32, static_cast<double>(v)}; }
  static Value f64(double v) { return {ValueType::F64, v}; }
  static Value boolean(bool v) { return {ValueType::Bool, v}; }
  static Value string(std::string v) { return {ValueType::String, std::move(v)}; }
  // Throws fixq::Error unless every item is of type `element`.
  static Value array(ValueType element, std::vector<Value> items);

  ValueType type() const { return type_; }
  // Each throws fixq::Error naming the actual type when the value is not of that kind:
  // as_uint for U8..U64, as_int for I8..I64 (and unsigned values up to INT64_MAX),
  // as_float for F32 / F64.
  uint64_t as_uint() const;
  int64_t as_int() const;
  double as_float() const;
  bool as_bool() const;
  const std::string& as_string() const;
  const Array& as_array() const;

  // A short, printable rendering: strings quoted with escapes, arrays as
  // "[3 x int32] [1, 2, 3]" cut after `max_items` items.
  std::string str(std::size_t max_items = 8) const;

 private:
  using Storage = std::variant<uint64_t, int64_t, double, bool, std::string, Array>;
  Value(ValueType type, Storage v) : type_(type), v_(std::move(v)) {}
  ValueType type_ = ValueType::U8;
  Storage v_ = uint64_t{0};
};

using Metadata = std::vector<std::pair<std::string, Value>>;  // in file order

// s for a message or a terminal: valid UTF-8 is kept, control characters and bytes that
// are not UTF-8 become \xNN (file names and keys are bytes, and may be anything).
std::string printable(std::string_view s);

// ------------------------------------------------------------------ tensor types

struct TensorType {
  uint32_t id = 0;                // ggml type id, as stored in the file
  std::string_view name;          // ggml's spelling: "f32", "bf16", "q4_K", "iq2_xxs"
  int64_t block_elems = 1;        // 1 for the plain types
  std::size_t block_bytes = 0;    // item size for the plain types
  std::optional<Type> block;      // the fixq/gguf.h format, when fixq has its kernels
  bool is_float = false;          // f32 f16 bf16 f64
  bool is_int = false;            // i8 i16 i32 i64
  // fixq can turn the tensor's bytes into float32 (plain types and decodable blocks).
  bool decodable() const { return is_float || is_int || block.has_value(); }
};

// Every type a file may hold, by id: plain, fixq's block formats (all of all_types()),
// then ggml's formats fixq cannot decode.
std::vector<TensorType> all_tensor_types();
// By id; nullptr for an id ggml never assigned (or retired: 4, 5, 31..33, 36..38).
const TensorType* find_tensor_type(uint32_t id);
// By name; throws fixq::Error listing the known names.
const TensorType& tensor_type(std::string_view name);

// Bytes of a tensor of this C-order shape; throws unless the last extent is a whole number
// of blocks (a scalar counts as [1]) and the size fits int64.
uint64_t tensor_bytes(const TensorType& type, const Shape& shape);

// ------------------------------------------------------------------ reading

struct TensorInfo {
  std::string name;
  const TensorType* type = nullptr;
  Shape shape;          // C order: ne reversed
  uint64_t offset = 0;  // from the start of the data section
  uint64_t bytes = 0;
  Shape ne() const { return {shape.rbegin(), shape.rend()}; }
};

// An open, fully validated GGUF file. Move-only: it holds the file open.
class File {
 public:
  explicit File(const std::string& path);
  ~File();
  File(File&& other) noexcept;
  File& operator=(File&& other) noexcept;
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // from the start of the file
  const Metadata& metadata() const { return metadata_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }  // in file order

  const Value* find_value(std::string_view key) const;
  const TensorInfo* find(std::string_view name) const;
  // Throws fixq::Error naming the file and the tensor when absent.
  const TensorInfo& info(std::string_view name) const;

  // The tensor's bytes as stored.
  std::vector<std::byte> read_raw(const TensorInfo& t) const;
  // The values as float32: f32 as is, f16 and bf16 exactly, f64 rounded (beyond the
  // float range is an error), integers converted (an i32 / i64 that float32 cannot hold
  // exactly is an error), block formats by fixq/gguf.h's dequantize (ggml's bits).
  // Throws for a type fixq cannot decode, naming it.
  std::vector<float> read_f32(const TensorInfo& t) const;

 private:
  std::string path_;
  int fd_ = -1;
  uint32_t version_ = 0;
  uint32_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  Metadata metadata_;
  std::vector<TensorInfo> tensors_;
};

// ------------------------------------------------------------------ writing

// One tensor to write: its bytes come from `data` when the writer reaches it (so a large
// file need not be held in memory), and must be tensor_bytes(type, shape) long.
struct TensorToWrite {
  std::string name;
  const TensorType* type = nullptr;
  Shape shape;  // C order
  std::function<std::vector<std::byte>()> data;
};

// Writes a GGUF v3 file. `alignment` is written as general.alignment unless it is the
// default 32 (a general.alignment entry in `metadata` must agree with it). Throws, before
// the target is touched, for duplicate keys or names, a name of 64 bytes or more, a rank
// above 4, a shape the type cannot hold, or an alignment that is not a power of two;
// and, without replacing the target, when a tensor's bytes are not of its size.
void save(const std::string& path, const Metadata& metadata, const std::vector<TensorToWrite>& tensors,
          uint32_t alignment = 32);

// ------------------------------------------------------------------ packing

// The bytes a GGUF tensor of `type` and C-order `shape` holds for these float32 values:
// f32 as is, f16 / bf16 rounded to nearest even (a finite value beyond f16's range is an
// error, not an infinity), a block format by fixq/gguf.h's quantize (ggml's
// quantize_row_*_ref bytes; NaN / Inf and blocks whose scale would leave fp16 are
// errors). Integer and undecodable types are refused.
std::vector<std::byte> encode(const TensorType& type, std::span<const float> x, const Shape& shape);

// What convert_safetensors did with one tensor.
struct ConvertedTensor {
  std::string name;
  const TensorType* type = nullptr;
  Shape shape;
  std::string note;  // why it is not of the requested type, or empty
};

// Writes every tensor of a safetensors file into one GGUF v3 file at `out`, in the input's
// data order: float tensors (F32, F16, BF16, F64) as `type` where it can hold them (rank
// >= 2 for block formats, as llama.cpp's quantize keeps vectors and norms unquantized, and
// rows of whole blocks), else as `fallback` (a plain float type); I8 / I16 / I32 / I64
// tensors as the same GGUF integer type. Other dtypes (BOOL, unsigned, float8) have no
// GGUF type and are refused, naming them, before anything is written. The metadata holds
// general.name (the input's file name), general.quantization_version 2 (ggml's
// GGML_QNT_VERSION) and the input's __metadata__ as strings under "safetensors.".
std::vector<ConvertedTensor> convert_safetensors(const std::string& in, const std::string& out, const TensorType& type,
                                           const TensorType& fallback);

// Writes x, the values of C-order `shape`, as one tensor `name` of `type` (encode()
// above) into a new GGUF v3 file at `out`, with general.quantization_version 2. Returns the
// tensor's bytes.
std::size_t pack_array(const std::string& out, const std::string& name, const TensorType& type, std::span<const float> x,
                       const Shape& shape);

}  // namespace fixq::gguf
