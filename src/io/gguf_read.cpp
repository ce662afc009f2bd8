// Reading GGUF files: the header (metadata and tensor infos) is parsed and checked once
// when the file is opened; tensor data is read from the open file on demand.
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <utility>

#include "io/narrow.h"
#include "fixq/error.h"
#include "fixq/gguf_file.h"
#include "io/read_file.h"
#include "fixq/lowp.h"

static_assert(std::endian::native == std::endian::little, "GGUF data is copied byte for byte: fixq assumes a little-endian host");

namespace fixq::gguf {
namespace {

constexpr uint32_t kMaxDims = 4;                  // GGML_MAX_DIMS
constexpr int kMaxArrayDepth = 8;                 // arrays of arrays of ... (ggml itself allows none)
// A metadata value takes ~48 bytes in memory, so array items are bounded in all, not only
// by the file's size: ggml's largest vocabularies hold ~2^18 tokens (and as many merges).
constexpr uint64_t kMaxArrayItems = uint64_t{1} << 24;

template <class... Args>
[[noreturn]] void fail_file(const std::string& path, const Args&... what) {
  fail("gguf: ", path, ": ", what...);
}

void pread_exact(const std::string& path, int fd, void* dst, uint64_t n, uint64_t offset) {
  io_detail::read_exact("gguf", path, fd, dst, n, static_cast<int64_t>(offset));
}

// Sequential reads of the header through a buffer, never past the end of the file: every
// read names what it reads, so a truncated file says where it ends.
class HeaderReader {
 public:
  HeaderReader(const std::string& path, int fd, uint64_t size) : path_(path), fd_(fd), size_(size) {}

  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return size_ - pos_; }
  uint64_t array_items = 0;  // read so far, over all metadata

  void read(void* dst, uint64_t n, const std::string& what) {
    if (n > remaining())
      fail_file(path_, "truncated: the file ends at byte ", size_, " while reading ", what, " at byte ", pos_);
    auto* out = static_cast<char*>(dst);
    while (n > 0) {
      if (pos_ < buf_start_ || pos_ >= buf_start_ + buf_.size()) fill();
      const uint64_t at = pos_ - buf_start_;
      const uint64_t take = std::min<uint64_t>(n, buf_.size() - at);
      std::memcpy(out, buf_.data() + at, take);
      out += take;
      n -= take;
      pos_ += take;
    }
  }

  template <class T>
  T scalar(const std::string& what) {
    T v;
    read(&v, sizeof v, what);
    return v;
  }

  std::string string(const std::string& what) {
    const auto n = scalar<uint64_t>(what + " (its length)");
    if (n > remaining())
      fail_file(path_, "truncated or corrupt: ", what, " at byte ", pos_ - 8, " claims ", n, " bytes, but only ",
                remaining(), " remain");
    std::string s(n, '\0');
    read(s.data(), n, what);
    return s;
  }

 private:
  void fill() {
    constexpr uint64_t kBuffer = 1 << 20;
    buf_start_ = pos_;
    buf_.resize(std::min(kBuffer, size_ - pos_));
    pread_exact(path_, fd_, buf_.data(), buf_.size(), pos_);
  }

  const std::string& path_;
  int fd_;
  uint64_t size_;
  uint64_t pos_ = 0;
  uint64_t buf_start_ = 0;
  std::vector<char> buf_;
};

// The fewest bytes one value of the type takes, to bound a count before allocating.
uint64_t min_value_bytes(ValueType t) {
  switch (t) {
    case ValueType::U8:
    case ValueType::I8:
    case ValueType::Bool:
      return 1;
    case ValueType::U16:
    case ValueType::I16:
      return 2;
    case ValueType::U32:
    case ValueType::I32:
    case ValueType::F32:
      return 4;
    case ValueType::U64:
    case ValueType::I64:
    case ValueType::F64:
    case ValueType::String:
      return 8;
    case ValueType::Array:
      return 12;
  }
  return 1;
}

ValueType value_type(const std::string& path, uint32_t raw, const std::string& what) {
  if (raw > static_cast<uint32_t>(ValueType::F64))
    fail_file(path, what, " has value type ", raw, ", which GGUF does not define (0..12)");
  return static_cast<ValueType>(raw);
}

Value read_value(HeaderReader& in, const std::string& path, ValueType type, const std::string& what, int depth) {
  switch (type) {
    case ValueType::U8: return Value::u8(in.scalar<uint8_t>(what));
    case ValueType::I8: return Value::i8(in.scalar<int8_t>(what));
    case ValueType::U16: return Value::u16(in.scalar<uint16_t>(what));
    case ValueType::I16: return Value::i16(in.scalar<int16_t>(what));
    case ValueType::U32: return Value::u32(in.scalar<uint32_t>(what));
    case ValueType::I32: return Value::i32(in.scalar<int32_t>(what));
    case ValueType::F32: return Value::f32(in.scalar<float>(what));
    case ValueType::U64: return Value::u64(in.scalar<uint64_t>(what));
    case ValueType::I64: return Value::i64(in.scalar<int64_t>(what));
    case ValueType::F64: return Value::f64(in.scalar<double>(what));
    case ValueType::Bool: {
      const auto b = in.scalar<uint8_t>(what);
      if (b > 1) fail_file(path, what, " is a bool stored as ", unsigned{b}, " (only 0 and 1 are valid)");
      return Value::boolean(b == 1);
    }
    case ValueType::String: return Value::string(in.string(what));
    case ValueType::Array: {
      if (depth >= kMaxArrayDepth) fail_file(path, what, ": arrays nested deeper than ", kMaxArrayDepth, " levels");
      const ValueType element = value_type(path, in.scalar<uint32_t>(what + " (array element type)"), what);
      const auto n = in.scalar<uint64_t>(what + " (array length)");
      if (n > in.remaining() / min_value_bytes(element))
        fail_file(path, "truncated or corrupt: ", what, " claims ", n, " items of ", to_string(element), ", but only ",
                  in.remaining(), " bytes remain");
      in.array_items += n;
      if (in.array_items > kMaxArrayItems)
        fail_file(path, what, ": the metadata's arrays hold more than ", kMaxArrayItems, " items in all, more than fixq reads");
      std::vector<Value> items;
      items.reserve(n);
      for (uint64_t i = 0; i < n; ++i)
        items.push_back(read_value(in, path, element, what + "[" + std::to_string(i) + "]", depth + 1));
      return Value::array(element, std::move(items));
    }
  }
  fail_file(path, what, ": invalid value type");
}

// numel of ne within int64, and ne[0] a whole number of blocks.
TensorInfo make_info(const std::string& path, std::string name, const std::vector<uint64_t>& ne, uint32_t type_id,
                     uint64_t offset) {
  TensorInfo t;
  t.name = std::move(name);
  t.type = find_tensor_type(type_id);
  if (!t.type)
    fail_file(path, "tensor '", printable(t.name), "' has ggml type id ", type_id,
              ", which ggml does not define (or has retired); the file is corrupt or newer than fixq");
  for (auto it = ne.rbegin(); it != ne.rend(); ++it) {
    if (*it > static_cast<uint64_t>(INT64_MAX)) fail_file(path, "tensor '", printable(t.name), "' has extent ", *it, " beyond int64");
    t.shape.push_back(static_cast<int64_t>(*it));
  }
  try {
    t.bytes = tensor_bytes(*t.type, t.shape);
  } catch (const Error& e) {
    fail_file(path, "tensor '", printable(t.name), "': ", e.what());
  }
  t.offset = offset;
  return t;
}

}  // namespace

File::File(const std::string& path) : path_(path) {
  uint64_t size = 0;
  fd_ = io_detail::open_regular_file("gguf", path, &size);
  try {
    HeaderReader in(path, fd_, size);

    char magic[4] = {};
    if (size < 4) fail_file(path, "truncated: ", size, " bytes, not even the magic \"GGUF\"");
    in.read(magic, 4, "the magic");
    if (std::memcmp(magic, "GGUF", 4) != 0) fail_file(path, "not a GGUF file (it does not start with \"GGUF\")");
    version_ = in.scalar<uint32_t>("the version");
    if (version_ == 1)
      fail_file(path, "GGUF version 1 (32-bit counts, 2023) is not supported; convert the file with a current llama.cpp");
    if (version_ != 2 && version_ != 3) {
      const uint32_t swapped = (version_ >> 24) | ((version_ >> 8) & 0xff00u) | ((version_ << 8) & 0xff0000u) | (version_ << 24);
      if (swapped == 2 || swapped == 3)
        fail_file(path, "big-endian GGUF (version ", swapped, ") is not supported");
      fail_file(path, "unknown GGUF version ", version_, " (fixq reads versions 2 and 3)");
    }
    const auto n_tensors = in.scalar<uint64_t>("the tensor count");
    const auto n_kv = in.scalar<uint64_t>("the metadata count");
    // A key-value pair takes at least 8 + 4 + 1 bytes, a tensor info 8 + 4 + 4 + 8.
    if (n_kv > in.remaining() / 13)
      fail_file(path, "truncated or corrupt: ", n_kv, " metadata entries cannot fit in the ", in.remaining(),
                " bytes that follow");
    if (n_tensors > in.remaining() / 24)
      fail_file(path, "truncated or corrupt: ", n_tensors, " tensor infos cannot fit in the ", in.remaining(),
                " bytes that follow");

    std::set<std::string> keys;
    for (uint64_t i = 0; i < n_kv; ++i) {
      std::string key = in.string("the key of metadata entry " + std::to_string(i));
      const std::string what = "metadata \"" + printable(key) + "\"";
      if (!keys.insert(key).second) fail_file(path, "duplicate ", what);
      const ValueType type = value_type(path, in.scalar<uint32_t>(what + " (its type)"), what);
      Value v = read_value(in, path, type, what, 0);
      metadata_.emplace_back(std::move(key), std::move(v));
    }
    if (const Value* a = find_value("general.alignment")) {
      if (a->type() != ValueType::U32)
        fail_file(path, "metadata \"general.alignment\" is a ", to_string(a->type()), ", not a uint32");
      const uint64_t v = a->as_uint();
      if (v == 0 || !std::has_single_bit(v))
        fail_file(path, "metadata \"general.alignment\" is ", v, ", not a power of two");
      alignment_ = static_cast<uint32_t>(v);
    }

    std::set<std::string> names;
    for (uint64_t i = 0; i < n_tensors; ++i) {
      std::string name = in.string("the name of tensor " + std::to_string(i));
      const std::string what = "tensor '" + printable(name) + "'";
      if (!names.insert(name).second) fail_file(path, "two tensors are named '", printable(name), "'");
      const auto n_dims = in.scalar<uint32_t>(what + " (its rank)");
      if (n_dims > kMaxDims) fail_file(path, what, " has ", n_dims, " dimensions; ggml allows at most ", kMaxDims);
      std::vector<uint64_t> ne(n_dims);
      for (uint32_t d = 0; d < n_dims; ++d) ne[d] = in.scalar<uint64_t>(what + " (its extents)");
      const auto type_id = in.scalar<uint32_t>(what + " (its type)");
      const auto offset = in.scalar<uint64_t>(what + " (its offset)");
      tensors_.push_back(make_info(path, std::move(name), ne, type_id, offset));
    }

    // The data section starts at the next multiple of the alignment.
    const uint64_t pad = (alignment_ - in.pos() % alignment_) % alignment_;
    data_offset_ = in.pos() + pad;
    const uint64_t data_bytes = size >= data_offset_ ? size - data_offset_ : 0;
    std::vector<const TensorInfo*> by_offset;
    for (const TensorInfo& t : tensors_) {
      if (t.offset % alignment_ != 0)
        fail_file(path, "tensor '", printable(t.name), "' starts at data offset ", t.offset, ", not a multiple of the alignment ",
                  alignment_);
      if (t.offset > data_bytes || t.bytes > data_bytes - t.offset)
        fail_file(path, "truncated: tensor '", printable(t.name), "' (", t.type->name, " ", shape_str(t.shape), ", ", t.bytes,
                  " bytes at data offset ", t.offset, ") reaches beyond the ", data_bytes, " bytes of the data section");
      by_offset.push_back(&t);
    }
    std::sort(by_offset.begin(), by_offset.end(), [](const TensorInfo* a, const TensorInfo* b) {
      return std::pair(a->offset, a->bytes) < std::pair(b->offset, b->bytes);
    });
    for (std::size_t i = 1; i < by_offset.size(); ++i) {
      const TensorInfo& a = *by_offset[i - 1];
      const TensorInfo& b = *by_offset[i];
      if (a.bytes > 0 && b.bytes > 0 && b.offset < a.offset + a.bytes)
        fail_file(path, "tensors '", printable(a.name), "' (bytes ", a.offset, "..", a.offset + a.bytes, ") and '", printable(b.name),
                  "' (from ", b.offset, ") overlap");
    }
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

File::~File() {
  if (fd_ >= 0) ::close(fd_);
}

File::File(File&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      version_(other.version_),
      alignment_(other.alignment_),
      data_offset_(other.data_offset_),
      metadata_(std::move(other.metadata_)),
      tensors_(std::move(other.tensors_)) {}

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    version_ = other.version_;
    alignment_ = other.alignment_;
    data_offset_ = other.data_offset_;
    metadata_ = std::move(other.metadata_);
    tensors_ = std::move(other.tensors_);
  }
  return *this;
}

const Value* File::find_value(std::string_view key) const {
  for (const auto& [k, v] : metadata_)
    if (k == key) return &v;
  return nullptr;
}

const TensorInfo* File::find(std::string_view name) const {
  for (const TensorInfo& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

const TensorInfo& File::info(std::string_view name) const {
  const TensorInfo* t = find(name);
  if (!t) fail_file(path_, "no tensor named '", printable(name), "' (the file has ", tensors_.size(), "; `fixq gguf info` lists them)");
  return *t;
}

std::vector<std::byte> File::read_raw(const TensorInfo& t) const {
  if (fd_ < 0) fail("gguf: read from a moved-from gguf::File");
  std::vector<std::byte> bytes(t.bytes);
  pread_exact(path_, fd_, bytes.data(), t.bytes, data_offset_ + t.offset);
  return bytes;
}

namespace {

template <class T>
std::vector<T> as_values(const std::vector<std::byte>& raw) {
  std::vector<T> v(raw.size() / sizeof(T));
  if (!raw.empty()) std::memcpy(v.data(), raw.data(), raw.size());
  return v;
}

// An integer as float32, refused when float32 cannot hold it exactly.
template <class T>
float exact_float(const std::string& path, const TensorInfo& t, std::size_t i, T v) {
  const float f = static_cast<float>(v);
  // |f| >= 2^63 cannot be converted back; only INT64_MIN itself is exact there.
  const bool exact = std::fabs(f) < 9223372036854775808.0f ? static_cast<T>(static_cast<int64_t>(f)) == v
                                                            : static_cast<int64_t>(v) == INT64_MIN;
  if (!exact) fail_file(path, "tensor '", printable(t.name), "' (", t.type->name, "): element ", i, " = ", v, " is not exact in float32");
  return f;
}

template <class T>
std::vector<float> ints_to_float(const std::string& path, const TensorInfo& t, const std::vector<std::byte>& raw) {
  const std::vector<T> v = as_values<T>(raw);
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = exact_float(path, t, i, v[i]);
  return out;
}

}  // namespace

std::vector<float> File::read_f32(const TensorInfo& t) const {
  const TensorType& type = *t.type;
  if (!type.decodable())
    fail_file(path_, "tensor '", printable(t.name), "' is ", type.name, ", a ggml format fixq cannot decode (`fixq formats list` "
              "shows the ones it can)");
  const std::vector<std::byte> raw = read_raw(t);
  if (type.block) return dequantize(*type.block, raw, t.shape.empty() ? Shape{1} : t.shape);
  const std::string_view n = type.name;
  if (n == "f32") return as_values<float>(raw);
  if (n == "f16" || n == "bf16") {
    const std::vector<uint16_t> bits = as_values<uint16_t>(raw);
    std::vector<float> out(bits.size());
    lowp_decode(n == "f16" ? LowpType::Fp16 : LowpType::Bf16, bits.data(), static_cast<int64_t>(bits.size()), out.data());
    return out;
  }
  if (n == "f64")
    return io_detail::narrow_to_float32(as_values<double>(raw), "gguf: " + path_ + ": tensor '" + printable(t.name) + "': f64");
  if (n == "i8") return ints_to_float<int8_t>(path_, t, raw);
  if (n == "i16") return ints_to_float<int16_t>(path_, t, raw);
  if (n == "i32") return ints_to_float<int32_t>(path_, t, raw);
  return ints_to_float<int64_t>(path_, t, raw);
}

}  // namespace fixq::gguf
