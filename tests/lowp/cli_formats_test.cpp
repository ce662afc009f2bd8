// The `fixq formats` entries of src/cli/formats_lowp.cpp. The CLI is not part of the
// library, so this test compiles that one file in: it needs nothing but the library.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "cli/formats_lowp.cpp"  // NOLINT: the entries under test
#include "fixq/error.h"

namespace fixq::cli {
namespace {

const CliFormat& entry(const std::string& name) {
  static const std::vector<CliFormat> all = lowp_formats();
  for (const CliFormat& f : all)
    if (f.name == name) return f;
  throw std::runtime_error("no format " + name);
}

TEST(LowpCliFormats, EveryRequiredNameIsRegisteredOnce) {
  const std::vector<std::string> names = {"e4m3fn", "e4m3fnuz", "e5m2",       "e5m2fnuz",   "e8m0fnu",    "e4m3b11fnuz",
                                          "e2m3fn", "e3m2fn",   "e2m1fn",     "bf16",       "fp16",       "mxfp8_e4m3",
                                          "mxfp8_e5m2", "mxfp6_e2m3", "mxfp6_e3m2", "ocp_mxfp4", "mxint8"};
  std::vector<std::string> got;
  for (const CliFormat& f : lowp_formats()) got.push_back(f.name);
  EXPECT_EQ(got, names);  // "mxfp4" belongs to the GGUF entries
}

TEST(LowpCliFormats, RoundTripsAndSizes) {
  const Shape shape{3, 64};
  std::vector<float> x(192);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::ldexp(static_cast<float>(i % 13) - 6.0f, static_cast<int>(i % 5) - 2);
  const std::vector<std::pair<std::string, size_t>> sizes = {
      {"e4m3fn", 192}, {"e3m2fn", 144}, {"e2m1fn", 96}, {"fp16", 384}, {"mxfp8_e5m2", 6 * 33},
      {"mxfp6_e2m3", 6 * 25}, {"ocp_mxfp4", 6 * 17}, {"mxint8", 6 * 33}};
  for (const auto& [name, bytes] : sizes) {
    const CliFormat& f = entry(name);
    const std::vector<std::byte> packed = f.quantize(x.data(), shape, FormatOptions{});
    EXPECT_EQ(packed.size(), bytes) << name;
    const std::vector<float> y = f.dequantize(packed.data(), packed.size(), shape);
    ASSERT_EQ(y.size(), x.size());
    // The same values as the library's own round trip.
    std::vector<float> want(x.size());
    if (name.rfind("mx", 0) == 0 || name == "ocp_mxfp4") {
      const MxType t = parse_mx_type(name == "ocp_mxfp4" ? "mxfp4" : name);
      std::vector<uint8_t> q(bytes);
      mx_quantize(t, x.data(), 192, q.data());
      mx_dequantize(t, q.data(), 192, want.data());
    } else {
      for (size_t i = 0; i < x.size(); ++i) want[i] = lowp_decode(parse_lowp_type(name), lowp_encode(parse_lowp_type(name), x[i]));
    }
    EXPECT_EQ(y, want) << name;
    EXPECT_THROW(f.dequantize(packed.data(), packed.size() - 1, shape), Error) << name;
  }
}

TEST(LowpCliFormats, SaturateOptionAndBadShapes) {
  const std::vector<float> big = {1e6f};
  EXPECT_EQ(entry("e4m3fn").quantize(big.data(), Shape{1}, FormatOptions{false})[0], std::byte{0x7F});
  EXPECT_EQ(entry("e4m3fn").quantize(big.data(), Shape{1}, FormatOptions{true})[0], std::byte{0x7E});
  const std::vector<float> x(48, 1.0f);
  EXPECT_THROW(entry("mxint8").quantize(x.data(), Shape{48}, FormatOptions{}), Error);
  EXPECT_THROW(entry("ocp_mxfp4").quantize(x.data(), Shape{}, FormatOptions{}), Error);
  EXPECT_THROW(entry("ocp_mxfp4").dequantize(nullptr, 0, Shape{2, 24}), Error);
  const std::vector<float> nan = {NAN};
  EXPECT_THROW(entry("e2m1fn").quantize(nan.data(), Shape{1}, FormatOptions{}), Error);
  const std::vector<std::byte> padded = {std::byte{0xF3}};  // unused high nibble set
  EXPECT_THROW(entry("e2m1fn").dequantize(padded.data(), 1, Shape{1}), Error);
}

}  // namespace
}  // namespace fixq::cli
