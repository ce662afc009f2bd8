// Reading safetensors files: the header is read and checked once when the file is opened
// (see io/safetensors_header.h); tensors are read from the open file on demand.
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "fixq/error.h"
#include "fixq/safetensors.h"
#include "io/narrow.h"
#include "io/read_file.h"
#include "io/safetensors_header.h"

static_assert(std::endian::native == std::endian::little,
              "safetensors data is copied byte for byte: fixq assumes a little-endian host");

namespace fixq {
namespace {

// The reference implementation's limit: a longer header is taken for a corrupt length.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

template <class... Args>
[[noreturn]] void fail_file(const std::string& path, const Args&... what) {
  fail("safetensors: ", path, ": ", what...);
}

// Reads exactly n bytes at offset (checked against the file size at open).
void pread_exact(const std::string& path, int fd, void* dst, uint64_t n, uint64_t offset) {
  io_detail::read_exact("safetensors", path, fd, dst, n, static_cast<int64_t>(offset));
}

// IEEE binary16 -> binary32, exact (every half is a float; NaN payloads are kept).
float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  // Rebias the exponent from 15 to 127 and widen the mantissa from 10 to 23 bits.
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// bfloat16 is the upper half of a binary32.
float bfloat16_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

}  // namespace

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  uint64_t size = 0;
  fd_ = io_detail::open_regular_file("safetensors", path, &size);
  // The constructor body owns fd_ until it completes: close it on the way out of a throw.
  try {
    if (size < 8)
      fail_file(path, "truncated: ", size, " bytes, less than the 8-byte header length");
    unsigned char prefix[8];
    pread_exact(path, fd_, prefix, 8, 0);
    uint64_t header_bytes = 0;
    for (int i = 7; i >= 0; --i) header_bytes = (header_bytes << 8) | prefix[i];
    if (header_bytes > kMaxHeaderBytes)
      fail_file(path, "header length ", header_bytes, " is absurd (the format allows at most ",
                kMaxHeaderBytes, "): not a safetensors file, or a corrupt one");
    if (header_bytes > size - 8)
      fail_file(path, "truncated: the header length is ", header_bytes, " bytes but only ",
                size - 8, " follow");
    std::string text(header_bytes, '\0');
    pread_exact(path, fd_, text.data(), header_bytes, 8);
    data_start_ = 8 + header_bytes;
    SafetensorsHeader header = parse_safetensors_header(path, text, size - data_start_);
    tensors_ = std::move(header.tensors);
    metadata_ = std::move(header.metadata);
    for (std::size_t i = 0; i < tensors_.size(); ++i) index_.emplace(tensors_[i].name, i);
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

SafetensorsFile::~SafetensorsFile() {
  if (fd_ >= 0) ::close(fd_);
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      data_start_(other.data_start_),
      tensors_(std::move(other.tensors_)),
      index_(std::move(other.index_)),
      metadata_(std::move(other.metadata_)) {}

SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    data_start_ = other.data_start_;
    tensors_ = std::move(other.tensors_);
    index_ = std::move(other.index_);
    metadata_ = std::move(other.metadata_);
  }
  return *this;
}

const SafetensorsTensorInfo* SafetensorsFile::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

const SafetensorsTensorInfo& SafetensorsFile::info(const std::string& name) const {
  const SafetensorsTensorInfo* t = find(name);
  if (!t) fail_file(path_, "no tensor named '", name, "' (the file has ", tensors_.size(), ")");
  return *t;
}

void SafetensorsFile::read_bytes(const SafetensorsTensorInfo& t, void* dst) const {
  if (fd_ < 0) fail("safetensors: read from a moved-from SafetensorsFile");
  pread_exact(path_, fd_, dst, t.end - t.begin, data_start_ + t.begin);
}

std::vector<std::byte> SafetensorsFile::read_raw(const std::string& name) const {
  const SafetensorsTensorInfo& t = info(name);
  std::vector<std::byte> bytes(t.end - t.begin);
  read_bytes(t, bytes.data());
  return bytes;
}

namespace {

// The raw bytes as values of T, whose size is the dtype's item size.
template <class T>
std::vector<T> as_values(const std::vector<std::byte>& raw) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::vector<T> values(raw.size() / sizeof(T));
  if (!raw.empty()) std::memcpy(values.data(), raw.data(), raw.size());
  return values;
}

// The tensor's values, which must be stored as `want`.
template <class T>
std::vector<T> read_exact(const SafetensorsFile& file, const std::string& name, SafetensorsDtype want) {
  const SafetensorsTensorInfo& t = file.info(name);
  if (t.dtype != want)
    fail_file(file.path(), "tensor '", name, "' is ", to_string(t.dtype), " but ", to_string(want),
              " was asked for");
  return as_values<T>(file.read_raw(name));
}

}  // namespace

std::vector<float> SafetensorsFile::read_f32(const std::string& name) const {
  const SafetensorsTensorInfo& t = info(name);
  if (t.dtype == SafetensorsDtype::F32) {  // the common case, read in place
    std::vector<float> values((t.end - t.begin) / sizeof(float));
    read_bytes(t, values.data());
    return values;
  }
  if (t.dtype == SafetensorsDtype::F16 || t.dtype == SafetensorsDtype::BF16) {
    const std::vector<uint16_t> bits = as_values<uint16_t>(read_raw(name));
    std::vector<float> values(bits.size());
    for (std::size_t i = 0; i < bits.size(); ++i)
      values[i] = t.dtype == SafetensorsDtype::F16 ? half_to_float(bits[i]) : bfloat16_to_float(bits[i]);
    return values;
  }
  if (t.dtype == SafetensorsDtype::F64) {
    return io_detail::narrow_to_float32(as_values<double>(read_raw(name)), "safetensors: " + path_ + ": tensor '" + name + "': F64");
  }
  fail_file(path_, "tensor '", name, "' is ", to_string(t.dtype),
            ", not a float dtype (F32, F16, BF16, F64) that read_f32 converts");
}

// The integer readers: the exact dtype, no conversion.
#define FIXQ_SAFETENSORS_READ(suffix, T, dtype) \
  std::vector<T> SafetensorsFile::read_##suffix(const std::string& name) const { return read_exact<T>(*this, name, dtype); }
FIXQ_SAFETENSORS_READ(i8, int8_t, SafetensorsDtype::I8)
FIXQ_SAFETENSORS_READ(u8, uint8_t, SafetensorsDtype::U8)
FIXQ_SAFETENSORS_READ(i16, int16_t, SafetensorsDtype::I16)
FIXQ_SAFETENSORS_READ(u16, uint16_t, SafetensorsDtype::U16)
FIXQ_SAFETENSORS_READ(i32, int32_t, SafetensorsDtype::I32)
FIXQ_SAFETENSORS_READ(i64, int64_t, SafetensorsDtype::I64)
#undef FIXQ_SAFETENSORS_READ

}  // namespace fixq
