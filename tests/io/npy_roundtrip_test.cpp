// Writing .npy files: every dtype and shape reads back as written, big headers switch to
// format 2.0, a failed save never harms an existing file, and numpy reads what we write.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "fixq/npy.h"
#include "npy_test_util.h"

namespace fixq {
namespace {

using npy_test::expect_error;
using npy_test::expect_io_error;
using npy_test::read_bytes;
using npy_test::write_bytes;

class NpyWrite : public npy_test::ScratchDir {};

// Values 0, 1, ... shifted to start at T's minimum, so the extremes are covered.
template <class T>
std::vector<T> ramp(std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<T>(std::numeric_limits<T>::min() + static_cast<T>(i * 37 % 101));
  if (n > 1) v[n - 1] = std::numeric_limits<T>::max();
  return v;
}

template <class T, class Save, class Load>
void expect_round_trip(const std::string& path, Save save, Load load) {
  for (const Shape& shape : {Shape{}, Shape{0}, Shape{5}, Shape{2, 3}, Shape{3, 0, 2},
                             Shape{2, 1, 3, 2}}) {
    const auto n = static_cast<std::size_t>(numel(shape));
    const std::vector<T> values = ramp<T>(n);
    save(path, values.data(), shape);
    Shape got_shape{99};
    EXPECT_EQ(load(path, &got_shape), values) << shape_str(shape);
    EXPECT_EQ(got_shape, shape);
    // The data starts at a multiple of 64 bytes, as numpy aligns it.
    EXPECT_EQ((read_bytes(path).size() - n * sizeof(T)) % 64, 0u) << shape_str(shape);
  }
}

TEST_F(NpyWrite, EveryTypedSaveRoundTripsEveryShape) {
  expect_round_trip<float>(path("f.npy"), save_npy_f32, load_npy_f32);
  expect_round_trip<int8_t>(path("i8.npy"), save_npy_i8, load_npy_i8);
  expect_round_trip<uint8_t>(path("u8.npy"), save_npy_u8, load_npy_u8);
  expect_round_trip<int16_t>(path("i16.npy"), save_npy_i16, load_npy_i16);
  expect_round_trip<uint16_t>(path("u16.npy"), save_npy_u16, load_npy_u16);
  expect_round_trip<int32_t>(path("i32.npy"), save_npy_i32, load_npy_i32);
  expect_round_trip<int64_t>(path("i64.npy"), save_npy_i64, load_npy_i64);
}

TEST_F(NpyWrite, FloatRoundTripKeepsSpecialValuesBitExact) {
  const std::vector<float> v = {-0.0f, std::numeric_limits<float>::denorm_min(),
                                std::numeric_limits<float>::infinity(),
                                std::numeric_limits<float>::quiet_NaN(), 1e38f};
  save_npy_f32(path("s.npy"), v.data(), {5});
  const std::vector<float> got = load_npy_f32(path("s.npy"));
  ASSERT_EQ(got.size(), v.size());
  EXPECT_EQ(std::memcmp(got.data(), v.data(), v.size() * sizeof(float)), 0);
}

TEST_F(NpyWrite, GenericSaveRoundTripsEverySupportedDtype) {
  for (const char* dtype : {"|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8",
                            "<f2", "<f4", "<f8"}) {
    NpyArray a{dtype, {2, 2}, {}};
    for (std::size_t i = 0; i < 4 * npy_itemsize(dtype); ++i)
      a.data.push_back(static_cast<std::byte>(dtype[1] == 'b' ? i % 2 : i * 7 + 1));
    save_npy(path("g.npy"), a);
    const NpyArray b = load_npy(path("g.npy"));
    EXPECT_EQ(b.dtype, a.dtype);
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_EQ(b.data, a.data) << dtype;
  }
  // A one-byte type written with '<' comes back in numpy's canonical '|' spelling.
  save_npy(path("c.npy"), NpyArray{"<i1", {1}, {std::byte{5}}});
  EXPECT_EQ(load_npy(path("c.npy")).dtype, "|i1");
}

TEST_F(NpyWrite, HeaderTooLongForVersion1UsesVersion2) {
  // 30000 axes of extent 1: the shape text alone is ~90 kB, beyond 1.0's 65535 bytes.
  const Shape shape(30000, 1);
  const float v = 2.5f;
  save_npy_f32(path("deep.npy"), &v, shape);
  EXPECT_EQ(read_bytes(path("deep.npy"))[6], '\x02');
  Shape got;
  EXPECT_EQ(load_npy_f32(path("deep.npy"), &got), std::vector<float>{2.5f});
  EXPECT_EQ(got, shape);
}

TEST_F(NpyWrite, OverwritesAnExistingFileAndLeavesNoTemporaries) {
  const std::vector<int32_t> a = {1, 2, 3}, b = {4, 5};
  save_npy_i32(path("x.npy"), a.data(), {3});
  save_npy_i32(path("x.npy"), b.data(), {2});
  EXPECT_EQ(load_npy_i32(path("x.npy")), b);
  EXPECT_EQ(listing(), "x.npy ");
}

TEST_F(NpyWrite, InvalidArgumentsFailBeforeTouchingTheDisk) {
  const float v[2] = {1, 2};
  expect_error([&] { save_npy(path("a.npy"), NpyArray{"<f4", {3}, std::vector<std::byte>(8)}); },
               "a.npy", "needs 12 data bytes", "holds 8");
  expect_error([&] { save_npy(path("a.npy"), NpyArray{">f4", {2}, std::vector<std::byte>(8)}); },
               "a.npy", "big-endian");
  expect_error([&] { save_npy(path("a.npy"), NpyArray{"<c8", {1}, std::vector<std::byte>(8)}); },
               "a.npy", "unsupported dtype '<c8'");
  expect_error([&] { save_npy_f32(path("a.npy"), v, {2, -1}); }, "a.npy", "negative");
  expect_error([&] { save_npy_f32(path("a.npy"), v, {int64_t{1} << 62, 4}); }, "a.npy",
               "int64");
  expect_error([&] { save_npy_f32(path("a.npy"), nullptr, {2}); }, "a.npy", "null data");
  save_npy_f32(path("empty.npy"), nullptr, {0, 4});  // nothing to read: allowed
  EXPECT_EQ(listing(), "empty.npy ");
}

TEST_F(NpyWrite, UnwritableDirectoryIsAnError) {
  const float v = 1;
  expect_io_error([&] { save_npy_f32(path("no/such/dir/a.npy"), &v, {1}); }, ENOENT, "a.npy",
                  "cannot create a temporary file");
  std::filesystem::create_directory(path("taken.npy"));  // the target is a directory
  expect_io_error([&] { save_npy_f32(path("taken.npy"), &v, {1}); }, EISDIR, "taken.npy", "rename");
  EXPECT_EQ(listing(), "taken.npy ");
}

// Limits this process's file size so that writes beyond it fail with EFBIG (SIGXFSZ
// ignored), restoring both on scope exit.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    previous_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &previous_);
    rlimit limited = previous_;
    limited.rlim_cur = bytes;
    ok_ = setrlimit(RLIMIT_FSIZE, &limited) == 0;
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &previous_);
    std::signal(SIGXFSZ, previous_handler_);
  }
  bool ok() const { return ok_; }

 private:
  rlimit previous_{};
  void (*previous_handler_)(int) = nullptr;
  bool ok_ = false;
};

TEST_F(NpyWrite, FailedWriteLeavesTheExistingFileIntact) {
  const std::vector<int32_t> old_values = {7, 8, 9};
  save_npy_i32(path("keep.npy"), old_values.data(), {3});
  const std::string old_bytes = read_bytes(path("keep.npy"));
  const std::vector<float> big(1 << 16, 1.0f);  // 256 kB, beyond the limit below
  {
    FileSizeLimit limit(64 * 1024);
    ASSERT_TRUE(limit.ok());
    expect_error([&] { save_npy_f32(path("keep.npy"), big.data(), {1 << 16}); }, "keep.npy",
                 "write failed");
  }
  EXPECT_EQ(read_bytes(path("keep.npy")), old_bytes);
  EXPECT_EQ(listing(), "keep.npy ");
}

// numpy as the independent reader: runs a script with /usr/bin/python3 if it has numpy.
bool numpy_available() {
  return std::system("/usr/bin/python3 -c 'import numpy' > /dev/null 2>&1") == 0;
}

TEST_F(NpyWrite, NumpyReadsWhatWeWrite) {
  if (!numpy_available())
    GTEST_SKIP() << "/usr/bin/python3 with numpy is not installed; numpy cross-check skipped";
  const std::vector<float> f = {-1.5f, 0.0f, 2.25f, 1e-3f, 3e38f, -7.0f};
  const std::vector<int8_t> i8 = {-128, 0, 127};
  const std::vector<uint16_t> u16 = {0, 65535};
  const std::vector<int64_t> i64 = {std::numeric_limits<int64_t>::min(), 42};
  const float scalar = 0.75f;
  save_npy_f32(path("f.npy"), f.data(), {2, 3});
  save_npy_i8(path("i8.npy"), i8.data(), {3});
  save_npy_u16(path("u16.npy"), u16.data(), {1, 2});
  save_npy_i64(path("i64.npy"), i64.data(), {2});
  save_npy_f32(path("scalar.npy"), &scalar, {});
  save_npy_f32(path("empty.npy"), nullptr, {0, 3});
  const std::string script =
      "import numpy as np, sys\n"
      "d = sys.argv[1] + '/'\n"
      "def check(name, want):\n"
      "    got = np.load(d + name)\n"
      "    assert got.dtype == want.dtype and got.shape == want.shape, (name, got)\n"
      "    assert np.array_equal(got, want), (name, got)\n"
      "check('f.npy', np.array([[-1.5, 0, 2.25], [1e-3, 3e38, -7]], dtype='<f4'))\n"
      "check('i8.npy', np.array([-128, 0, 127], dtype='|i1'))\n"
      "check('u16.npy', np.array([[0, 65535]], dtype='<u2'))\n"
      "check('i64.npy', np.array([-2**63, 42], dtype='<i8'))\n"
      "check('scalar.npy', np.array(0.75, dtype='<f4'))\n"
      "check('empty.npy', np.zeros((0, 3), dtype='<f4'))\n";
  write_bytes(path("check.py"), script);
  EXPECT_EQ(std::system(("/usr/bin/python3 " + path("check.py") + " " + dir_.string()).c_str()),
            0);
}

}  // namespace
}  // namespace fixq
