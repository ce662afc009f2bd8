// Corrupt and unsupported .npy files: each is written byte by byte to a scratch file and
// must give a fixq::Error that names the file and what is wrong, never a crash or a read
// beyond the end (the ASan build checks the latter).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "fixq/npy.h"
#include "npy_test_util.h"

namespace fixq {
namespace {

using npy_test::expect_error;
using npy_test::expect_io_error;
using npy_test::write_bytes;

// A .npy file: magic, version major.0, the little-endian length of header (2 bytes for
// version 1, else 4), header as given, then data.
std::string npy_file(const std::string& header, const std::string& data, int major = 1) {
  std::string s("\x93NUMPY", 6);
  s += static_cast<char>(major);
  s += '\0';
  const int len_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < len_bytes; ++i) s += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return s + header + data;
}

// The header numpy would write for descr and shape (minus its padding, which is optional).
std::string dict(const std::string& descr, const std::string& shape,
                 const std::string& fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape +
         ", }\n";
}

const std::string kTwelveBytes(12, '\x01');

class NpyBadInput : public npy_test::ScratchDir {
 protected:
  // Writes bytes to bad.npy and expects load_npy to fail naming the file and every key.
  template <class... Keys>
  void expect_load_error(const std::string& bytes, const Keys&... keys) {
    write_bytes(path("bad.npy"), bytes);
    expect_error([&] { load_npy(path("bad.npy")); }, "bad.npy", keys...);
  }
};

TEST_F(NpyBadInput, AcceptsTheHandWrittenBaseline) {
  // The helpers above make valid files; every test below breaks one thing.
  write_bytes(path("ok.npy"), npy_file(dict("<f4", "(3,)"), kTwelveBytes));
  EXPECT_EQ(load_npy(path("ok.npy")).shape, (Shape{3}));
  write_bytes(path("ok3.npy"), npy_file(dict("<f4", "(3,)"), kTwelveBytes, 3));
  EXPECT_EQ(load_npy(path("ok3.npy")).data.size(), 12u);
}

TEST_F(NpyBadInput, BadMagic) {
  expect_load_error("", "bad magic");
  expect_load_error("\x93NUM", "bad magic");
  expect_load_error("PK\x03\x04 this is a zip", "bad magic");
  std::string file = npy_file(dict("<f4", "(3,)"), kTwelveBytes);
  file[1] = 'n';
  expect_load_error(file, "bad magic");
}

TEST_F(NpyBadInput, UnknownVersion) {
  expect_load_error(npy_file(dict("<f4", "(3,)"), kTwelveBytes, 4), "version 4.0");
  expect_load_error(npy_file(dict("<f4", "(3,)"), kTwelveBytes, 0), "version 0.0");
  std::string minor = npy_file(dict("<f4", "(3,)"), kTwelveBytes);
  minor[7] = 1;
  expect_load_error(minor, "version 1.1");
}

TEST_F(NpyBadInput, TruncatedPrefixOrHeader) {
  const std::string file = npy_file(dict("<f4", "(3,)"), kTwelveBytes);
  expect_load_error(file.substr(0, 7), "truncated", "version");
  expect_load_error(file.substr(0, 9), "truncated", "header length");
  expect_load_error(file.substr(0, 30), "truncated", "header length is");
  // Version 2's 4-byte header length, claiming 4 GiB.
  expect_load_error(std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14), "truncated");
}

TEST_F(NpyBadInput, MalformedHeader) {
  const std::string data = kTwelveBytes;
  expect_load_error(npy_file("", data), "malformed");
  expect_load_error(npy_file("not a dict\n", data), "malformed", "expected '{'");
  expect_load_error(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)\n", data),
                    "malformed", "expected '}'");
  expect_load_error(npy_file("{'descr': '<f4', 'fortran_order': False}\n", data), "malformed",
                    "missing key 'shape'");
  expect_load_error(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), "
                             "'extra': 1}\n", data),
                    "malformed", "unexpected key 'extra'");
  expect_load_error(npy_file("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
                             "'shape': (3,)}\n", data),
                    "malformed", "duplicate key 'descr'");
  expect_load_error(npy_file(dict("<f4", "(3)"), data), "malformed", "not a tuple");
  expect_load_error(npy_file(dict("<f4", "[3]"), data), "malformed", "expected '('");
  expect_load_error(npy_file(dict("<f4", "(3 3)"), data), "malformed", "expected ',' or ')'");
  expect_load_error(npy_file(dict("<f4", "(3.0,)"), data), "malformed");
  expect_load_error(npy_file(dict("<f4", "(3,)", "0"), data), "malformed", "True or False");
  expect_load_error(npy_file("{'descr': '<f4, 'fortran_order': False, 'shape': (3,)}\n", data),
                    "malformed");
  expect_load_error(npy_file("{'descr: '<f4'}", data), "malformed");
  expect_load_error(npy_file("{'descr': 'abc", data), "malformed", "unterminated string");
  expect_load_error(npy_file(dict("<f4", "(3,)") + "junk", data), "malformed",
                    "text after the closing '}'");
  expect_load_error(npy_file(std::string("{'descr': '<f4'\0", 16), data), "malformed");
  // Any key order and whitespace numpy or a hand-written file may use is fine.
  write_bytes(path("ok.npy"),
              npy_file("{ \"shape\" : ( 3 , ) ,\n 'fortran_order':False,'descr':'<f4' }  \n",
                       data));
  EXPECT_EQ(load_npy(path("ok.npy")).shape, (Shape{3}));
  write_bytes(path("py2.npy"), npy_file(dict("<f4", "(3L,)"), data));  // Python 2 long
  EXPECT_EQ(load_npy(path("py2.npy")).shape, (Shape{3}));
}

TEST_F(NpyBadInput, UnsupportedDtypes) {
  expect_load_error(npy_file(dict(">f4", "(3,)"), kTwelveBytes), "big-endian", "'>f4'");
  expect_load_error(npy_file(dict(">i2", "(6,)"), kTwelveBytes), "big-endian");
  expect_load_error(npy_file(dict("<c8", "(1,)"), std::string(8, '\0')), "unsupported dtype",
                    "'<c8'");
  expect_load_error(npy_file(dict("|O", "(1,)"), std::string(8, '\0')), "unsupported dtype");
  expect_load_error(npy_file(dict("|f4", "(3,)"), kTwelveBytes), "unsupported dtype");
  expect_load_error(npy_file(dict("", "(3,)"), kTwelveBytes), "dtype");
  expect_load_error(npy_file("{'descr': [('a', '<f4')], 'fortran_order': False, "
                             "'shape': (3,)}\n", kTwelveBytes),
                    "structured");
}

TEST_F(NpyBadInput, FortranOrder) {
  expect_load_error(npy_file(dict("<f4", "(3,)", "True"), kTwelveBytes), "fortran_order",
                    "transpose to C order");
}

TEST_F(NpyBadInput, AbsurdShapes) {
  expect_load_error(npy_file(dict("<f4", "(-3,)"), kTwelveBytes), "negative", "axis 0");
  expect_load_error(npy_file(dict("<f4", "(2, -1)"), kTwelveBytes), "negative", "axis 1");
  expect_load_error(npy_file(dict("<f4", "(99999999999999999999,)"), kTwelveBytes),
                    "overflows int64");
  expect_load_error(npy_file(dict("<f4", "(4294967296, 4294967296)"), kTwelveBytes),
                    "overflows", "elements");
  expect_load_error(npy_file(dict("<f4", "(4611686018427387904,)"), kTwelveBytes),
                    "overflows", "bytes");
  // Huge but representable: refused by the size check, nothing is allocated.
  expect_load_error(npy_file(dict("<f8", "(1000000000000,)"), kTwelveBytes), "truncated",
                    "needs 8000000000000 data bytes");
}

TEST_F(NpyBadInput, DataSizeMismatch) {
  expect_load_error(npy_file(dict("<f4", "(3,)"), std::string(8, '\0')), "truncated",
                    "needs 12 data bytes", "has 8");
  expect_load_error(npy_file(dict("<f4", "()"), ""), "truncated");
  expect_load_error(npy_file(dict("<f4", "(3,)"), std::string(13, '\0')), "1 trailing bytes");
  expect_load_error(npy_file(dict("<f4", "(0,)"), "x"), "trailing");
}

TEST_F(NpyBadInput, WrongDtypeForATypedLoader) {
  write_bytes(path("f.npy"), npy_file(dict("<f4", "(3,)"), kTwelveBytes));
  expect_error([&] { load_npy_i32(path("f.npy")); }, "f.npy", "dtype is '<f4'", "'<i4'",
               "astype");
  write_bytes(path("i.npy"), npy_file(dict("<i4", "(3,)"), kTwelveBytes));
  expect_error([&] { load_npy_f32(path("i.npy")); }, "i.npy", "dtype is '<i4'", "float32");
  expect_error([&] { load_npy_i64(path("i.npy")); }, "i.npy", "'<i8'");
  // A finite float64 beyond the float32 range is an error, not an infinity.
  const double big = 1e300;
  std::string data(reinterpret_cast<const char*>(&big), sizeof big);
  write_bytes(path("d.npy"), npy_file(dict("<f8", "(2,)"), std::string(8, '\0') + data));
  expect_error([&] { load_npy_f32(path("d.npy")); }, "d.npy", "element 1", "float32 range");
}

TEST_F(NpyBadInput, MissingFileOrDirectory) {
  expect_io_error([&] { load_npy(path("absent.npy")); }, ENOENT, "absent.npy", "cannot open");
  expect_error([&] { load_npy(dir_.string()); }, "not a regular file");
}

}  // namespace
}  // namespace fixq
