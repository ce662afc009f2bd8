// The .bin container of fixq/encoded_file.h.
#include "fixq/encoded_file.h"

#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>

#include "fixq/error.h"
#include "io/atomic_file.h"

static_assert(std::endian::native == std::endian::little, "the container is little-endian");

namespace fixq {

namespace {

constexpr char kMagic[8] = {'F', 'I', 'X', 'Q', 'P', 'K', 1, 0};
constexpr uint32_t kMaxName = 64;
constexpr uint32_t kMaxRank = 32;

template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Reads fixed fields from an in-memory copy of the header, refusing to run past its end.
class Cursor {
 public:
  Cursor(const std::string& path, const std::vector<char>& buf) : path_(path), buf_(buf) {}
  template <class T>
  T get(const char* field) {
    need(sizeof(T), field);
    T v;
    std::memcpy(&v, buf_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string bytes(size_t n, const char* field) {
    need(n, field);
    std::string s(buf_.data() + pos_, n);
    pos_ += n;
    return s;
  }
  size_t pos() const { return pos_; }

 private:
  void need(size_t n, const char* field) {
    if (buf_.size() - pos_ < n) fail("load_encoded: ", path_, ": file ends inside the ", field, " (truncated)");
  }
  const std::string& path_;
  const std::vector<char>& buf_;
  size_t pos_ = 0;
};

}  // namespace

void save_encoded(const std::string& path, const EncodedTensor& t) {
  require(!t.format.empty() && t.format.size() <= kMaxName, "save_encoded: format name '", t.format,
          "' must have 1..", kMaxName, " characters");
  require(t.shape.size() <= kMaxRank, "save_encoded: rank ", t.shape.size(), " exceeds ", kMaxRank);
  numel(t.shape);  // validates the extents
  std::string header(kMagic, sizeof kMagic);
  put<uint32_t>(header, static_cast<uint32_t>(t.format.size()));
  header += t.format;
  put<uint32_t>(header, static_cast<uint32_t>(t.shape.size()));
  for (int64_t d : t.shape) put<int64_t>(header, d);
  put<uint64_t>(header, t.payload.size());
  write_file_atomically(path, {{header.data(), header.size()}, {t.payload.data(), t.payload.size()}},
                        "save_encoded");
}

EncodedTensor load_encoded(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) fail_io(errno, "load_encoded: ", path, ": cannot open the file");
  const auto size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  // The header is at most 8 + 4 + 64 + 4 + 32 * 8 + 8 bytes; read that much (or less).
  const uint64_t max_header = 8 + 4 + kMaxName + 4 + uint64_t{kMaxRank} * 8 + 8;
  std::vector<char> head(static_cast<size_t>(std::min(size, max_header)));
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  if (!in) fail_io(errno, "load_encoded: ", path, ": read failed");
  Cursor c(path, head);
  if (c.bytes(sizeof kMagic, "magic") != std::string(kMagic, sizeof kMagic))
    fail("load_encoded: ", path, ": not a fixq encoded tensor (.bin; bad magic or version)");
  EncodedTensor t;
  const uint32_t name_len = c.get<uint32_t>("format name length");
  if (name_len == 0 || name_len > kMaxName)
    fail("load_encoded: ", path, ": corrupt header: format name length ", name_len);
  t.format = c.bytes(name_len, "format name");
  for (char ch : t.format)
    if (ch < 0x21 || ch > 0x7e) fail("load_encoded: ", path, ": corrupt header: format name is not printable ASCII");
  const uint32_t rank = c.get<uint32_t>("rank");
  if (rank > kMaxRank) fail("load_encoded: ", path, ": corrupt header: rank ", rank);
  for (uint32_t i = 0; i < rank; ++i) {
    const int64_t d = c.get<int64_t>("shape");
    if (d < 0) fail("load_encoded: ", path, ": corrupt header: negative extent ", d);
    t.shape.push_back(d);
  }
  numel(t.shape);
  const uint64_t payload = c.get<uint64_t>("payload length");
  const uint64_t have = size - c.pos();
  if (have < payload) fail("load_encoded: ", path, ": truncated: header announces ", payload, " payload bytes, file has ", have);
  if (have > payload) fail("load_encoded: ", path, ": ", have - payload, " unexpected bytes after the payload");
  t.payload.resize(static_cast<size_t>(payload));
  in.seekg(static_cast<std::streamoff>(c.pos()));
  in.read(reinterpret_cast<char*>(t.payload.data()), static_cast<std::streamsize>(payload));
  if (!in) fail_io(errno, "load_encoded: ", path, ": read failed");
  return t;
}

}  // namespace fixq
