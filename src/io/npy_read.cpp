// Reading .npy files: the fixed prefix, the Python-dict header, then the data, each
// checked against the file's real size before anything is read or allocated.
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "fixq/error.h"
#include "io/narrow.h"
#include "io/npy_types.h"
#include "io/read_file.h"
#include "fixq/npy.h"

static_assert(std::endian::native == std::endian::little,
              ".npy data is copied byte for byte: fixq assumes a little-endian host");

namespace fixq {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

// Throws fixq::Error "load_npy: <path>: <what>".
template <class... Args>
[[noreturn]] void fail_file(const std::string& path, const Args&... what) {
  fail("load_npy: ", path, ": ", what...);
}

// An open file descriptor, closed on scope exit.
class InputFile {
 public:
  explicit InputFile(const std::string& path) : path_(path), fd_(io_detail::open_regular_file("load_npy", path, &size_)) {}
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile() { ::close(fd_); }

  uint64_t size() const { return size_; }

  // Reads exactly n bytes; the callers have checked them against size(), so running
  // short means the file shrank meanwhile.
  void read_exact(void* dst, uint64_t n) const { io_detail::read_exact("load_npy", path_, fd_, dst, n, -1); }

 private:
  std::string path_;
  uint64_t size_ = 0;
  int fd_ = -1;
};

struct Header {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

// A parser for exactly the dict literal numpy writes: string keys, a string descr, a
// True/False fortran_order and a tuple of non-negative ints (Python 2's 'L' suffix
// allowed), trailing commas and any whitespace, then only whitespace after the '}'.
class HeaderParser {
 public:
  HeaderParser(const std::string& path, std::string_view text) : path_(path), text_(text) {}

  Header parse() {
    Header h;
    bool seen[3] = {false, false, false};  // descr, fortran_order, shape
    expect('{');
    while (!consume('}')) {
      const std::string key = parse_string();
      expect(':');
      if (key == "descr") {
        note_key(seen[0], key);
        if (peek() == '[') malformed("structured dtypes (a list 'descr') are not supported");
        h.descr = parse_string();
      } else if (key == "fortran_order") {
        note_key(seen[1], key);
        h.fortran_order = parse_bool();
      } else if (key == "shape") {
        note_key(seen[2], key);
        h.shape = parse_shape();
      } else {
        malformed("unexpected key '", key, "'");
      }
      if (!consume(',')) {
        expect('}');
        break;
      }
    }
    skip_space();
    if (pos_ != text_.size()) malformed("text after the closing '}'");
    const char* names[3] = {"descr", "fortran_order", "shape"};
    for (int k = 0; k < 3; ++k)
      if (!seen[k]) malformed("missing key '", names[k], "'");
    return h;
  }

 private:
  template <class... Args>
  [[noreturn]] void malformed(const Args&... what) {
    fail_file(path_, "malformed header (", what..., ") in ", excerpt());
  }

  // The header for error messages: quoted, at most 120 characters, non-printables as '?'.
  std::string excerpt() const {
    std::string s = "\"";
    for (char c : text_.substr(0, 120)) s += (c >= 0x20 && c < 0x7f) ? c : '?';
    return s + (text_.size() > 120 ? "...\"" : "\"");
  }

  void note_key(bool& seen, const std::string& key) {
    if (seen) malformed("duplicate key '", key, "'");
    seen = true;
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                    text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }

  // The next non-space character, or '\0' at the end.
  char peek() {
    skip_space();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }

  bool consume(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }

  void expect(char c) {
    if (!consume(c)) malformed("expected '", c, "' at offset ", pos_);
  }

  std::string parse_string() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') malformed("expected a quoted string at offset ", pos_);
    const std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) malformed("unterminated string at offset ", pos_);
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    if (s.find('\\') != std::string::npos) malformed("escape sequence in string '", s, "'");
    pos_ = end + 1;
    return s;
  }

  bool parse_bool() {
    skip_space();
    for (const auto& [word, value] : {std::pair{std::string_view("True"), true},
                                      std::pair{std::string_view("False"), false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    malformed("fortran_order must be True or False");
  }

  // "()", "(n,)" or "(n, m, ...)" with an optional trailing comma. As in Python, one
  // element without a comma is not a tuple.
  Shape parse_shape() {
    Shape shape;
    expect('(');
    bool comma_after_last = false;
    while (!consume(')')) {
      if (!shape.empty() && !comma_after_last) malformed("expected ',' or ')' in shape");
      shape.push_back(parse_extent(shape.size()));
      comma_after_last = consume(',');
    }
    if (shape.size() == 1 && !comma_after_last)
      malformed("shape '(n)' is not a tuple; numpy writes '(n,)'");
    return shape;
  }

  int64_t parse_extent(std::size_t axis) {
    const char first = peek();
    if (first == '-') fail_file(path_, "negative extent in shape at axis ", axis);
    if (first < '0' || first > '9') malformed("expected an integer in shape at offset ", pos_);
    int64_t v = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const int digit = text_[pos_++] - '0';
      if (v > (std::numeric_limits<int64_t>::max() - digit) / 10)
        fail_file(path_, "shape extent at axis ", axis, " overflows int64");
      v = v * 10 + digit;
    }
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;
    return v;
  }

  const std::string& path_;
  std::string_view text_;
  std::size_t pos_ = 0;
};

// An opened .npy file, checked up to its data and positioned there; the data size
// matches the header.
struct OpenedNpy {
  explicit OpenedNpy(const std::string& path);

  InputFile file;
  std::string dtype;  // canonical
  Shape shape;
  uint64_t data_bytes = 0;
};

uint32_t little_endian_u32(const unsigned char* p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

OpenedNpy::OpenedNpy(const std::string& path) : file(path) {
  const InputFile& f = file;
  // Magic (6 bytes), version (2), header length (2 in version 1, else 4).
  unsigned char prefix[12];
  if (f.size() < kMagic.size()) fail_file(path, "not a .npy file (bad magic: too short)");
  f.read_exact(prefix, kMagic.size());
  if (std::memcmp(prefix, kMagic.data(), kMagic.size()) != 0)
    fail_file(path, "not a .npy file (bad magic)");
  if (f.size() < 8) fail_file(path, "truncated: the file ends inside the format version");
  f.read_exact(prefix + 6, 2);
  const int major = prefix[6], minor = prefix[7];
  if ((major < 1 || major > 3) || minor != 0)
    fail_file(path, "unsupported .npy format version ", major, ".", minor,
              " (1.0, 2.0 and 3.0 are known)");
  const int len_bytes = major == 1 ? 2 : 4;
  const uint64_t prefix_bytes = 8 + len_bytes;
  if (f.size() < prefix_bytes)
    fail_file(path, "truncated: the file ends inside the header length");
  f.read_exact(prefix + 8, len_bytes);
  const uint64_t header_bytes = little_endian_u32(prefix + 8, len_bytes);
  if (header_bytes > f.size() - prefix_bytes)
    fail_file(path, "truncated: the header length is ", header_bytes, " bytes but only ",
              f.size() - prefix_bytes, " follow");
  std::string text(header_bytes, '\0');
  f.read_exact(text.data(), header_bytes);
  Header h = HeaderParser(path, text).parse();

  if (h.fortran_order)
    fail_file(path, "fortran_order is True, which fixq does not read; transpose to C order "
                    "first, e.g. np.save(path, np.ascontiguousarray(a))");
  try {
    dtype = npy_canonical_dtype(h.descr);
    data_bytes = npy_data_bytes(dtype, h.shape);
  } catch (const Error& e) {
    fail_file(path, e.what());
  }
  const uint64_t available = f.size() - prefix_bytes - header_bytes;
  if (available < data_bytes)
    fail_file(path, "truncated: shape ", shape_str(h.shape), " of ", dtype, " needs ",
              data_bytes, " data bytes, the file has ", available);
  if (available > data_bytes)
    fail_file(path, available - data_bytes, " trailing bytes after the ", data_bytes,
              " data bytes of shape ", shape_str(h.shape), " of ", dtype);
  shape = std::move(h.shape);
}

// Reads the data of an opened file as values of T (whose size is the file's itemsize).
template <class T>
std::vector<T> read_values(const OpenedNpy& npy, Shape* shape) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::vector<T> values(npy.data_bytes / sizeof(T));
  npy.file.read_exact(values.data(), npy.data_bytes);
  if (shape) *shape = npy.shape;
  return values;
}

// Loads a file of exactly dtype `want` into a vector of T.
template <class T>
std::vector<T> load_exact(const std::string& path, const char* want, Shape* shape) {
  const OpenedNpy npy(path);
  if (npy.dtype != want)
    fail_file(path, "dtype is '", npy.dtype, "' but '", want,
              "' was asked for; convert with a.astype('", want, "')");
  return read_values<T>(npy, shape);
}

}  // namespace

NpyArray load_npy(const std::string& path) {
  const OpenedNpy npy(path);
  NpyArray a{npy.dtype, npy.shape, std::vector<std::byte>(npy.data_bytes)};
  npy.file.read_exact(a.data.data(), npy.data_bytes);
  return a;
}

std::vector<float> load_npy_f32(const std::string& path, Shape* shape) {
  const OpenedNpy npy(path);
  if (npy.dtype == "<f4") return read_values<float>(npy, shape);
  if (npy.dtype != "<f8")
    fail_file(path, "dtype is '", npy.dtype,
              "' but float32 was asked for ('<f4', or '<f8' to be rounded); convert with "
              "a.astype('<f4')");
  return io_detail::narrow_to_float32(read_values<double>(npy, shape), "load_npy: " + path + ": float64");
}

// The integer loaders: the exact dtype, no conversion.
#define FIXQ_NPY_LOAD(suffix, T, dtype) \
  std::vector<T> load_npy_##suffix(const std::string& path, Shape* shape) { return load_exact<T>(path, dtype, shape); }
FIXQ_NPY_INTEGER_TYPES(FIXQ_NPY_LOAD)
#undef FIXQ_NPY_LOAD

}  // namespace fixq
