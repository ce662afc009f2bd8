// The .bin container: round trips, and every kind of damage is a clear error.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "fixq/error.h"
#include "fixq/encoded_file.h"
#include "support/expect.h"

namespace fixq {
namespace {

using test::expect_error;
using test::expect_io_error;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("fixq_encoded_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

EncodedTensor sample() {
  EncodedTensor t{"q4_0", {3, 64}, {}};
  for (int i = 0; i < 108; ++i) t.payload.push_back(static_cast<std::byte>(i * 7));
  return t;
}

TEST(PackedFile, RoundTripsAndHasTheDocumentedLayout) {
  const std::string p = temp_path("rt.bin");
  save_encoded(p, sample());
  const EncodedTensor t = load_encoded(p);
  EXPECT_EQ(t.format, "q4_0");
  EXPECT_EQ(t.shape, (Shape{3, 64}));
  EXPECT_EQ(t.payload, sample().payload);
  const std::string bytes = read_all(p);
  // magic 8 + name length 4 + name 4 + rank 4 + 2 extents 16 + payload length 8 + payload
  ASSERT_EQ(bytes.size(), 8u + 4 + 4 + 4 + 16 + 8 + 108);
  EXPECT_EQ(bytes.substr(0, 6), "FIXQPK");
  EXPECT_EQ(bytes.substr(12, 4), "q4_0");
  EncodedTensor scalar{"e4m3fn", {}, {std::byte{0x38}}};
  save_encoded(p, scalar);
  EXPECT_EQ(load_encoded(p).shape, Shape{});
  std::remove(p.c_str());
}

TEST(PackedFile, DamageIsAClearError) {
  const std::string p = temp_path("bad.bin");
  save_encoded(p, sample());
  const std::string good = read_all(p);
  write_all(p, good.substr(0, good.size() - 1));
  expect_error([&] { load_encoded(p); }, "truncated");
  write_all(p, good + "x");
  expect_error([&] { load_encoded(p); }, "1 unexpected bytes after the payload");
  write_all(p, "GGUF" + good.substr(4));
  expect_error([&] { load_encoded(p); }, "bad magic");
  write_all(p, good.substr(0, 10));
  expect_error([&] { load_encoded(p); }, "file ends inside the format name length");
  std::string bad = good;
  bad[8] = 100;  // name length 100 > 64
  write_all(p, bad);
  expect_error([&] { load_encoded(p); }, "format name length 100");
  bad = good;
  bad[16] = 99;  // rank 99
  write_all(p, bad);
  expect_error([&] { load_encoded(p); }, "rank 99");
  bad = good;
  bad[27] = static_cast<char>(0x80);  // top byte of the first extent: negative
  write_all(p, bad);
  expect_error([&] { load_encoded(p); }, "negative extent");
  write_all(p, "");
  expect_error([&] { load_encoded(p); }, "truncated");
  expect_io_error([&] { load_encoded(temp_path("missing.bin")); }, ENOENT, "cannot open");
  std::remove(p.c_str());
}

TEST(PackedFile, SaveRejectsBadHeadersWithoutTouchingTheFile) {
  const std::string p = temp_path("keep.bin");
  save_encoded(p, sample());
  const std::string before = read_all(p);
  expect_error([&] { save_encoded(p, EncodedTensor{"", {1}, {}}); }, "format name");
  expect_error([&] { save_encoded(p, EncodedTensor{std::string(65, 'a'), {1}, {}}); }, "format name");
  expect_error([&] { save_encoded(p, EncodedTensor{"x", {-1}, {}}); }, "negative extent");
  EXPECT_EQ(read_all(p), before);
  std::remove(p.c_str());
}

}  // namespace
}  // namespace fixq
